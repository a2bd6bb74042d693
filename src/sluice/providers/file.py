"""Policies from a file on disk, reloaded when its content changes."""

from __future__ import annotations

import hashlib
import json
import logging
import time
from pathlib import Path

from sluice.gcpause import collection_paused
from sluice.policy import LoadReport, PolicyDocumentError, load_document
from sluice.policy.cache import CompileCache
from sluice.providers.provider import Provider
from sluice.telemetry import jsonbody

log = logging.getLogger(__name__)


class PolicyFileError(Exception):
    """A policy file that cannot be used at all; the message names the file."""


def parse_policy_bytes(
    raw: bytes, path: str | Path, cache: CompileCache | None = None
) -> LoadReport:
    """Parse a policy file's content (UTF-8 JSON; orjson reads it unless
    only the standard library reads it exactly, see :mod:`jsonbody`). With a
    `cache`: the same bytes parsed before come back in one read, policies
    parsed before are not parsed again, and a large first document is parsed
    in a child process (:meth:`CompileCache.parse_isolated`)."""
    with collection_paused():  # a document of 10,000 policies is 200,000 objects
        if cache is None:
            return _parse(raw, path, None)
        known = cache.load_document_bytes(raw)
        if known is not None:
            return known
        report = cache.parse_isolated(raw, lambda data, within: _parse(data, path, within))
        cache.remember_document_bytes(raw, report)
        return report


def _parse(raw: bytes, path: str | Path, cache: CompileCache | None) -> LoadReport:
    try:
        doc = jsonbody.parse(raw)
        if doc is jsonbody.UNPARSED:
            doc = jsonbody.check_depth(json.loads(raw.decode("utf-8")))
    except UnicodeDecodeError as problem:
        raise PolicyFileError(f"{path}: not UTF-8: {problem}") from None
    except json.JSONDecodeError as problem:
        raise PolicyFileError(f"{path}: not valid JSON: {problem}") from None
    except jsonbody.TooDeep as problem:
        raise PolicyFileError(f"{path}: {problem}") from None
    try:
        return load_document(doc, cache)
    except PolicyDocumentError as problem:
        raise PolicyFileError(f"{path}: {problem}") from None


def read_policy_file(path: str | Path, cache: CompileCache | None = None) -> LoadReport:
    """Load every policy of a file. Raises PolicyFileError when the file is
    unreadable, not JSON, or has no ``policies`` array; bad single policies
    are returned with their errors instead."""
    try:
        raw = Path(path).read_bytes()
    except OSError as problem:
        raise PolicyFileError(f"{path}: cannot read: {problem}") from None
    return parse_policy_bytes(raw, path, cache)


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
        started = time.perf_counter()
        try:
            report = parse_policy_bytes(raw, path, self.registry.cache)
        except PolicyFileError as problem:
            return self._record(False, str(problem))
        log.debug(
            "%s: %d policies read in %.0f ms",
            path,
            len(report.policies),
            (time.perf_counter() - started) * 1000,
        )
        log_report(report, str(path))
        self.registry.update(self.config.id, self.config.priority, self.order, report.policies)
        self.content_hash = digest
        self.loaded.set()
        return self._record(True)
