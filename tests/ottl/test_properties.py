"""Property test: random conditions (within Sluice's subset) over random log
records give the same answer compiled as when the lark parse tree is
interpreted directly by the small, independent interpreter below (which
reads full protobuf records, not the pipeline's lean bytes, and restates
OTTL's comparison rules from LANGUAGE.md)."""

from __future__ import annotations

import re
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from lark import Token, Tree
from opentelemetry.proto.logs.v1.logs_pb2 import LogRecord

from sluice.collector import pdata
from sluice.ottl import LOG, ConditionFailed, ConditionSequence, LogItem
from sluice.ottl.grammar import parser
from sluice.ottl.syntax import unquote
from tests.ottl.items import log_request, set_any

# -- random records ---------------------------------------------------------------

FLOATS = {0.5: "0.5", -3.0: "-3", 2.25: "2.25", 1e21: "1e+21"}
"""Doubles the records hold, with Go's JSON text of each."""
texts = st.sampled_from(["x", "abc", "", "ABC", "a1", "{x}", "true", "héllo"])
scalars = st.one_of(
    texts,
    st.integers(-3, 3),
    st.sampled_from(list(FLOATS)),
    st.booleans(),
    st.sampled_from([b"", b"\x01", b"\x01\x02"]),
    st.none(),
)
maps = st.dictionaries(
    st.sampled_from(["k", "x", "a"]),
    st.one_of(texts, st.integers(-3, 3), st.booleans()),
    max_size=3,
)
values = st.one_of(scalars, maps, st.lists(st.one_of(texts, st.integers(-3, 3)), max_size=3))
attributes = st.dictionaries(st.sampled_from(["a", "b", "n", "m"]), values, max_size=4)


@st.composite
def records(draw: Any) -> LogRecord:
    request = log_request(body="")
    record = request.resource_logs[0].scope_logs[0].log_records[0]
    record.Clear()
    body = draw(st.one_of(values, st.just("absent")))
    if body != "absent":
        record.body.SetInParent()
        set_any(record.body, body)
    record.severity_number = draw(st.integers(0, 24))
    record.severity_text = draw(st.sampled_from(["", "INFO", "WARN", "info"]))
    for key, value in draw(attributes).items():
        set_any(record.attributes.add(key=key).value, value)
    resource = request.resource_logs[0].resource
    del resource.attributes[:]
    set_any(resource.attributes.add(key="r").value, draw(scalars))
    return request


# -- random conditions ------------------------------------------------------------

PATHS = [
    "body",
    "severity_number",
    "severity_text",
    'attributes["a"]',
    'attributes["b"]',
    'attributes["n"]',
    'attributes["m"]["k"]',
    'attributes["m"][0]',
    'resource.attributes["r"]',
    "instrumentation_scope.name",
]
LITERALS = ['"x"', '"abc"', '""', "1", "0", "-2", "1.5", "0.5", "true", "false", "nil", "0x01",
            "0x0102", "SEVERITY_NUMBER_INFO", "SEVERITY_NUMBER_WARN"]  # fmt: skip
PATTERNS = ["x", "^a", "c$", "\\\\d", "(?i)ABC", ".*", "1|true", "^$", "\\\\{", "é"]
paths = st.sampled_from(PATHS)
operands = st.one_of(paths, st.sampled_from(LITERALS), paths.map(lambda p: f"Len({p})"))
comparisons = st.tuples(operands, st.sampled_from(["==", "!=", "<", "<=", ">", ">="]), operands)
predicates = st.one_of(
    st.tuples(paths, st.sampled_from(PATTERNS)).map(lambda t: f'IsMatch({t[0]}, "{t[1]}")'),
    st.tuples(st.sampled_from(["IsString", "IsInt", "IsDouble", "IsBool", "IsMap"]), paths).map(
        lambda t: f"{t[0]}({t[1]})"
    ),
    st.sampled_from(["true", "false"]),
)
atoms = st.one_of(comparisons.map(" ".join), predicates)
conditions = st.recursive(
    atoms,
    lambda inner: st.one_of(
        st.tuples(inner, inner).map(lambda t: f"{t[0]} and {t[1]}"),
        st.tuples(inner, inner).map(lambda t: f"{t[0]} or {t[1]}"),
        inner.map(lambda c: f"({c})"),
        inner.map(lambda c: f"not ({c})"),
        atoms.map(lambda c: f"not {c}"),
    ),
    max_leaves=6,
)

# -- the interpreter --------------------------------------------------------------


class Failed(Exception):
    """The condition fails on the record."""


class Map(dict[str, Any]):
    pass


def _value(any_value: Any) -> Any:
    kind = any_value.WhichOneof("value")
    if kind is None:
        return None
    if kind == "kvlist_value":
        out = Map()
        for kv in any_value.kvlist_value.values:
            out.setdefault(kv.key, kv.value)
        return out
    if kind == "array_value":
        return list(any_value.array_value.values)
    return getattr(any_value, kind)


def _plain(value: Any) -> Any:
    """Maps and lists with their AnyValues read (scalars tagged with their
    type: an Int never equals a Bool or a Double inside a map)."""
    if isinstance(value, Map):
        return {k: _plain(_value(v)) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(_value(v)) for v in value]
    return (type(value).__name__, value)


def _index(value: Any, keys: list[Any]) -> Any:
    for key in keys:
        if isinstance(value, Map):
            if not isinstance(key, str):
                raise Failed
            if key not in value:
                return None
            value = _value(value[key])
        elif isinstance(value, list):
            if not isinstance(key, int) or not 0 <= key < len(value):
                raise Failed
            value = _value(value[key])
        else:
            raise Failed
    return value


