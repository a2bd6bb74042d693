"""Parsed policies as plain tuples, for the compile cache on disk.

``marshal`` writes and reads tuples of strings, numbers, booleans and bytes
several times faster than ``pickle`` writes and reads the dataclasses, and it
keeps every typed literal exactly (``True`` is not ``1``, ``-0.0`` and NaN
survive, integers of any size, lone surrogates). It executes nothing it
reads, so a damaged cache file can at worst be refused. Enums are stored by
value; :class:`Decoder` shares equal selectors and keeps between the policies
it decodes, as the parser's output shares them too.
"""

from __future__ import annotations

import marshal
from typing import Any

from sluice.policy.model import (
    Keep,
    KeepKind,
    Matcher,
    MatchOp,
    Policy,
    SamplingMode,
    Selector,
    Signal,
    Source,
    Transform,
    TransformOp,
)

Tuple = tuple[Any, ...]


def _selector(selector: Selector) -> Tuple:
    return (selector.source.value, selector.name, selector.path)


def _keep(keep: Keep) -> Tuple:
    return (
        keep.kind.value,
        keep.percent,
        keep.limit,
        keep.window_ms,
        keep.mode.value,
        keep.precision,
        keep.hash_seed,
        keep.fail_closed,
        keep.text,
    )


def _transform(step: Transform) -> Tuple:
    return (
        step.op.value,
        _selector(step.target),
        step.value,
        step.regex,
        step.upsert,
        None if step.source is None else _selector(step.source),
    )


def encode(policy: Policy, translations: tuple[bytes | None, ...]) -> bytes:
    """A policy and the Hyperscan form of each of its matchers (None where a
    matcher has none), as bytes."""
    return marshal.dumps(
        (
            policy.id,
            policy.name,
            policy.enabled,
            None if policy.signal is None else policy.signal.value,
            tuple(
                (_selector(m.selector), m.op.value, m.value, m.negate, m.case_insensitive)
                for m in policy.matchers
            ),
            _keep(policy.keep),
            None if policy.sample_key is None else _selector(policy.sample_key),
            tuple(_transform(t) for t in policy.transforms),
            policy.errors,
            translations,
        )
    )


_SOURCES = {s.value: s for s in Source}
_OPS = {o.value: o for o in MatchOp}
_SIGNALS = {s.value: s for s in Signal}
_KINDS = {k.value: k for k in KeepKind}
_MODES = {m.value: m for m in SamplingMode}
_TRANSFORMS = {t.value: t for t in TransformOp}


class Decoder:
    """Turns :func:`encode` output back into policies. Raises ValueError (or
    another Exception: EOFError, TypeError, KeyError) on bytes it did not
    write; the cache treats that as a miss."""

    def __init__(self) -> None:
        self._selectors: dict[Tuple, Selector] = {}
        self._keeps: dict[Tuple, Keep] = {}

    def _selector(self, raw: Tuple) -> Selector:
        found = self._selectors.get(raw)
        if found is None:
            source, name, path = raw
            found = self._selectors[raw] = Selector(_SOURCES[source], name, tuple(path))
        return found

    def _keep(self, raw: Tuple) -> Keep:
        found = self._keeps.get(raw)
        if found is None:
            kind, percent, limit, window, mode, precision, seed, fail_closed, text = raw
            found = self._keeps[raw] = Keep(
                _KINDS[kind],
                percent,
                limit,
                window,
                _MODES[mode],
                precision,
                seed,
                fail_closed,
                text,
            )
        return found

    def decode(self, data: bytes) -> tuple[Policy, tuple[bytes | None, ...]]:
        """The policy and its matchers' Hyperscan forms."""
        raw = marshal.loads(data)
        pid, name, enabled, signal, matchers, keep, key, transforms, errors, translations = raw
        selector = self._selector
        policy = Policy(
            pid,
            name,
            enabled,
            None if signal is None else _SIGNALS[signal],
            tuple(Matcher(selector(s), _OPS[op], v, neg, ci) for s, op, v, neg, ci in matchers),
            self._keep(keep),
            None if key is None else selector(key),
            tuple(
                Transform(
                    _TRANSFORMS[op],
                    selector(target),
                    value,
                    regex,
                    upsert,
                    None if source is None else selector(source),
                )
                for op, target, value, regex, upsert, source in transforms
            ),
            tuple(errors),
        )
        if len(translations) != len(policy.matchers):
            raise ValueError("translations do not match the matchers")
        return policy, tuple(translations)
