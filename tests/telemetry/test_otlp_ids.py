"""The check of OTLP protobuf requests in C (``_ids``) against its reference
walk in Python: for any bytes, both answer the same (pdata's first problem,
deprecated scopes seen, or nothing), and neither reads past the bytes; and
the reference's tables are pdata's."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sluice.policy import Signal, native
from sluice.telemetry import otlp_ids
from sluice.telemetry.otlp_raw import varint
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
    (Signal.TRACE, in_a_request(field(4, bytes(8)) + b"\x30\x01\x39" + bytes(8))),
    (Signal.LOG, in_a_request(field(9, bytes(16)) + field(10, bytes(8)), deprecated=True)),
    (Signal.LOG, in_a_request(field(10, bytes(7)))),
    (Signal.METRIC, in_a_request(exemplar_in(9, 8, field(5, bytes(16)) + field(4, bytes(9))))),
    *((signal, deprecated_scopes_request(signal)) for signal in SIGNALS),
    (Signal.LOG, in_a_request(field(5, field(6, field(1, field(2, b"\x19\x01")))))),
    (Signal.METRIC, in_a_request(field(9, field(1, b"\x31" + bytes(8) + field(6, bytes(12)))))),
    (Signal.METRIC, in_a_request(field(10, field(1, field(8, b"\x10\x05" + field(2, b"\x80")))))),
    (Signal.TRACE, b"\x0a\x02\x2b\x2c"),
    (Signal.TRACE, b"\x0a\x01\x2c"),
    (Signal.TRACE, b"\x0a\x02\x2f\x00"),
    (Signal.TRACE, b"\x0a\x02\x0f\x00"),
    (Signal.TRACE, b"\x0a" + b"\xff" * 9 + b"\x01"),
    (Signal.TRACE, b"\x0a\x0b" + b"\x80" * 10 + b"\x01"),
    (Signal.TRACE, b"\x00"),
    (Signal.TRACE, b"\x80\x80\x80\x80\x80\x80\x80\x80\x80\x01"),
]


def reference(signal: Signal, wire: bytes) -> tuple[int, int, int, int]:
    return otlp_ids.walk(SIGNALS.index(signal), wire)


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
        ("proto: wrong wireType = 1 for field IntValue", False),
        # A packed list of 12 bytes is read as two whole numbers, up to the point's end.
        ("unexpected EOF", False),
        # A packed varint is read past the list's end, up to the message's.
        ("unexpected EOF", False),
        (None, False),  # an unknown group is stepped over
        ("proto: ResourceSpans: wiretype end group for non-group", False),
        ("proto: illegal wireType 7", False),
        ("proto: wrong wireType = 7 for field Resource", False),
        ("proto: negative length found during unmarshaling", False),
        ("proto: integer overflow", False),
        ("proto: ExportTraceServiceRequest: illegal tag 0 (wire type 0)", False),
        # Go's int32(wire >> 3) of a field number of 2**60 is 0.
        (
            "proto: ExportTraceServiceRequest: illegal tag 0 (wire type 9223372036854775808)",
            False,
        ),
    ]


@pytest.mark.parametrize("kind", range(len(otlp_ids.KINDS)))
def test_every_field_of_the_wrong_wire_type(kind: int) -> None:
    assert _ids is not None
    fields = otlp_ids.KINDS[kind][1]
    for number, (go_name, wire, _) in fields.items():
        for wrong in (0, 1, 2, 3, 5, 6, 7):
            tag = varint(number << 3 | wrong)
            answer = _ids.scan(kind, tag + bytes(10))
            assert answer == otlp_ids.walk(kind, tag + bytes(10))
            if wrong == wire or (wire, wrong) in ((8, 1), (8, 2), (9, 0), (9, 2)):
                assert answer[0] != otlp_ids.WRONG_WIRE_TYPE
            else:
                problem = otlp_ids.problem_text(answer)
                assert problem == f"proto: wrong wireType = {wrong} for field {go_name}"


@settings(max_examples=300, deadline=None)
@given(st.integers(0, len(otlp_ids.KINDS) - 1), st.binary(max_size=64))
def test_any_bytes(kind: int, wire: bytes) -> None:
    assert _ids is not None
    assert _ids.scan(kind, wire) == otlp_ids.walk(kind, wire)