def _path(tree: Tree[Token], request: Any) -> Any:
    fields = [(str(f.children[0]), [unquote(str(k.children[0])) if k.children[0].type == "STRING" else int(k.children[0]) for k in f.children[1:]]) for f in tree.children]  # type: ignore[union-attr]  # fmt: skip
    resource = request.resource_logs[0]
    record = resource.scope_logs[0].log_records[0]
    (name, keys), *rest = fields
    if name == "resource":
        attributes = Map((kv.key, kv.value) for kv in reversed(resource.resource.attributes))
        return _index(attributes, rest[0][1])
    if name == "instrumentation_scope":
        return resource.scope_logs[0].scope.name
    if name == "body":
        return _index(_value(record.body) if record.HasField("body") else None, keys)
    if name == "attributes":
        return _index(Map((kv.key, kv.value) for kv in reversed(record.attributes)), keys)
    return getattr(record, name)


def _compare(a: Any, b: Any, op: str, same: bool = False) -> bool:
    if a == b"":
        a = None
    if b == b"":
        b = None
    numbers = (int, float)
    if a is None or b is None:
        same = a is b
        return {"==": same, "!=": not same, "<=": same, ">=": same}.get(op, False)
    if type(a) is bool or type(b) is bool:
        comparable = type(a) is type(b)
    elif isinstance(a, numbers) and isinstance(b, numbers):
        comparable = True
        if type(a) is not type(b):
            a, b = float(a), float(b)
    else:
        comparable = type(a) is type(b) and isinstance(a, str | bytes)
    if not comparable:
        if isinstance(a, Map | list) and op in ("==", "!="):
            return same == (op == "==")  # Go's == on the pcommon wrappers
        return op == "!="
    return {"==": a == b, "!=": a != b, "<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op]


def _json(value: Any) -> str:
    if isinstance(value, dict):
        return "{" + ",".join(f'"{k}":{_json(value[k])}' for k in sorted(value)) + "}"
    if isinstance(value, list):
        return "[" + ",".join(_json(v) for v in value) + "]"
    _, scalar = value
    if isinstance(scalar, str):
        return '"' + scalar + '"'
    return _text(scalar)


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return FLOATS[value]
    if isinstance(value, bytes):
        return value.hex()
    if isinstance(value, Map | list):
        return _json(_plain(value))
    return str(value)


def _call(tree: Tree[Token], request: Any) -> Any:
    name = str(tree.children[0])
    args = [a.children[1] for a in tree.children[1:]]  # type: ignore[union-attr]
    value = _operand(args[0], request)
    if name == "IsMatch":
        if value is None:
            return False
        pattern = unquote(str(args[1].children[0]))  # type: ignore[union-attr]
        return re.search(pattern, _text(value)) is not None
    if name == "Len":
        if isinstance(value, str):
            return len(value.encode())
        if isinstance(value, Map | list | bytes):
            return len(value)
        raise Failed
    wanted = {"IsString": str, "IsInt": int, "IsDouble": float, "IsBool": bool, "IsMap": Map}
    return type(value) is wanted[name]


def _operand(tree: Tree[Token], request: Any) -> Any:
    kind = tree.data
    if kind == "path":
        return _path(tree, request)
    if kind == "converter":
        return _call(tree, request)
    token = str(tree.children[0]) if tree.children else ""
    constants = {"true": True, "false": False, "nil": None}
    if kind in constants:
        return constants[str(kind)]
    if kind == "string":
        return unquote(token)
    if kind == "int_":
        return int(token)
    if kind == "float_":
        return float(token)
    if kind == "bytes_":
        return bytes.fromhex(token[2:])
    if kind == "enum":
        return {"SEVERITY_NUMBER_INFO": 9, "SEVERITY_NUMBER_WARN": 13}[token]
    raise AssertionError(f"unexpected {tree}")


def interpret(tree: Tree[Token], request: Any) -> bool:
    kind = tree.data
    if kind == "or_":
        return interpret(tree.children[0], request) or interpret(tree.children[1], request)  # type: ignore[arg-type]
    if kind == "and_":
        return interpret(tree.children[0], request) and interpret(tree.children[1], request)  # type: ignore[arg-type]
    if kind == "bool_value":
        negation, atom = tree.children
        result = interpret(atom, request)  # type: ignore[arg-type]
        return not result if negation is not None else result
    if kind == "comparison":
        left, op, right = tree.children
        a = _operand(left, request)  # type: ignore[arg-type]
        b = _operand(right, request)  # type: ignore[arg-type]
        same = left.data == "path" and left == right  # type: ignore[union-attr]
        return _compare(a, b, str(op), same)
    if kind == "converter":
        result = _call(tree, request)
        if not isinstance(result, bool):
            raise Failed
        return result
    return kind == "true"


def oracle(condition: str, request: Any) -> bool | str:
    try:
        return interpret(parser().parse(condition), request)
    except Failed:
        return "error"


def compiled(condition: str, request: Any) -> bool | str:
    lean = pdata.lean_logs(request)
    item = LogItem()
    item.rc = lean.resource_logs[0]
    item.sc = item.rc.scope_logs[0]
    item.reset(item.sc.log_records[0])
    try:
        return ConditionSequence(LOG, [condition]).matches(item)
    except ConditionFailed:
        return "error"


@settings(max_examples=400, deadline=None)
@given(conditions, records())
def test_compiled_conditions_agree_with_the_parse_tree_interpreter(
    condition: str, request: Any
) -> None:
    assert compiled(condition, request) == oracle(condition, request), condition
