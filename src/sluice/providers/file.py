"""Reading a policy file from disk."""

from __future__ import annotations

import json
from pathlib import Path

from sluice.policy import LoadReport, PolicyDocumentError, load_document


class PolicyFileError(Exception):
    """A policy file that cannot be used at all; the message names the file."""


def read_policy_file(path: str | Path) -> LoadReport:
    """Load every policy of a file. Raises PolicyFileError when the file is
    unreadable, not JSON, or has no ``policies`` array; bad single policies
    are returned with their errors instead."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as problem:
        raise PolicyFileError(f"{path}: cannot read: {problem}") from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as problem:
        raise PolicyFileError(f"{path}: not valid JSON: {problem}") from None
    try:
        return load_document(doc)
    except PolicyDocumentError as problem:
        raise PolicyFileError(f"{path}: {problem}") from None
