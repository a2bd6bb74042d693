"""Policies from a file on disk, reloaded when its content changes."""

from __future__ import annotations

import hashlib
import json
import logging
from pathlib import Path

from sluice.policy import LoadReport, PolicyDocumentError, load_document
from sluice.providers.provider import Provider

log = logging.getLogger(__name__)


class PolicyFileError(Exception):
    """A policy file that cannot be used at all; the message names the file."""


def parse_policy_text(text: str, path: str | Path) -> LoadReport:
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as problem:
        raise PolicyFileError(f"{path}: not valid JSON: {problem}") from None
    try:
        return load_document(doc)
    except PolicyDocumentError as problem:
        raise PolicyFileError(f"{path}: {problem}") from None


def read_policy_file(path: str | Path) -> LoadReport:
    """Load every policy of a file. Raises PolicyFileError when the file is
    unreadable, not JSON, or has no ``policies`` array; bad single policies
    are returned with their errors instead."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as problem:
        raise PolicyFileError(f"{path}: cannot read: {problem}") from None
    return parse_policy_text(text, path)


def log_report(report: LoadReport, source: str) -> None:
    """Log document warnings and every enabled policy's errors."""
    for warning in report.warnings:
        log.warning("%s: %s", source, warning)
    for policy in report.policies:
        if policy.enabled:
            for error in policy.errors:
                log.error("%s: policy %r skipped: %s", source, policy.id, error)


class FileProvider(Provider):
    """Polls a file; a changed content hash means reload. A reload that fails
    keeps the previous policies; a missing file is retried."""

    content_hash = ""

    def poll(self) -> bool:
        path = Path(self.config.path)
        try:
            raw = path.read_bytes()
        except OSError as problem:
            return self._record(False, f"cannot read {path}: {problem.strerror or problem}")
        digest = hashlib.sha256(raw).hexdigest()
        if digest == self.content_hash:  # e.g. a broken edit reverted: that error is over
            return self._record(True)
        try:
            report = parse_policy_text(raw.decode("utf-8"), path)
        except UnicodeDecodeError as problem:
            return self._record(False, f"{path}: not UTF-8: {problem}; keeping previous policies")
        except PolicyFileError as problem:
            return self._record(False, f"{problem}; keeping previous policies")
        log_report(report, str(path))
        self.registry.update(self.config.id, self.config.priority, self.order, report.policies)
        self.content_hash = digest
        self.loaded.set()
        return self._record(True)
