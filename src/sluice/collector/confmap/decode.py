"""Decode a config map into a typed dataclass, as upstream's mapstructure does:
keys are the field names (or ``field(metadata={"key": ...})``), unknown keys
are errors, a key given as null keeps its default (a null section means
"enabled with defaults"; a null list or map item is its type's zero value),
and every problem names its key path with ``::`` between keys and ``[i]``
for list items.

Values are typed strictly, as upstream's decoder (mapstructure without
``WeaklyTypedInput``; the ``confmap.strictlyTypedInput`` gate is stable and
gone): a quoted ``"100"`` does not fill a number field, nor ``"true"`` a
boolean, nor a number a text field. A number field takes an integer or a
float (cut to its whole part); a float field takes an integer. A field
whose Go type is not ``int`` or ``string`` says so with :data:`Uint32`,
:data:`Int64` or its own :class:`GoType`: a negative number does not fit
an unsigned one, and a value past its size wraps as Go's conversion does.
A level (:data:`TelemetryLevel`, :data:`ZapLevel`: an integer in Go, read
from text by its ``UnmarshalText``) holds its text, or takes a number as
the level of that number. Problems use mapstructure's
words and name the key as it does (``sending_queue.queue_size``, ``[i]``
for a list item, ``[key]`` for a map entry).

A value that was exactly one ``${...}`` (:class:`~sluice.confexpand.Expanded`)
is read as the text it stood for where the field holds text, and as its
YAML value elsewhere: an expanded ``100`` fills both a text and a number
field, and one that expands to nothing is the field type's zero. An
optional field (a pointer in Go) is not a text field even where it points
to text: a ``str | None`` takes the YAML value, so a number there is
refused. A list of text (``list[str]``) also takes one comma-separated
string, as upstream's decoder does.
"""

from __future__ import annotations

import dataclasses
import math
import types
import typing
from collections.abc import Iterable, Mapping
from functools import cache
from typing import Annotated, Any, Literal, TypeVar, Union

from sluice.confexpand import Expanded
from sluice.gostrconv import quoted, time_quoted
from sluice.telemetry.pdata_text import float_v

T = TypeVar("T")


class Duration(float):
    """Seconds, written as Go durations (``200ms``, ``1m30s``, ``0``); a bare
    integer is nanoseconds, as upstream."""


class Opaque(str):
    """A secret (a password, a token), as upstream's ``configopaque.String``:
    it compares, hashes and encodes as its value, but prints, formats and
    reprs as ``[REDACTED]`` so that no log line, error message or dumped
    config shows it. :meth:`reveal` gives the plain text."""

    def __str__(self) -> str:
        return REDACTED

    def __repr__(self) -> str:
        return repr(REDACTED)

    def __format__(self, spec: str) -> str:
        return format(REDACTED, spec)

    def reveal(self) -> str:
        return str.__str__(self)


REDACTED = "[REDACTED]"


def reveal(text: str) -> str:
    """The plain text of `text`, an :class:`Opaque` or ordinary text (for
    what goes on the wire)."""
    return str.__str__(text)


@dataclasses.dataclass(frozen=True)
class GoType:
    """A field's Go type where it is not the plain one (``int``, ``string``),
    for mapstructure's words and a number's limits."""

    name: str
    bits: int = 64
    signed: bool = True
    levels: tuple[str, ...] = ()
    """For an integer type read from text by its ``UnmarshalText`` (a level,
    held as text): what its ``String()`` prints of each number from
    `first` on. Text is checked by the component, as the type's
    UnmarshalText; a number is the level of that number."""
    first: int = 0
    unnamed: str = ""
    """``String()`` of a number no level has (``{}`` stands for it)."""

    def level(self, number: int) -> str:
        """The text of level `number` (a :class:`LevelNumber` past the levels)."""
        at = number - self.first
        if 0 <= at < len(self.levels):
            return self.levels[at]
        return LevelNumber(self.unnamed.format(number), number)


class LevelNumber(str):
    """A number given to a level field that names none of its levels (Go
    keeps it: ``configtelemetry.Level(7)``); the text is what Go's
    ``String()`` prints of it."""

    number: int

    def __new__(cls, text: str, number: int) -> LevelNumber:
        made = super().__new__(cls, text)
        made.number = number
        return made


