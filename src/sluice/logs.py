"""Process log output shared by Edge and the collector: one line per record,
``time=… level=… pid=… logger=… msg="…"`` (``console``) or one JSON object per
line (``json``), exceptions folded into the line."""

from __future__ import annotations

import json
import logging
import sys
import time

LEVELS = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "warn": logging.WARNING,
    "warning": logging.WARNING,
    "error": logging.ERROR,
}


def _stamp(record: logging.LogRecord) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created)) + (
        f".{int(record.msecs):03d}Z"
    )


def _message(formatter: logging.Formatter, record: logging.LogRecord) -> str:
    message = record.getMessage()
    if record.exc_info:
        message += " | " + formatter.formatException(record.exc_info).replace("\n", " | ")
    return message


class OneLineFormatter(logging.Formatter):
    """``time=… level=… pid=… logger=… msg="…"``."""

    def format(self, record: logging.LogRecord) -> str:
        return (
            f"time={_stamp(record)} level={record.levelname.lower()} "
            f"pid={record.process} logger={record.name} "
            f"msg={json.dumps(_message(self, record))}"
        )


class JsonFormatter(logging.Formatter):
    """The same fields as one JSON object."""

    def format(self, record: logging.LogRecord) -> str:
        return json.dumps(
            {
                "time": _stamp(record),
                "level": record.levelname.lower(),
                "pid": record.process,
                "logger": record.name,
                "msg": _message(self, record),
            }
        )


def configure_logging(level: str, encoding: str = "console") -> None:
    """Send every log record to stderr in `encoding` (console or json)."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter() if encoding == "json" else OneLineFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(LEVELS.get(level, logging.INFO))
