"""What log lines and messages may print of a URL (:func:`sluice.logs.redact_url`),
and which records the collector's log sampler lets through."""

from __future__ import annotations

import logging

import pytest

from sluice.logs import LogSampler, redact_url


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("http://user:secretpw@host/p?x=1", "http://***@host/p?***"),
        ("https://TOKEN@host:443/sync", "https://***@host:443/sync"),
        ("http://u:p@ss@host/a@b", "http://***@host/a@b"),
        ("grpcs://u:secretpw@host:4317", "grpcs://***@host:4317"),
        ("u:secretpw@host:4317", "***@host:4317"),
        ("http://host/v1/policy/sync?api_key=k", "http://host/v1/policy/sync?***"),
        ("http://host/a@b", "http://host/a@b"),
        ("http://[::1]:4318/prefix", "http://[::1]:4318/prefix"),
        ("host:4317", "host:4317"),
    ],
)
def test_credentials_and_queries_are_redacted(url: str, shown: str) -> None:
    assert redact_url(url) == shown


def _passed(sampler: LogSampler, records: list[tuple[float, int, str]]) -> list[int]:
    """The indexes of the (time, level, message) records `sampler` lets through."""
    passed = []
    for index, (created, level, message) in enumerate(records):
        record = logging.LogRecord("test", level, __file__, 1, message, None, None)
        record.created = created
        if sampler.filter(record):
            passed.append(index)
    return passed


def test_the_sampler_passes_the_first_then_every_nth_per_message_and_level_per_tick() -> None:
    """zap's sampler (upstream's on the collector's log): counted per level
    and message within a tick from the first record."""
    sampler = LogSampler(tick=10.0, initial=2, thereafter=3)
    same = [(100.0 + i * 0.01, logging.INFO, "exported") for i in range(9)]
    assert _passed(sampler, same) == [0, 1, 4, 7]
    other_level = [(101.0, logging.WARNING, "exported")] * 3
    other_message = [(101.0, logging.INFO, "refused")] * 3
    assert _passed(sampler, other_level) == [0, 1]
    assert _passed(sampler, other_message) == [0, 1]
    # The tick ran out: counting starts again.
    assert _passed(sampler, [(110.5, logging.INFO, "exported")] * 3) == [0, 1]


def test_messages_are_told_apart_once_formatted() -> None:
    """Sluice writes into its messages what zap loggers put in fields; a
    message is what the line says (the debug exporter's text is one "%s")."""
    sampler = LogSampler(tick=10.0, initial=1, thereafter=0)
    for text in ("batch one", "batch two"):
        record = logging.LogRecord("test", logging.INFO, __file__, 1, "%s", (text,), None)
        assert sampler.filter(record)


def test_thereafter_zero_passes_only_the_first() -> None:
    sampler = LogSampler(tick=1.0, initial=1, thereafter=0)
    assert _passed(sampler, [(5.0, logging.ERROR, "boom")] * 50) == [0]