Uint32 = Annotated[int, GoType("uint32", 32, False)]
Int64 = Annotated[int, GoType("int64", 64, True)]
TelemetryLevel = Annotated[
    str, GoType("configtelemetry.Level", 32, True, ("None", "Basic", "Normal", "Detailed"), -1)
]
"""configtelemetry.Level: ``none``, ``basic``, ``normal``, ``detailed`` in
any case, or a number (-1 is None, 2 Detailed)."""
ZapLevel = Annotated[
    str,
    GoType(
        "zapcore.Level",
        8,
        True,
        ("debug", "info", "warn", "error", "dpanic", "panic", "fatal"),
        -1,
        "Level({})",
    ),
]
"""zapcore.Level: its names in any case, or a number (-1 is debug, 0 info)."""
Compression = Annotated[str, GoType("configcompression.Type")]
"""configcompression.Type, a client's ``compression`` (a string type)."""
_INT = GoType("int", 64, True)


class _AsWrittenMark:
    """The marker of :data:`AsWritten`."""


class _NilPointerMark:
    """The marker of an optional section whose Go field is a pointer that
    defaults to nil (see :data:`NIL_POINTER`)."""


NIL_POINTER = _NilPointerMark()
"""Marks an optional section (``Annotated[Section | None, NIL_POINTER]``)
whose upstream field is a pointer that defaults to nil: mapstructure leaves
a field as it is for a null, so a null leaves it unset, where an optional
section without the mark is present, with its defaults."""


AsWritten = Annotated[Any, _AsWrittenMark]
"""A value left as written: each whole ``${...}`` inside it still an
:class:`~sluice.confexpand.Expanded`, for a component that reads entries of
its own shape and types each key itself (text where upstream's field is a
string, the YAML value elsewhere)."""


class ComponentName(str):
    """A component id in a pipeline's or the service's list (upstream's
    ``component.ID``, a struct read from text: a list of them does not take
    a comma-separated string, and a value that is not text is refused as a
    struct refuses it)."""


def plain(value: Any) -> Any:
    """`value` with every whole-value expansion replaced by its YAML value
    (for fields of any type and for reading the config's own structure)."""
    if isinstance(value, Expanded):
        return plain(value.value)
    if isinstance(value, Mapping):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


def shallow(value: Any) -> Any:
    """`value`'s YAML value when it was exactly one ``${...}`` (for a map or
    list the config's structure is read from), else `value`."""
    return value.value if isinstance(value, Expanded) else value


def _holds_text(hint: Any) -> bool:
    if typing.get_origin(hint) is Literal:
        return all(isinstance(a, str) for a in typing.get_args(hint))
    return isinstance(hint, type) and issubclass(hint, str)


_UNIT_NANOS = {
    "ns": 1,
    "us": 1_000,
    "\u00b5s": 1_000,  # micro sign
    "\u03bcs": 1_000,  # Greek mu, which Go accepts as well
    "ms": 1_000_000,
    "s": 1_000_000_000,
    "m": 60_000_000_000,
    "h": 3_600_000_000_000,
}
_LIMIT = 1 << 63
_DIGITS = "0123456789"


