"""OTLP requests for the attributes and resource processor tests: items
(spans, log records, data points) with given attributes under resources and
scopes with given properties, and the attributes read back as pdata prints
them (``Str(x)``, ``Int(1)``...)."""

from __future__ import annotations

import asyncio
import hashlib
import struct
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest

from sluice.collector import pdata
from sluice.collector.component import ComponentConfig, Host
from sluice.collector.confmap.decode import Problems, decode
from sluice.collector.internal.attraction.values import any_value
from sluice.collector.internal.go_text import typed
from sluice.policy import Signal
from tests.collector.components.pipeline_data import Sink, settings

C = TypeVar("C", bound=ComponentConfig)
Attributes = Sequence[tuple[str, Any]]
SIGNALS = (Signal.LOG, Signal.METRIC, Signal.TRACE)


@dataclass
class Item:
    """A span, log record or metric (with one data point holding `attributes`)."""

    attributes: Attributes = ()
    name: str = ""
    """Span or metric name."""
    kind: int = 0
    """Span kind number."""
    body: Any = None
    severity_text: str = ""
    severity_number: int = 0


@dataclass
class Scope:
    items: list[Item]
    name: str = ""
    version: str = ""


@dataclass
class Resource:
    scopes: list[Scope]
    attributes: Attributes = field(default_factory=list)


def _put(kvs: Any, attributes: Attributes) -> None:
    for key, raw in attributes:
        kvs.add(key=key).value.CopyFrom(any_value(raw))


def request(signal: Signal, resources: Sequence[Resource]) -> Any:
    """The request of `signal` holding `resources` (lean logs for logs)."""
    message = ExportLogsServiceRequest() if signal is Signal.LOG else pdata.new(signal)
    for resource in resources:
        container = getattr(message, pdata.RESOURCES[signal]).add()
        _put(container.resource.attributes, resource.attributes)
        for scope in resource.scopes:
            holder = getattr(container, pdata.SCOPES[signal]).add()
            holder.scope.name, holder.scope.version = scope.name, scope.version
            for item in scope.items:
                _add_item(signal, holder, item)
    return pdata.lean_logs(message) if signal is Signal.LOG else message


def _add_item(signal: Signal, holder: Any, item: Item) -> None:
    if signal is Signal.TRACE:
        span = holder.spans.add(name=item.name, kind=item.kind)
        _put(span.attributes, item.attributes)
    elif signal is Signal.LOG:
        record = holder.log_records.add(
            severity_text=item.severity_text, severity_number=item.severity_number
        )
        if item.body is not None:
            record.body.CopyFrom(any_value(item.body))
        _put(record.attributes, item.attributes)
    else:
        metric = holder.metrics.add(name=item.name)
        _put(metric.gauge.data_points.add(as_int=1).attributes, item.attributes)


def one_item(signal: Signal, attributes: Attributes) -> Any:
    """A request with one item holding `attributes`, its resource holding them too."""
    return request(signal, [Resource([Scope([Item(attributes)])], attributes)])


def processed(factory: Any, config: Any, signal: Signal, data: Any) -> Any:
    """`data` after a processor made by `factory` (checking it is what goes on)."""
    sink = Sink()
    processor = factory.create(settings(factory.component_type), config, signal, sink)

    async def scenario() -> None:
        await processor.start(Host())
        await processor.consume(data)

    asyncio.run(scenario())
    assert sink.received == [data]
    return data


def decoded(config_type: type[C], raw: Any) -> C:
    """A config that decodes and validates without problems."""
    problems = Problems()
    config = decode(config_type, raw, "", problems)
    assert problems.lines == [] and list(config.validate()) == []
    return config


def shown(kvs: Any) -> list[tuple[str, str]]:
    return [(kv.key, typed(kv.value)) for kv in kvs]


def item_attributes(signal: Signal, data: Any) -> list[list[tuple[str, str]]]:
    """Each item's attributes, in order (a metric's: its data points')."""
    if signal is Signal.LOG:
        data = pdata.full_logs(data)
    found = []
    for container in getattr(data, pdata.RESOURCES[signal]):
        for holder in getattr(container, pdata.SCOPES[signal]):
            for item in getattr(holder, pdata.RECORDS[signal]):
                if signal is Signal.METRIC:
                    found += [shown(p.attributes) for p in item.gauge.data_points]
                else:
                    found.append(shown(item.attributes))
    return found


def resource_attributes(signal: Signal, data: Any) -> list[list[tuple[str, str]]]:
    return [shown(c.resource.attributes) for c in getattr(data, pdata.RESOURCES[signal])]


