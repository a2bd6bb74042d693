"""Process log output shared by Edge and the collector: one line per record on
stderr, logfmt (``time=… level=… pid=… logger=… msg="…"``, the collector's
``console`` encoding) or one JSON object per line, exceptions folded into the
line, and structured fields (``extra={"fields": {...}}``) as further keys.

One format from the first line on: :func:`hold_early_records` keeps what is
logged before the configuration is read, and :func:`configure_logging`
writes it out in the configured format and level. ``SLUICE_LOG_LEVEL``
overrides the configured level.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any, TextIO, cast

LEVELS = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "warn": logging.WARNING,
    "warning": logging.WARNING,
    "err": logging.ERROR,
    "error": logging.ERROR,
    "dpanic": logging.ERROR,
    "panic": logging.ERROR,
    "fatal": logging.ERROR,
}
"""Level spellings accepted in configs and ``SLUICE_LOG_LEVEL`` (any case);
zap's ``dpanic``, ``panic`` and ``fatal`` (the collector's) log errors only."""
LEVEL_ENV = "SLUICE_LOG_LEVEL"
_PRINTED = {logging.WARNING: "warn", logging.CRITICAL: "error"}
"""Printed level names that differ from Python's, lowercased (``warn`` as in
the configs and as the OpenTelemetry Collector prints it)."""
EARLY_LIMIT = 1000
"""Records kept before logging is configured; later ones are counted, not kept."""


_USERINFO = re.compile(r"^((?:[A-Za-z][A-Za-z0-9+.-]*:)?//)?[^/?#]*@")
"""What comes before the host in a URL (``user:password@``), with or without
a scheme (a gRPC target is ``host:port``)."""


def has_userinfo(url: str) -> bool:
    """Whether `url` carries user information (``user:password@`` before its host)."""
    return _USERINFO.match(url) is not None


def redact_url(url: str) -> str:
    """`url` as a log line or a message may print it: user information
    (``user:password@``, a token as user name) and the query (keys travel
    there too) replaced by ``***``."""
    url = _USERINFO.sub(lambda found: f"{found.group(1) or ''}***@", url, count=1)
    head, query, _ = url.partition("?")
    return f"{head}?***" if query else head


def _stamp(record: logging.LogRecord) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created)) + (
        f".{int(record.msecs):03d}Z"
    )


def _level(record: logging.LogRecord) -> str:
    return _PRINTED.get(record.levelno) or record.levelname.lower()


def _message(formatter: logging.Formatter, record: logging.LogRecord) -> str:
    message = record.getMessage()
    if record.exc_info:
        message += " | " + formatter.formatException(record.exc_info).replace("\n", " | ")
    return message


def _fields(record: logging.LogRecord) -> Mapping[str, Any]:
    fields = getattr(record, "fields", None)
    return fields if isinstance(fields, Mapping) else {}


class _Formatter(logging.Formatter):
    def __init__(self, initial: Mapping[str, Any] | None = None):
        super().__init__()
        self.initial = dict(initial or {})
        """Fields on every line, before the record's own (zap's initial fields)."""

    def fields(self, record: logging.LogRecord) -> Mapping[str, Any]:
        return {**self.initial, **_fields(record)} if self.initial else _fields(record)


def _logfmt_text(text: str) -> str:
    """`text` bare, or JSON-quoted when it is empty or holds a space, ``=``,
    a quote, a backslash or an unprintable character (a field name too: the
    debug exporter's ``"resource logs"``, named as upstream's zap field)."""
    if text and not any(c in text for c in ' ="\\') and text.isprintable():
        return text
    return json.dumps(text)


def _logfmt_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return f"{value:g}" if isinstance(value, float) else str(value)
    return _logfmt_text(str(value))


class LogfmtFormatter(_Formatter):
    """``time=… level=… pid=… logger=… msg="…"`` then the record's fields."""

    def format(self, record: logging.LogRecord) -> str:
        line = (
            f"time={_stamp(record)} level={_level(record)} "
            f"pid={record.process} logger={record.name} "
            f"msg={json.dumps(_message(self, record))}"
        )
        for key, value in self.fields(record).items():
            line += f" {_logfmt_text(key)}={_logfmt_value(value)}"
        return line


class JsonFormatter(_Formatter):
    """The same keys as one JSON object."""

    def format(self, record: logging.LogRecord) -> str:
        return json.dumps(
            {
                "time": _stamp(record),
                "level": _level(record),
                "pid": record.process,
                "logger": record.name,
                "msg": _message(self, record),
                **self.fields(record),
            }
        )


class ZapSampling:
    """zap's sampler: entries of one level and message are counted from the
    first one for `tick` seconds; the first `initial` pass, then every
    `thereafter`-th (none when 0), and the count starts again after the tick.
    As in zap, messages share 4096 counters per level by hash. Used for the
    collector's own log (:class:`LogSampler`) and the debug exporter's output."""

    COUNTERS = 4096

    def __init__(self, tick: float, initial: int, thereafter: int):
        self.tick_ns = int(tick * 1e9)
        # zap holds both as uint64: a negative number wraps to a huge one.
        self.initial = initial % (1 << 64)
        self.thereafter = thereafter % (1 << 64)
        self._counters: dict[tuple[int, int], tuple[int, int]] = {}
        """(level, counter) -> (entries counted, when the count restarts, ns)."""
        self._lock = threading.Lock()

    def allows(self, level: int, message: str, now_ns: int) -> bool:
        key = (level, hash(message) % self.COUNTERS)
        with self._lock:
            count, reset_at = self._counters.get(key, (0, 0))
            count, reset_at = (
                (count + 1, reset_at) if reset_at > now_ns else (1, now_ns + self.tick_ns)
            )
            self._counters[key] = (count, reset_at)
        if count <= self.initial:
            return True
        return self.thereafter > 0 and (count - self.initial) % self.thereafter == 0