def parse_duration(text: str) -> float:
    """Go's ``time.ParseDuration``, in seconds; raises ValueError with Go's
    words (invalid duration, missing unit, unknown unit)."""
    invalid = ValueError(f"time: invalid duration {time_quoted(text)}")
    rest, negative = text, False
    if rest[:1] in ("-", "+"):
        rest, negative = rest[1:], rest[0] == "-"
    if rest == "0":
        return 0.0
    if not rest:
        raise invalid
    nanos = 0
    while rest:
        if rest[0] != "." and rest[0] not in _DIGITS:
            raise invalid
        at = 0
        while at < len(rest) and rest[at] in _DIGITS:
            at += 1
        whole = int(rest[:at] or "0")
        if whole > _LIMIT:
            raise invalid
        fraction, scale, digits = 0, 1.0, bool(at)
        if at < len(rest) and rest[at] == ".":
            at += 1
            begun, overflow = at, False
            while at < len(rest) and rest[at] in _DIGITS:  # digits past 2**63 are ignored
                grown = fraction * 10 + int(rest[at])
                overflow = overflow or fraction > (_LIMIT - 1) // 10 or grown > _LIMIT
                if not overflow:
                    fraction, scale = grown, scale * 10
                at += 1
            digits = digits or at > begun
        if not digits:
            raise invalid
        unit_at = at
        while at < len(rest) and rest[at] != "." and rest[at] not in _DIGITS:
            at += 1
        unit = rest[unit_at:at]
        if not unit:
            raise ValueError(f"time: missing unit in duration {time_quoted(text)}")
        if unit not in _UNIT_NANOS:
            raise ValueError(
                f"time: unknown unit {time_quoted(unit)} in duration {time_quoted(text)}"
            )
        size = _UNIT_NANOS[unit]
        if whole > _LIMIT // size:
            raise invalid
        part = whole * size + (int(fraction * (size / scale)) if fraction else 0)
        nanos += part
        if part > _LIMIT or nanos > _LIMIT:
            raise invalid
        rest = rest[at:]
    if not negative and nanos > _LIMIT - 1:
        raise invalid
    return (-nanos if negative else nanos) / 1e9


class Problems:
    """Collects ``path: message`` lines."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.paths: list[str] = []

    def add(self, path: str, message: str) -> None:
        self.lines.append(f"{path}: {message}" if path else message)
        self.paths.append(path)

    def __bool__(self) -> bool:
        return bool(self.lines)


def join(path: str, key: str) -> str:
    return f"{path}::{key}" if path else key


def go_type(value: Any) -> str:
    """The Go type yaml.v3 decodes `value` into (``[]interface {}`` for a list)."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float64"
    if isinstance(value, str):
        return "string"
    if isinstance(value, Mapping):
        return "map[string]interface {}"
    if isinstance(value, list):
        return "[]interface {}"
    return type(value).__name__


def go_kind(value: Any) -> str:
    """The ``reflect.Kind`` of what yaml.v3 decodes `value` into (``slice``
    for a list, ``map`` for a mapping)."""
    if isinstance(value, Mapping):
        return "map"
    if isinstance(value, list):
        return "slice"
    return go_type(value)


def not_a_map(name: str, value: Any) -> str:
    """mapstructure's words for a section (a map or struct) named `name`
    given something else."""
    return f"'{name}' expected a map, got '{go_kind(value)}'"


def not_a_list(name: str, value: Any) -> str:
    """mapstructure's words for a list named `name` given something else."""
    return f"'{name}': source data must be an array or slice, got {go_kind(value)}"


def invalid_keys(name: str, keys: Iterable[Any]) -> str:
    """mapstructure's words for the keys of a section that no field takes
    (sorted), naming the section as it does (``''`` at a decode's root)."""
    return f"'{name}' has invalid keys: {', '.join(sorted(str(k) for k in keys))}"


def go_value(value: Any) -> str:
    """`value` as Go's ``%v`` prints what yaml.v3 decoded it into: ``true``,
    ``1e+06``, ``[a b]``, ``map[a:1 b:2]`` (keys sorted), ``<nil>``."""
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return float_v(value)
    if isinstance(value, Mapping):
        items = sorted((str(k), go_value(v)) for k, v in value.items())
        return "map[" + " ".join(f"{k}:{v}" for k, v in items) + "]"
    if isinstance(value, list):
        return "[" + " ".join(go_value(v) for v in value) + "]"
    return str(value)


def go_sharp_v(value: Any) -> str:
    """`value` as Go's ``%#v`` prints what yaml.v3 decoded it into: ``"t"``,
    ``23``, ``[]interface {}{"a", 1}``, ``map[string]interface {}{"a":1}``."""
    if value is None:
        return "interface {}(nil)"
    if isinstance(value, str):
        return quoted(value)
    if isinstance(value, Mapping):
        items = sorted((str(k), go_sharp_v(v)) for k, v in value.items())
        return "map[string]interface {}{" + ", ".join(f"{quoted(k)}:{v}" for k, v in items) + "}"
    if isinstance(value, list):
        return "[]interface {}{" + ", ".join(go_sharp_v(v) for v in value) + "}"
    return go_value(value)