# -- the actions table: (id, actions, attributes before, attributes after) ----------


def sha256(data: bytes) -> str:
    return f"Str({hashlib.sha256(data).hexdigest()})"


ACTION_CASES: list[
    tuple[str, list[dict[str, Any]], list[tuple[str, Any]], list[tuple[str, str]]]
] = [
    (
        "insert-only-new-keys",
        [
            {"key": "a", "value": "new", "action": "insert"},
            {"key": "b", "value": 1, "action": "insert"},
        ],
        [("a", "old")],
        [("a", "Str(old)"), ("b", "Int(1)")],
    ),
    (
        "value-types",
        [
            {"key": "d", "value": 1.5, "action": "insert"},
            {"key": "t", "value": True, "action": "insert"},
            {"key": "l", "value": ["x", 2], "action": "insert"},
            {"key": "m", "value": {"k": "v"}, "action": "insert"},
        ],
        [],
        [
            ("d", "Double(1.5)"),
            ("t", "Bool(true)"),
            ("l", 'Slice(["x",2])'),
            ("m", 'Map({"k":"v"})'),
        ],
    ),
    (
        # YAML reads these as uint64; pdata's FromRaw keeps their bits as int64.
        "uint64-values-wrap-to-int64",
        [
            {"key": "max", "value": (1 << 64) - 1, "action": "insert"},
            {"key": "l", "value": [1 << 63], "action": "insert"},
        ],
        [],
        [("max", "Int(-1)"), ("l", "Slice([-9223372036854775808])")],
    ),
    (
        "update-only-existing-keys",
        [
            {"key": "a", "value": 2, "action": "update"},
            {"key": "b", "value": 2, "action": "update"},
        ],
        [("a", "one")],
        [("a", "Int(2)")],
    ),
    (
        "upsert-both",
        [
            {"key": "a", "value": "x", "action": "UPSERT"},
            {"key": "b", "value": "y", "action": "upsert"},
        ],
        [("a", 1)],
        [("a", "Str(x)"), ("b", "Str(y)")],
    ),
    (
        "from-attribute",
        [
            {"key": "copy", "from_attribute": "src", "action": "insert"},
            {"key": "none", "from_attribute": "missing", "action": "upsert"},
            {"key": "dflt", "from_attribute": "missing", "default_value": 7, "action": "upsert"},
            {"key": "src", "from_attribute": "src", "action": "upsert"},
        ],
        [("src", {"n": 1})],
        [("src", 'Map({"n":1})'), ("copy", 'Map({"n":1})'), ("dflt", "Int(7)")],
    ),
    (
        "from-context-has-only-its-default",
        [
            {"key": "origin", "from_context": "metadata.origin", "action": "insert"},
            {
                "key": "region",
                "from_context": "metadata.region",
                "default_value": "eu",
                "action": "upsert",
            },
            {"key": "env", "default_value": "dev", "action": "update"},
        ],
        [("env", "prod")],
        [("env", "Str(dev)"), ("region", "Str(eu)")],
    ),
    (
        "delete-moves-the-last-entry-into-the-gap",
        [{"key": "a", "action": "delete"}, {"key": "nope", "action": "delete"}],
        [("a", 1), ("b", 2), ("c", 3)],
        [("c", "Int(3)"), ("b", "Int(2)")],
    ),
    (
        "delete-by-pattern",
        [{"pattern": "^tmp", "action": "delete"}],
        [("tmp.a", 1), ("keep", 2), ("tmp.b", 3), ("x.tmp", 4)],
        [("x.tmp", "Int(4)"), ("keep", "Int(2)")],
    ),
    (
        "hash-every-type",
        [{"key": k, "action": "hash"} for k in ("s", "e", "i", "d", "t", "m", "missing")],
        [("s", "a@b.c"), ("e", ""), ("i", 1), ("d", 1.5), ("t", True), ("m", {"k": "v"})],
        [
            ("s", sha256(b"a@b.c")),
            ("e", "Str()"),  # upstream hashes only bytes there are
            ("i", sha256(struct.pack("<q", 1))),
            ("d", sha256(struct.pack("<d", 1.5))),
            ("t", sha256(b"\x01")),
            ("m", "Str()"),
        ],
    ),
    (
        "hash-key-then-pattern",
        [{"key": "user.email", "pattern": "^user\\.", "action": "hash"}],
        [("user.email", "x"), ("user.name", "y"), ("other", "z")],
        [
            ("user.email", sha256(hashlib.sha256(b"x").hexdigest().encode())),
            ("user.name", sha256(b"y")),
            ("other", "Str(z)"),
        ],
    ),
    (
        "extract-named-groups",
        [
            {
                "key": "url",
                "pattern": "^(?P<scheme>\\w+)://(?P<host>[^/:]+)(?::(?P<port>\\d+))?",
                "action": "extract",
            },
            {"key": "n", "pattern": "(?P<digit>\\d)", "action": "extract"},
            {"key": "missing", "pattern": "(?P<x>.)", "action": "extract"},
        ],
        [("url", "https://example.com/a"), ("host", "old"), ("n", 5)],
        [
            ("url", "Str(https://example.com/a)"),
            ("host", "Str(example.com)"),
            ("n", "Int(5)"),
            ("scheme", "Str(https)"),
            ("port", "Str()"),
        ],
    ),
    (
        # Go's regexp takes a name twice (RE2's groupindex keeps one of
        # them): each group is put in turn, so the last one's match stays.
        "extract-a-name-used-twice",
        [
            {"key": "v", "pattern": "^(?P<part>\\w+)-(?P<part>\\w+)$", "action": "extract"},
            {"key": "w", "pattern": "(?<first>a)(?P<second>b)?", "action": "extract"},
        ],
        [("v", "left-right"), ("w", "ac")],
        [
            ("v", "Str(left-right)"),
            ("w", "Str(ac)"),
            ("part", "Str(right)"),
            ("first", "Str(a)"),
            ("second", "Str()"),
        ],
    ),
    (
        "convert-to-int",
        [{"key": k, "action": "convert", "converted_type": "int"} for k in "abcdefghij"],
        [
            ("a", "200"),
            ("b", "+5"),
            ("c", " 12"),
            ("d", -1.9),
            ("e", True),
            ("f", "1e3"),
            ("g", [1]),
            # strconv.ParseInt in base 10: no underscores or base prefixes
            # (base 0 only), nothing past int64.
            ("h", "1_000"),
            ("i", "0x10"),
            ("j", "9223372036854775808"),
        ],
        [
            ("a", "Int(200)"),
            ("b", "Int(5)"),
            ("c", "Str( 12)"),
            ("d", "Int(-1)"),
            ("e", "Int(1)"),
            ("f", "Str(1e3)"),
            ("g", "Slice([1])"),
            ("h", "Str(1_000)"),
            ("i", "Str(0x10)"),
            ("j", "Str(9223372036854775808)"),
        ],
    ),
    (
        "convert-to-double",
        [{"key": k, "action": "convert", "converted_type": "double"} for k in "abcdef"],
        [("a", "1.5e3"), ("b", "0x1p-2"), ("c", "1e400"), ("d", 3), ("e", False), ("f", "Inf")],
        [
            ("a", "Double(1500)"),
            ("b", "Double(0.25)"),
            ("c", "Str(1e400)"),
            ("d", "Double(3)"),
            ("e", "Double(0)"),
            ("f", "Double(json: unsupported value: +Inf)"),
        ],
    ),
    (
        # Go's ParseFloat takes underscores between digits (its int parsing
        # in base 10 does not).
        "convert-to-double-underscores",
        [{"key": k, "action": "convert", "converted_type": "double"} for k in "abcdefg"],
        [
            ("a", "1_000.5"),
            ("b", "1e1_0"),
            ("c", "0x1p1_0"),
            ("d", "_1"),
            ("e", "1__0"),
            ("f", "1_.5"),
            ("g", "0x_.8p0"),
        ],
        [
            ("a", "Double(1000.5)"),
            ("b", "Double(10000000000)"),
            ("c", "Double(1024)"),
            ("d", "Str(_1)"),
            ("e", "Str(1__0)"),
            ("f", "Str(1_.5)"),
            ("g", "Str(0x_.8p0)"),
        ],
    ),
    (
        "convert-to-string",
        [{"key": k, "action": "convert", "converted_type": "string"} for k in "abcd"],
        [("a", 5), ("b", 1e21), ("c", True), ("d", {"z": 1, "a": [True]})],
        [
            ("a", "Str(5)"),
            ("b", "Str(1e+21)"),
            ("c", "Str(true)"),
            ("d", 'Str({"a":[true],"z":1})'),
        ],
    ),
    (
        "upstreams-complex-example",
        [
            {"key": "operation", "value": "default", "action": "insert"},
            {"key": "svc.operation", "from_attribute": "operation", "action": "upsert"},
            {"key": "operation", "action": "delete"},
        ],
        [("operation", "subtract"), ("math_value", 123)],
        [("svc.operation", "Str(subtract)"), ("math_value", "Int(123)")],
    ),
]