class LogSampler(logging.Filter):
    """:class:`ZapSampling` on the collector's own log
    (``service::telemetry::logs::sampling``), by level and message."""

    def __init__(self, tick: float, initial: int, thereafter: int):
        super().__init__()
        self.sampling = ZapSampling(tick, initial, thereafter)

    def filter(self, record: logging.LogRecord) -> bool:
        return self.sampling.allows(record.levelno, record.getMessage(), int(record.created * 1e9))


class _EarlyRecords(logging.Handler):
    """Keeps records until logging is configured."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []
        self.dropped = 0

    def emit(self, record: logging.LogRecord) -> None:
        if len(self.records) < EARLY_LIMIT:
            self.records.append(record)
        else:
            self.dropped += 1


def hold_early_records() -> None:
    """Keep every record logged from now until :func:`configure_logging`
    (which writes them in the configured format), so that a program's first
    lines look like its others."""
    root = logging.getLogger()
    root.handlers[:] = [_EarlyRecords()]
    root.setLevel(logging.DEBUG)


def level_name(spelling: str) -> str | None:
    """The level a spelling means (``debug``, ``info``, ``warn`` or ``error``;
    any case, ``warning`` and ``err`` too), None when it is not one."""
    level = LEVELS.get(spelling.strip().lower())
    return None if level is None else _PRINTED.get(level) or logging.getLevelName(level).lower()


def env_level() -> str | None:
    """The level ``SLUICE_LOG_LEVEL`` sets, None when it is unset or empty;
    ValueError when it is not a level."""
    raw = os.environ.get(LEVEL_ENV, "").strip()
    if not raw:
        return None
    level = level_name(raw)
    if level is None:
        raise ValueError(f"{LEVEL_ENV}: expected one of debug, info, warn, error, got {raw!r}")
    return level


_files: list[TextIO] = []
"""The log files the current configuration writes to."""


class _Outputs:
    """One stream that writes to several (zap's combined write syncer)."""

    def __init__(self, streams: list[TextIO]):
        self.streams = streams

    def write(self, text: str) -> None:
        for stream in self.streams:
            stream.write(text)

    def flush(self) -> None:
        for stream in self.streams:
            stream.flush()


def open_outputs(paths: Sequence[str]) -> TextIO:
    """The streams zap opens for `paths`: ``stderr``, ``stdout``, a file path
    or a ``file://`` URL (files appended to, created when missing); OSError
    names the path that cannot be opened, as Go's ``os.OpenFile`` does."""
    streams: list[TextIO] = []
    for path in paths:
        if path in ("stderr", "stdout"):
            streams.append(sys.stderr if path == "stderr" else sys.stdout)
            continue
        file = path.removeprefix("file://") if path.startswith("file://") else path
        try:
            streams.append(open(file, "a", encoding="utf-8", buffering=1))  # noqa: SIM115
        except OSError as problem:
            raise OSError(f"open {file}: {(problem.strerror or str(problem)).lower()}") from None
    return streams[0] if len(streams) == 1 else cast(TextIO, _Outputs(streams))


def configure_logging(
    level: str,
    encoding: str = "logfmt",
    sampler: LogSampler | None = None,
    output: TextIO | None = None,
    initial_fields: Mapping[str, Any] | None = None,
) -> None:
    """Send every log record to `output` (default stderr, see
    :func:`open_outputs`) in `encoding` (``logfmt``, its alias ``console``,
    or ``json``) at `level`, or at ``SLUICE_LOG_LEVEL`` when that is set,
    through `sampler` if any, with `initial_fields` on every line; records
    held since :func:`hold_early_records` go out first."""
    with contextlib.suppress(ValueError):  # the program reports it with its config
        level = env_level() or level
    handler = logging.StreamHandler(output or sys.stderr)
    for stream in _files:  # the files of the previous configuration
        stream.close()
    _files[:] = [
        f for f in getattr(output, "streams", [output]) if f not in (None, sys.stdout, sys.stderr)
    ]
    formatter = JsonFormatter if encoding == "json" else LogfmtFormatter
    handler.setFormatter(formatter(initial_fields))
    if sampler is not None:
        handler.addFilter(sampler)
    root = logging.getLogger()
    held = [h for h in root.handlers if isinstance(h, _EarlyRecords)]
    root.handlers[:] = [handler]
    threshold = LEVELS.get(level.lower(), logging.INFO)
    root.setLevel(threshold)
    for early in held:
        for record in early.records:
            if record.levelno >= threshold:
                handler.handle(record)
        if early.dropped:
            logging.getLogger(__name__).warning(
                "%d log records from start-up were not kept", early.dropped
            )