def _mismatch(name: str, expected: str, value: Any, secret: bool = False) -> str:
    shown = REDACTED if secret else go_value(value)
    return (
        f"'{name}' expected type '{expected}', got unconvertible type '{go_type(value)}', "
        f"value: '{shown}'"
    )


def _bool_mismatch(name: str, value: Any, current: Any) -> str:
    """mapstructure prints a boolean's mismatch with ``%s`` of the field's
    current value and ``%#v`` of the input (its own quirk, kept)."""
    held = "true" if current else "false"
    shown = go_sharp_v(value)
    return (
        f"'{name}' expected type '%!s(bool={held})', got unconvertible type '{shown}', "
        f"value: '{shown}'"
    )


@cache
def _hints(cls: type[Any]) -> dict[str, Any]:
    return typing.get_type_hints(cls, include_extras=True)


def config_keys(cls: type[Any]) -> dict[str, dataclasses.Field[Any]]:
    """The config key of each dataclass field."""
    return {f.metadata.get("key", f.name): f for f in dataclasses.fields(cls) if f.init}


def decode(
    cls: type[T], raw: Any, path: str, problems: Problems, base: T | None = None, name: str = ""
) -> T:
    """`raw` (a mapping or None) over `base` (default: ``cls()``), type-checked;
    `name` is mapstructure's name of `raw` (a component's config has none)."""
    result = base if base is not None else cls()
    raw = shallow(raw)
    if raw is None:
        return result
    if not isinstance(raw, Mapping):
        problems.add(path, not_a_map(name, raw))
        return result
    keys = config_keys(cls)
    unknown = [k for k in raw if k not in keys]
    if unknown:
        problems.add(path, invalid_keys(name, unknown))
    hints = _hints(cls)  # type: ignore[arg-type]
    changes: dict[str, Any] = {}
    for key, value in raw.items():
        spec = keys.get(key)
        if spec is None:
            continue
        current = getattr(result, spec.name)
        changes[spec.name] = _value(
            hints[spec.name],
            value,
            join(path, str(key)),
            f"{name}.{key}" if name else str(key),
            problems,
            current,
        )
    return dataclasses.replace(result, **changes) if changes else result  # type: ignore[type-var]


def _value(hint: Any, value: Any, path: str, name: str, problems: Problems, current: Any) -> Any:
    origin = typing.get_origin(hint)
    if origin is Annotated and NIL_POINTER in hint.__metadata__:
        if shallow(value) is None:
            return current
        hint = hint.__origin__
        origin = typing.get_origin(hint)
    if origin is Union or origin is types.UnionType:
        options = [a for a in typing.get_args(hint) if a is not type(None)]
        inner = options[0]
        if _is_section(inner) and current is None:
            current = inner()  # present, even as null: enabled with defaults
        if shallow(value) is None:  # a pointer stays as it was
            return current
        if isinstance(value, Expanded):
            # A pointer is not a string kind: useExpandValue gives it the
            # YAML value of a ${...}, even where it points to text.
            value = value.value
        return _value(inner, value, path, name, problems, current)
    if hint == AsWritten:
        return value
    declared = hint
    hint, go = _go_type(hint)
    origin = typing.get_origin(hint)
    if isinstance(value, Expanded):  # an Optional's is read by its inner type, above
        if _holds_text(hint) and not (go and go.levels):
            value = value.text
        elif value.value is None and hint is not Any:
            return _zero(declared)  # expanded to nothing: the type's zero, as upstream
        else:
            value = value.value
    if value is None:
        return current
    if hint is Any:
        return plain(value)
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return decode(hint, value, path, problems, current if current is not None else None, name)
    if origin is Literal:
        allowed = typing.get_args(hint)
        if value not in allowed:
            problems.add(
                path, f"unsupported value {value!r} (valid values: {', '.join(map(str, allowed))})"
            )
            return current
        return value
    if origin in (list, tuple):
        (item,) = typing.get_args(hint)[:1]
        if item is str and isinstance(value, str):
            value = value.split(",") if value else []
        if not isinstance(value, list):
            problems.add(path, not_a_list(name, value))
            return current
        items = [
            _value(item, v, f"{path}[{i}]", f"{name}[{i}]", problems, _zero(item))
            for i, v in enumerate(value)
        ]
        return tuple(items) if origin is tuple else items
    if origin in (dict, Mapping):
        if not isinstance(value, Mapping):
            problems.add(path, not_a_map(name, value))
            return current
        _, item = typing.get_args(hint)
        return {
            str(k): _value(item, v, join(path, str(k)), f"{name}[{k}]", problems, _zero(item))
            for k, v in value.items()
        }
    return _scalar(hint, go, value, path, name, problems, current)


