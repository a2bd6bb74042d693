"""What can go wrong with an OTTL condition: at start (it does not parse,
or uses something outside the supported subset) or on a record (a path
that cannot be indexed, a function given a value it cannot take)."""

from __future__ import annotations


class OttlConfigError(ValueError):
    """A condition that cannot run. The message names the construct; the
    caller names the condition."""


class OttlRuntimeError(Exception):
    """A condition failed on one record, as upstream's conditions return an
    error: the processor's ``error_mode`` decides what happens next."""
