"""String sets and attribute matchers (upstream's ``filterset`` and
``filtermatcher``), compiled once.

- ``strict``: a string matches when it equals an item.
- ``regexp``: when an item's RE2 pattern matches anywhere in it (Go's
  ``MatchString`` searches; anchor with ``^...$`` for a whole match). The
  patterns of a set are joined into one RE2 alternation: one search per
  string, whatever the number of patterns.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from sluice.collector.internal.attraction.values import UnsupportedValue, any_value
from sluice.collector.internal.attrmap import AttributeMap
from sluice.collector.internal.filtermatch.config import AttributeMatch, RegexpOptions
from sluice.collector.internal.go_text import float_fixed, value_as_string, value_type
from sluice.policy.regex_dialect import compile_re2, go_regexp_error

MATCH_TYPES = ("regexp", "strict")


class MatchConfigError(ValueError):
    """Match properties upstream would not build a matcher from."""


def unrecognized(match_type: str) -> MatchConfigError:
    return MatchConfigError(
        f"unrecognized match_type: '{match_type}', valid types are: [{' '.join(MATCH_TYPES)}]"
    )


def compile_pattern(pattern: str) -> Any:
    """An RE2 regex; the error is the one Go's ``regexp.Compile`` reports."""
    problem = go_regexp_error(pattern)
    if problem is not None:
        raise MatchConfigError(problem)
    return compile_re2(pattern)


class StringSet:
    """Does a string match any item? (``strict`` or ``regexp``)."""

    def __init__(self, items: Sequence[str], match_type: str, options: RegexpOptions | None = None):
        self.exact: frozenset[str] | None = None
        self.regex: Any = None
        self.cache: dict[str, bool] | None = None
        self.cache_limit = 0
        if match_type == "strict":
            self.exact = frozenset(items)
            return
        if match_type != "regexp":
            raise unrecognized(match_type)
        unique = list(dict.fromkeys(items))
        for pattern in unique:
            compile_pattern(pattern)
        if any("\\Q" in pattern for pattern in unique):
            # A \Q quote runs to the end of its pattern: it cannot be grouped.
            patterns = [compile_pattern(p) for p in unique]
            self.regex = _AnyOf(patterns)
        else:
            self.regex = compile_pattern("|".join(f"(?:{p})" for p in unique))
        if options is not None and options.cacheenabled:
            if options.cachemaxnumentries < 0:
                # golang-lru's refusal of a size below 1 (0 is unbounded).
                raise MatchConfigError("must provide a positive size")
            self.cache = {}
            self.cache_limit = options.cachemaxnumentries

    def matches(self, text: str) -> bool:
        if self.exact is not None:
            return text in self.exact
        cache = self.cache
        if cache is None:
            return self.regex.search(text) is not None
        found = cache.get(text)
        if found is None:
            if self.cache_limit and len(cache) >= self.cache_limit:
                cache.clear()
            found = cache[text] = self.regex.search(text) is not None
        return found


class _AnyOf:
    """Patterns searched one after the other (what cannot be one alternation)."""

    def __init__(self, patterns: list[Any]):
        self.patterns = patterns

    def search(self, text: str) -> Any:
        for pattern in self.patterns:
            found = pattern.search(text)
            if found is not None:
                return found
        return None


def string_form(value: Any) -> str | None:
    """The text a ``regexp`` attribute value is matched against: strings,
    bools and ints as pdata writes them, doubles in Go's ``'f'`` format; None
    for other types."""
    kind = value.WhichOneof("value")
    if kind == "double_value":
        return float_fixed(value.double_value)
    return value_as_string(value) if kind in _TEXT_KINDS else None


_TEXT_KINDS = frozenset({"string_value", "bool_value", "int_value"})


def _canonical(value: Any) -> Any:
    """A comparable form of an ``AnyValue`` that keeps types apart (1 != 1.0 != true)."""
    kind = value.WhichOneof("value")
    if kind == "kvlist_value":
        return kind, tuple(
            sorted((kv.key, _canonical(kv.value)) for kv in value.kvlist_value.values)
        )
    if kind == "array_value":
        return kind, tuple(_canonical(item) for item in value.array_value.values)
    return kind, None if kind is None else getattr(value, kind)


ValueTest = Callable[[Any], bool]


def _value_test(
    entry: AttributeMatch, match_type: str, options: RegexpOptions | None
) -> ValueTest | None:
    if entry.value is None:
        return None
    try:
        expected = any_value(entry.value)
    except UnsupportedValue as bad:
        raise MatchConfigError(str(bad)) from None
    if match_type == "regexp":
        if expected.WhichOneof("value") != "string_value":
            raise MatchConfigError(
                f'match_type=regexp for "{entry.key}" only supports Str, but found '
                f"{value_type(expected)}"
            )
        patterns = StringSet([expected.string_value], match_type, options)

        def matches_pattern(value: Any) -> bool:
            text = string_form(value)
            return text is not None and patterns.matches(text)

        return matches_pattern
    if match_type != "strict":
        raise unrecognized(match_type)
    wanted = _canonical(expected)

    def equals(value: Any) -> bool:
        return bool(_canonical(value) == wanted)

    return equals


class AttributesMatcher:
    """Every entry's key present (its first entry) and, if it has a value, matching."""

    def __init__(
        self,
        entries: Sequence[AttributeMatch],
        match_type: str,
        options: RegexpOptions | None = None,
    ):
        self.entries: list[tuple[str, ValueTest | None]] = []
        for entry in entries:
            if not entry.key:
                raise MatchConfigError("can't have empty key in the list of attributes")
            self.entries.append((entry.key, _value_test(entry, match_type, options)))

    def matches(self, attrs: AttributeMap) -> bool:
        if not self.entries:
            return True
        keys = attrs.keys
        for key, test in self.entries:
            if key not in keys:
                return False
            if test is not None and not test(attrs.value(keys.index(key))):
                return False
        return True
