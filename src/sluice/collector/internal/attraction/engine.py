"""Attribute actions compiled once and applied to one attribute list at a time
(upstream's ``AttrProc``), through an
:class:`~sluice.collector.internal.attrmap.AttributeMap` (pdata's ``Map``
semantics). Values from the config become ``AnyValue`` messages once;
patterns are RE2, compiled once.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from opentelemetry.proto.common.v1.common_pb2 import AnyValue

from sluice.collector import client
from sluice.collector.internal.attraction.config import ActionConfig, group_names
from sluice.collector.internal.attraction.values import any_value, convert_value, hash_value
from sluice.collector.internal.attrmap import AttributeMap
from sluice.policy.regex_dialect import compile_re2


class _Action:
    """One compiled action; ``apply`` says whether it changed the list."""

    def __init__(self, config: ActionConfig):
        self.key = config.key

    def apply(self, attrs: AttributeMap) -> bool:
        raise NotImplementedError


def _constant(raw: Any) -> AnyValue | None:
    return None if raw is None else any_value(raw)


class _Set(_Action):
    """insert, update and upsert: the value from the config, another attribute
    or the client (see :meth:`AttrProc.read_client`), else ``default_value``."""

    def __init__(self, config: ActionConfig):
        super().__init__(config)
        kind = config.kind
        self.inserts = kind in ("insert", "upsert")
        self.updates = kind in ("update", "upsert")
        self.default = _constant(config.default_value)
        self.from_attribute = ""
        self.from_context = config.from_context if config.value is None else ""
        self.constant = self.default
        if config.value is not None:
            self.constant = _constant(config.value)
        elif config.from_attribute:
            self.from_attribute = config.from_attribute

    def read_client(self, info: client.Info) -> None:
        found = info.context_value(self.from_context)
        self.constant = self.default if found is None else AnyValue(string_value=found)

    def apply(self, attrs: AttributeMap) -> bool:
        source = attrs.index(self.from_attribute) if self.from_attribute else -1
        constant = self.constant if source < 0 else None
        if source < 0 and constant is None:
            return False
        target = attrs.index(self.key)
        if not (self.inserts if target < 0 else self.updates):
            return False
        if constant is None:
            if target == source:  # copying a value onto itself
                return False
            constant = attrs.value(source)
        attrs.put(target, self.key, constant)
        return True


class _ByKeyOrPattern(_Action):
    """delete and hash: `key`, then every key the pattern finds (listed after
    `key` was handled; an unset `key` is the empty key, as upstream)."""

    def __init__(self, config: ActionConfig):
        super().__init__(config)
        self.regex = compile_re2(config.pattern) if config.pattern else None

    def matching(self, attrs: AttributeMap) -> list[str]:
        regex = self.regex
        return [] if regex is None else [k for k in attrs.keys if regex.search(k)]


class _Delete(_ByKeyOrPattern):
    def apply(self, attrs: AttributeMap) -> bool:
        changed = attrs.remove(self.key)
        for key in self.matching(attrs):
            changed = attrs.remove(key) or changed
        return changed


class _Hash(_ByKeyOrPattern):
    def apply(self, attrs: AttributeMap) -> bool:
        changed = False
        for key in [self.key, *self.matching(attrs)]:
            index = attrs.index(key)
            if index >= 0:
                hash_value(attrs.value(index))
                changed = True
        return changed


class _Extract(_Action):
    """Named groups of the pattern's first match in `key`'s string value become
    string attributes (an unmatched group: the empty string)."""

    def __init__(self, config: ActionConfig):
        super().__init__(config)
        self.regex = compile_re2(config.pattern)
        self.names = group_names(config.pattern)

    def apply(self, attrs: AttributeMap) -> bool:
        index = attrs.index(self.key)
        if index < 0:
            return False
        value = attrs.value(index)
        if value.WhichOneof("value") != "string_value":
            return False
        found = self.regex.search(value.string_value)
        if found is None:
            return False
        for number, name in enumerate(self.names, 1):
            attrs.put_str(name, found.group(number) or "")
        return True


class _Convert(_Action):
    def __init__(self, config: ActionConfig):
        super().__init__(config)
        self.to = config.converted_type

    def apply(self, attrs: AttributeMap) -> bool:
        index = attrs.index(self.key)
        if index < 0:
            return False
        return convert_value(attrs.value(index), self.to)


_KINDS: dict[str, type[_Action]] = {
    "insert": _Set,
    "update": _Set,
    "upsert": _Set,
    "delete": _Delete,
    "hash": _Hash,
    "extract": _Extract,
    "convert": _Convert,
}


class AttrProc:
    """The actions of one processor, applied in order (config validated first:
    see :func:`~sluice.collector.internal.attraction.config.action_problems`)."""

    def __init__(self, actions: Sequence[ActionConfig]):
        self.actions = [_KINDS[action.kind](action) for action in actions]
        needed = _needed_keys(actions)
        self.holds_needed_key = (
            re.compile(b"|".join(map(re.escape, needed))).search if needed else None
        )
        """Finds, in a serialized message, one of the keys an attribute list
        must hold for any action to change it (a key is in the bytes as
        written); None when an action can act without them."""
        self.from_client = [
            action for action in self.actions if isinstance(action, _Set) and action.from_context
        ]
        """The actions whose value comes from the client."""

    def read_client(self) -> None:
        """Take the ``from_context`` values from the current client: called
        once per request, before its items are processed."""
        if self.from_client:
            info = client.current()
            for action in self.from_client:
                action.read_client(info)

    def apply(self, attrs: AttributeMap) -> bool:
        """Apply every action to one attribute list; True if it changed."""
        changed = False
        for action in self.actions:
            if action.apply(attrs):
                changed = True
        return changed

    def process(self, kvs: Any) -> bool:
        """Apply every action to a ``repeated KeyValue`` field."""
        return self.apply(AttributeMap(kvs))


def _needed_keys(actions: Sequence[ActionConfig]) -> tuple[bytes, ...]:
    needed = []
    for action in actions:
        if action.kind in ("insert", "upsert") or (action.pattern and action.kind != "extract"):
            return ()
        needed.append(action.key.encode())
    return tuple(dict.fromkeys(needed))
