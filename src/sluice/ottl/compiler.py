"""Compile a condition's AST once into a tree of closures.

Booleans become ``item -> bool`` functions and values ``item -> value``
getters; nothing walks the AST per item. Evaluation keeps upstream's order
and short-circuits (``and``/``or`` left to right), so that an error on an
item surfaces exactly where upstream's would. Anything outside Sluice's
subset is an :class:`OttlConfigError` naming the construct.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sluice.gostrconv import quoted
from sluice.ottl import syntax
from sluice.ottl.compare import EQ, NE, compare
from sluice.ottl.contexts import ContainerMemo, Context, Getter
from sluice.ottl.errors import OttlConfigError, OttlRuntimeError
from sluice.ottl.functions import (
    FUNCTIONS,
    GETTER,
    UPSTREAM_CONVERTERS,
    Function,
    check_pattern,
)
from sluice.ottl.scans import Scans, Slot, leaf
from sluice.ottl.values import type_name

Predicate = Callable[[Any], bool]
SUPPORTED = ", ".join(FUNCTIONS)


@dataclass
class Compiled:
    """One condition. `pattern_leaves` is set when the condition is only
    ``IsMatch(path, "re")`` leaves joined by ``or``: it is then true exactly
    when one of those (slot, pattern id) pairs hit."""

    text: str
    predicate: Predicate
    pattern_leaves: list[tuple[Slot, int]] | None = None


@dataclass
class Compiler:
    """Compiles the conditions of one sequence (one context); they share
    `scans` and the container `memos`."""

    context: Context
    scans: Scans = field(default_factory=Scans)
    memos: list[ContainerMemo] = field(default_factory=list)

    def condition(self, text: str) -> Compiled:
        """Raises :class:`OttlConfigError` with the problem (the caller names
        the condition)."""
        tree = syntax.parse_condition(text)
        leaves = self._pattern_leaves(tree)
        return Compiled(text, self.boolean(tree), leaves)

    # -- booleans ----------------------------------------------------------------

    def boolean(self, node: syntax.Boolean) -> Predicate:
        if isinstance(node, syntax.Or):
            return _or(self.boolean(node.left), self.boolean(node.right))
        if isinstance(node, syntax.And):
            return _and(self.boolean(node.left), self.boolean(node.right))
        if isinstance(node, syntax.Not):
            return _not(self.boolean(node.operand))
        if isinstance(node, syntax.Constant):
            value = node.value
            return lambda item: value
        if isinstance(node, syntax.Compare):
            return self.comparison(node)
        return self.predicate(node.call)

    def comparison(self, node: syntax.Compare) -> Predicate:
        left, right, op = self.value(node.left), self.value(node.right), node.op
        # The same path on both sides reads the same map or slice storage.
        same = isinstance(node.left, syntax.Path) and node.left == node.right
        if isinstance(node.right, syntax.Literal) and isinstance(node.right.value, str):
            # The common `path == "text"`: a str equals only an equal str.
            literal = node.right.value
            if op == EQ:
                return lambda item: bool(left(item) == literal)
            if op == NE:
                return lambda item: bool(left(item) != literal)
        return lambda item: compare(left(item), right(item), op, same)

    def predicate(self, call: syntax.Call) -> Predicate:
        """A converter used as a boolean: it must return a bool."""
        if call.name == "IsMatch" and not call.editor:
            pattern_leaf = self._is_match_leaf(call)
            if pattern_leaf is not None:
                return leaf(*pattern_leaf)
        getter = self.call(call)

        def truth(item: Any) -> bool:
            result = getter(item)
            if result.__class__ is not bool:
                raise OttlRuntimeError(
                    "value returned from Converter in constant expression must be bool but got "
                    + type_name(result)
                )
            return bool(result)

        return truth

    # -- values ------------------------------------------------------------------

    def value(self, node: syntax.Value) -> Getter:
        if isinstance(node, syntax.Literal):
            constant = node.value
            return lambda item: constant
        if isinstance(node, syntax.EnumSymbol):
            number = self.context.enums.get(node.name)
            if number is None:
                raise OttlConfigError(f"enum symbol, {node.name}, not found")
            return lambda item: number
        if isinstance(node, syntax.Path):
            resolved = self.context.resolve(node, self.memos)
            if resolved.sequence:
                raise OttlConfigError(
                    f'path "{node}" is not supported by Sluice outside Len(): it is a slice '
                    "of telemetry"
                )
            return resolved.getter
        if isinstance(node, syntax.Call):
            if node.name == "IsMatch" and not node.editor:
                pattern_leaf = self._is_match_leaf(node)
                if pattern_leaf is not None:
                    return leaf(*pattern_leaf)
            return self.call(node)
        raise OttlConfigError(f"{node.what} are not supported by Sluice's OTTL subset")

    def call(self, call: syntax.Call) -> Getter:
        function = self._function(call)
        args: list[Any] = []
        if not function.takes_arguments:
            return function.build(args)
        try:
            bound = self._bind(call, function)
            for (_, kind), (position, argument) in zip(function.params, bound, strict=True):
                try:
                    if kind == GETTER:
                        args.append(self._argument_value(argument))
                    else:
                        args.append(_string_literal(argument))
                except OttlConfigError as bad:
                    raise _at_position(position, bad) from None
        except OttlConfigError as bad:
            raise _in_arguments(call, bad) from None
        if function.name == "IsMatch":
            problem = check_pattern(args[1])
            if problem is not None:
                raise OttlConfigError(f"couldn't create function: {problem}")
        return function.build(args)

    def _argument_value(self, node: syntax.Value) -> Getter:
        """A getter argument: ``Len`` also takes slices of telemetry."""
        if isinstance(node, syntax.Path):
            resolved = self.context.resolve(node, self.memos)
            return resolved.getter
        return self.value(node)

    def _function(self, call: syntax.Call) -> Function:
        if call.editor:
            raise OttlConfigError(
                f"converter names must start with an uppercase letter but got '{call.name}'"
            )
        function = FUNCTIONS.get(call.name)
        if function is None:
            if call.name not in UPSTREAM_CONVERTERS:
                raise OttlConfigError(f'undefined function "{call.name}"')
            raise OttlConfigError(
                f'function "{call.name}" is not supported by Sluice (supported: {SUPPORTED})'
            )
        if function.contexts is not None and self.context.name not in function.contexts:
            # Not in this context's function set: upstream's parser's own error.
            raise OttlConfigError(f'undefined function "{call.name}"')
        if call.keys:
            raise OttlConfigError(f"indexing the result of {call.name} is not supported by Sluice")
        return function

    @staticmethod
    def _bind(call: syntax.Call, function: Function) -> list[tuple[int, syntax.Value]]:
        """The arguments in parameter order (named ones placed by name), each
        with its position in the call. The checks are upstream's buildArgs',
        in its order: an unnamed argument after a named one, then the count."""
        named = False
        for argument in call.args:
            if argument.name is not None:
                named = True
            elif named:
                raise OttlConfigError("unnamed argument used after named argument")
        names = [name for name, _ in function.params]
        if len(call.args) != len(names):
            raise OttlConfigError(
                f"incorrect number of arguments. Expected: {len(names)} Received: {len(call.args)}"
            )
        bound: dict[str, tuple[int, syntax.Value]] = {}
        for position, argument in enumerate(call.args):
            if argument.name is None:
                bound[names[position]] = (position, argument.value)
                continue
            if argument.name not in names:
                raise OttlConfigError(f"no such parameter: {argument.name}")
            if argument.name in bound:
                raise OttlConfigError(f"duplicate argument: {argument.name}")
            bound[argument.name] = (position, argument.value)
        return [bound[name] for name in names]

    # -- pattern leaves ----------------------------------------------------------

    def _is_match_leaf(self, call: syntax.Call) -> tuple[Slot, int] | None:
        """The (slot, id) of ``IsMatch(path, "re")``; None for another target."""
        function = self._function(call)
        try:
            (target_at, target), (pattern_at, pattern) = self._bind(call, function)
            if not isinstance(target, syntax.Path):
                return None
            try:
                resolved = self.context.resolve(target, self.memos)
                if resolved.sequence:
                    raise OttlConfigError(
                        f'path "{target}" is not supported by Sluice outside Len(): it is a '
                        "slice of telemetry"
                    )
            except OttlConfigError as bad:
                raise _at_position(target_at, bad) from None
            try:
                text = _string_literal(pattern)
            except OttlConfigError as bad:
                raise _at_position(pattern_at, bad) from None
        except OttlConfigError as bad:
            raise _in_arguments(call, bad) from None
        problem = check_pattern(text)
        if problem is not None:
            raise OttlConfigError(f"couldn't create function: {problem}")
        return self.scans.pattern(resolved, text)

    def _pattern_leaves(self, node: syntax.Boolean) -> list[tuple[Slot, int]] | None:
        if isinstance(node, syntax.Or):
            left = self._pattern_leaves(node.left)
            right = self._pattern_leaves(node.right)
            return None if left is None or right is None else left + right
        if isinstance(node, syntax.Predicate) and node.call.name == "IsMatch":
            found = self._is_match_leaf(node.call)
            return None if found is None else [found]
        return None


def _string_literal(node: syntax.Value) -> str:
    """A ``string`` parameter's value: a string literal only."""
    if isinstance(node, syntax.Literal) and isinstance(node.value, str):
        return node.value
    raise OttlConfigError("must be a string")


def _at_position(position: int, bad: OttlConfigError) -> OttlConfigError:
    """What is wrong with one argument, as upstream's buildArgs words it."""
    return OttlConfigError(f"invalid argument at position {position}: {bad}")


def _in_arguments(call: syntax.Call, bad: OttlConfigError) -> OttlConfigError:
    """What is wrong with a call's arguments, as upstream's newFunctionCall
    words it."""
    return OttlConfigError(f"error while parsing arguments for call to {quoted(call.name)}: {bad}")


def _or(left: Predicate, right: Predicate) -> Predicate:
    return lambda item: left(item) or right(item)


def _and(left: Predicate, right: Predicate) -> Predicate:
    return lambda item: left(item) and right(item)


def _not(operand: Predicate) -> Predicate:
    return lambda item: not operand(item)
