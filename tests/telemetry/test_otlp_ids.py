"""The id check of OTLP protobuf requests in C (``_ids``) against its
reference walk in Python: for any bytes, both answer the same (a wrong id,
deprecated scopes seen, or nothing), and neither reads past the bytes."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sluice.policy import Signal, native
from sluice.telemetry import otlp_ids
from tests.collector.components.test_otlp_receiver import (
    deprecated_scopes_request,
    exemplar_in,
    field,
    in_a_request,
)

_ids = native.extension("sluice.telemetry._ids")
SIGNALS = (Signal.TRACE, Signal.LOG, Signal.METRIC)
WIRES = [
    (Signal.TRACE, in_a_request(field(1, bytes(16)) + field(13, field(2, bytes(7))))),
    (Signal.TRACE, in_a_request(field(4, bytes(8)) + b"\x28\x01\x39" + bytes(8))),
    (Signal.LOG, in_a_request(field(9, bytes(16)) + field(10, bytes(8)), deprecated=True)),
    (Signal.LOG, in_a_request(field(10, bytes(7)))),
    (Signal.METRIC, in_a_request(exemplar_in(9, 8, field(5, bytes(16)) + field(4, bytes(9))))),
    *((signal, deprecated_scopes_request(signal)) for signal in SIGNALS),
]


def reference(signal: Signal, wire: bytes) -> int:
    return otlp_ids.walk(otlp_ids.SCHEMAS[signal], 0, wire, 0, len(wire))


@pytest.mark.parametrize(("signal", "wire"), WIRES)
def test_c_answers_as_the_reference(signal: Signal, wire: bytes) -> None:
    assert _ids is not None, "the _ids extension did not load"
    expected = reference(signal, wire)
    assert _ids.scan(SIGNALS.index(signal), wire) == expected
    for cut in range(len(wire)):
        assert _ids.scan(SIGNALS.index(signal), wire[:cut]) == reference(signal, wire[:cut])


def test_the_answers() -> None:
    answers = [otlp_ids.scan(signal, wire) for signal, wire in WIRES]
    assert answers == [
        ("unmarshal: invalid SpanID length", False),
        (None, False),
        (None, True),
        ("unmarshal: invalid SpanID length", False),
        ("unmarshal: invalid SpanID length", False),
        (None, True),
        (None, True),
        (None, True),
    ]


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(SIGNALS), st.binary(max_size=64))
def test_any_bytes(signal: Signal, wire: bytes) -> None:
    assert _ids is not None
    assert _ids.scan(SIGNALS.index(signal), wire) == reference(signal, wire)
