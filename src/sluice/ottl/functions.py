"""The converters of Sluice's OTTL subset, as upstream's ``ottlfuncs`` and
the filter processor's own metric functions define them.

Each function declares its parameters (upstream's ``Arguments`` struct:
snake_case names for named arguments, and whether a parameter takes any
value or only a string literal) and builds a getter from its compiled
arguments. ``IsMatch`` on a path is not built here: the compiler turns it
into a pattern leaf (see :mod:`sluice.ottl.scans`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from sluice.ottl.contexts import Getter
from sluice.ottl.errors import OttlRuntimeError
from sluice.ottl.values import PMap, PSlice, string_like
from sluice.ottl.values import Sequence as TelemetrySlice
from sluice.policy import regex_dialect

GETTER, STRING = "getter", "string"
"""Parameter kinds: any value (a path, literal or converter), or a string literal."""

Builder = Callable[[Sequence[Any]], Getter]
_LEN_TYPES = (
    "target arg must be of type string, []any, map[string]any, pcommon.Map, pcommon.Slice, "
    "pcommon.Value (of type String, Map, Slice) or a supported slice type from the plog, "
    "pmetric or ptrace packages"
)


@dataclass(frozen=True)
class Function:
    name: str
    params: tuple[tuple[str, str], ...]
    build: Builder
    contexts: frozenset[str] | None = None
    """The contexts that have it (None: all)."""

    @property
    def takes_arguments(self) -> bool:
        """A function without parameters ignores its call's arguments, as
        upstream's parser does for a factory with no ``Arguments``."""
        return bool(self.params)


def is_match(args: Sequence[Any]) -> Getter:
    """``IsMatch`` on a value that is not a path (a literal or a converter)."""
    target, pattern = args
    regex = regex_dialect.compile_re2(pattern)

    def get(item: Any) -> bool:
        text = string_like(target(item))
        return text is not None and regex.search(text) is not None

    return get


def check_pattern(pattern: str) -> str | None:
    """Upstream's message for a pattern Go's regexp rejects, with Go's
    ``regexp.Compile`` error."""
    problem = regex_dialect.go_regexp_error(pattern)
    if problem is None:
        return None
    return f"the pattern supplied to IsMatch is not a valid regexp pattern: {problem}"


def _type_test(test: Callable[[Any], bool]) -> Builder:
    """``IsString`` and friends: true for a value of the type, false for any
    other value (nil included); an error reading the value is an error."""

    def build(args: Sequence[Any]) -> Getter:
        (target,) = args
        return lambda item: test(target(item))

    return build


def _is_int(value: Any) -> bool:
    return value.__class__ is int


def _is_double(value: Any) -> bool:
    return value.__class__ is float


def _is_bool(value: Any) -> bool:
    return value.__class__ is bool


def _is_string(value: Any) -> bool:
    return value.__class__ is str


def _is_map(value: Any) -> bool:
    return isinstance(value, PMap)


def length(value: Any) -> int:
    """``Len``: bytes of a string (Go's len), entries of a map or slice."""
    if isinstance(value, str):
        return len(value) if value.isascii() else len(value.encode())
    if isinstance(value, PMap | PSlice | TelemetrySlice | bytes):
        return len(value)
    raise OttlRuntimeError(_LEN_TYPES)


def _len(args: Sequence[Any]) -> Getter:
    (target,) = args
    return lambda item: length(target(item))


def _points(item: Any) -> Any:
    kind = item.kind
    if kind is None:
        raise OttlRuntimeError("unknown metric type")
    return getattr(item.metric, kind).data_points


def _has_attribute(args: Sequence[Any]) -> Getter:
    """``HasAttrOnDatapoint(key, value)``: decided by the first data point
    that has the key (its value, as a string, equals `value`), as upstream."""
    key, expected = args

    def get(item: Any) -> bool:
        for point in _points(item):
            for kv in point.attributes:
                if kv.key == key:
                    value = kv.value
                    text = value.string_value if value.WhichOneof("value") == "string_value" else ""
                    return bool(text == expected)
        return False

    return get