def _is_section(hint: Any) -> bool:
    return isinstance(hint, type) and dataclasses.is_dataclass(hint)


def _go_type(hint: Any) -> tuple[Any, GoType | None]:
    """`hint` without its ``Annotated`` wrapper, and the :class:`GoType` it
    carries (None for a plain ``int`` or ``str`` and every other type)."""
    if typing.get_origin(hint) is not Annotated:
        return hint, None
    inner, *extras = typing.get_args(hint)
    return inner, next((e for e in extras if isinstance(e, GoType)), None)


def _zero(hint: Any) -> Any:
    """Go's zero value of `hint`: what a null list or map item decodes to,
    and a ``${...}`` that expands to nothing (a section with every field
    zero, not its defaults; an empty list or map; no optional section)."""
    hint, go = _go_type(hint)
    if go and go.levels:
        return go.level(0)
    origin = typing.get_origin(hint)
    if origin is list:
        return []
    if origin is tuple:
        return ()
    if origin in (dict, Mapping):
        return {}
    if origin is Literal:
        return type(typing.get_args(hint)[0])()
    if _is_section(hint):
        hints = _hints(hint)
        return hint(**{f.name: _zero(hints[f.name]) for f in dataclasses.fields(hint) if f.init})
    if isinstance(hint, type) and issubclass(hint, (str, int, float)):
        return hint()
    return None


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _go_int(value: int | float, go: GoType) -> int:
    """Go's conversion of a number to an integer type: a float's fraction
    is cut, and what does not fit wraps (a float that no integer holds is
    the smallest int64, as on amd64)."""
    if isinstance(value, float):
        value = int(value) if math.isfinite(value) else -(1 << 63)
    value %= 1 << go.bits
    if go.signed and value >= 1 << (go.bits - 1):
        value -= 1 << go.bits
    return value


def _scalar(
    hint: Any, go: GoType | None, value: Any, path: str, name: str, problems: Problems, current: Any
) -> Any:
    if hint is Duration:
        if isinstance(value, str):
            try:
                return Duration(parse_duration(value))
            except ValueError as bad:
                problems.add(path, str(bad))
                return current
        if _number(value):
            return Duration(_go_int(value, _INT) / 1e9)  # nanoseconds
        problems.add(path, _mismatch(name, "time.Duration", value))
        return current
    if hint is bool:
        if isinstance(value, bool):
            return value
        problems.add(path, _bool_mismatch(name, value, current))
        return current
    if hint is int:
        go = go or _INT
        if _number(value):
            if not go.signed and value < 0:
                shown = f"{value:.6f}" if isinstance(value, float) else str(value)
                problems.add(path, f"cannot parse '{name}', {shown} overflows uint")
                return current
            return _go_int(value, go)
        problems.add(path, _mismatch(name, go.name, value))
        return current
    if hint is float:
        if _number(value):
            return float(value)
        problems.add(path, _mismatch(name, "float64", value))
        return current
    if isinstance(hint, type) and issubclass(hint, str):
        if isinstance(value, str):
            return hint(value)
        if go and go.levels and _number(value):  # an integer type in Go
            return go.level(_go_int(value, go))
        if hint is ComponentName:  # a struct in Go: only its text form fills it
            if isinstance(value, Mapping) and value:
                problems.add(path, invalid_keys(name, value))
            elif not isinstance(value, Mapping):
                problems.add(path, not_a_map(name, value))
            return current
        expected = go.name if go else "configopaque.String" if hint is Opaque else "string"
        problems.add(path, _mismatch(name, expected, value, secret=hint is Opaque))
        return current
    raise TypeError(f"config field type {hint!r} is not supported")