def _is_root_span(args: Sequence[Any]) -> Getter:
    """``IsRootSpan()``: the span has no parent (its parent span id is empty
    or all zeros, pdata's ``IsEmpty``)."""
    return lambda item: not any(item.span.parent_span_id)


def _has_attribute_key(args: Sequence[Any]) -> Getter:
    (key,) = args

    def get(item: Any) -> bool:
        return any(kv.key == key for point in _points(item) for kv in point.attributes)

    return get


UPSTREAM_CONVERTERS = frozenset(
    [
        "Base64Decode",
        "Base64Encode",
        "Bool",
        "Coalesce",
        "CommunityID",
        "Concat",
        "ContainsValue",
        "ConvertCase",
        "ConvertAttributesToElementsXML",
        "ConvertTextToElementsXML",
        "Day",
        "Decode",
        "Double",
        "Duration",
        "ExtractGrokPatterns",
        "ExtractPatterns",
        "FNV",
        "Format",
        "FormatTime",
        "GetXML",
        "HasPrefix",
        "HasSuffix",
        "Hex",
        "Hour",
        "Hours",
        "Index",
        "InsertXML",
        "Int",
        "IsBool",
        "IsDouble",
        "IsInCIDR",
        "IsInt",
        "IsList",
        "IsMap",
        "IsMatch",
        "IsString",
        "IsValidLuhn",
        "Keys",
        "Len",
        "Log",
        "MD5",
        "Microseconds",
        "Milliseconds",
        "Minute",
        "Minutes",
        "Month",
        "Murmur3Hash",
        "Murmur3Hash128",
        "Nanosecond",
        "Nanoseconds",
        "Now",
        "ParseCSV",
        "ParseInt",
        "ParseJSON",
        "ParseKeyValue",
        "ParseSeverity",
        "ParseSimplifiedXML",
        "ParseXML",
        "ProfileID",
        "RemoveXML",
        "SHA1",
        "SHA256",
        "SHA512",
        "Second",
        "Seconds",
        "SliceToMap",
        "Sort",
        "SpanID",
        "Split",
        "String",
        "Substring",
        "Time",
        "ToCamelCase",
        "ToKeyValueString",
        "ToLowerCase",
        "ToSnakeCase",
        "ToUpperCase",
        "TraceID",
        "Trim",
        "TrimPrefix",
        "TrimSuffix",
        "TruncateTime",
        "UUID",
        "UUIDv7",
        "URL",
        "Unix",
        "UnixMicro",
        "UnixMilli",
        "UnixNano",
        "UnixSeconds",
        "UserAgent",
        "Values",
        "Weekday",
        "XXH128",
        "XXH3",
        "Year",
    ]
)
"""The converters upstream's ``ottlfuncs`` defines (in v0.115 or later): a
name outside them is upstream's "undefined function", one of them that
Sluice does not run is named as such."""

FUNCTIONS = {
    f.name: f
    for f in (
        Function("IsMatch", (("target", GETTER), ("pattern", STRING)), is_match),
        Function("IsString", (("target", GETTER),), _type_test(_is_string)),
        Function("IsInt", (("target", GETTER),), _type_test(_is_int)),
        Function("IsDouble", (("target", GETTER),), _type_test(_is_double)),
        Function("IsBool", (("target", GETTER),), _type_test(_is_bool)),
        Function("IsMap", (("target", GETTER),), _type_test(_is_map)),
        Function("Len", (("target", GETTER),), _len),
        Function(
            "HasAttrOnDatapoint",
            (("key", STRING), ("expected_val", STRING)),
            _has_attribute,
            frozenset({"metric"}),
        ),
        Function(
            "HasAttrKeyOnDatapoint", (("key", STRING),), _has_attribute_key, frozenset({"metric"})
        ),
        Function("IsRootSpan", (), _is_root_span, frozenset({"span"})),
    )
}
"""Sluice's converters, by name."""
