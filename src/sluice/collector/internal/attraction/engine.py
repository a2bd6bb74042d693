"""Attribute actions compiled once and applied to one attribute list at a time
(upstream's ``AttrProc``), on protobuf ``repeated KeyValue`` fields.

The list is treated as pdata's ``Map``: reads find a key's first entry, a new
key is appended, and removing an entry moves the last entry into its place
(so attribute order after a delete is upstream's). Values from the config are
``AnyValue`` messages made once; patterns are RE2, compiled once.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from opentelemetry.proto.common.v1.common_pb2 import AnyValue

from sluice.collector.internal.attraction.config import ActionConfig, group_names
from sluice.collector.internal.attraction.values import any_value, convert_value, hash_value
from sluice.policy.regex_dialect import compile_re2


class AttributeMap:
    """A ``repeated KeyValue`` field and its keys (read once), edited in step."""

    __slots__ = ("keys", "kvs")

    def __init__(self, kvs: Any):
        self.kvs = kvs
        self.keys: list[str] = [kv.key for kv in kvs]

    def find(self, key: str) -> int:
        """The index of `key`'s first entry, or -1."""
        return self.keys.index(key) if key in self.keys else -1

    def get(self, key: str) -> Any:
        """`key`'s value (an ``AnyValue``), or None."""
        return self.kvs[self.keys.index(key)].value if key in self.keys else None

    def put_str(self, key: str, text: str) -> None:
        """Set `key` (its first entry, or a new last one) to a string."""
        if key in self.keys:
            self.kvs[self.keys.index(key)].value.string_value = text
        else:
            self.kvs.add(key=key).value.string_value = text
            self.keys.append(key)

    def remove(self, key: str) -> bool:
        """Remove `key`'s first entry, moving the last entry into its place."""
        if key not in self.keys:
            return False
        index = self.keys.index(key)
        last = len(self.keys) - 1
        if index != last:
            self.kvs[index].CopyFrom(self.kvs[last])
            self.keys[index] = self.keys[last]
        del self.kvs[last]
        self.keys.pop()
        return True


class _Action:
    """One compiled action; ``apply`` says whether it changed the list."""

    def __init__(self, config: ActionConfig):
        self.key = config.key

    def apply(self, attrs: AttributeMap) -> bool:
        raise NotImplementedError


class _Set(_Action):
    """insert, update and upsert: the value from the config, another attribute
    or (never, in Sluice) the request context, else ``default_value``."""

    def __init__(self, config: ActionConfig):
        super().__init__(config)
        kind = config.kind
        self.inserts = kind in ("insert", "upsert")
        self.updates = kind in ("update", "upsert")
        self.constant: AnyValue | None = None
        self.default = None if config.default_value is None else any_value(config.default_value)
        self.from_attribute = ""
        if config.value is not None:
            self.constant = any_value(config.value)
        elif config.from_context:
            # Pipeline data carries no client context: the key is never found.
            self.constant = self.default
        elif config.from_attribute:
            self.from_attribute = config.from_attribute
        else:
            self.constant = self.default

    def apply(self, attrs: AttributeMap) -> bool:
        if self.from_attribute:
            source = attrs.find(self.from_attribute)
            if source < 0:
                value: Any = self.default
                if value is None:
                    return False
            else:
                value = attrs.kvs[source].value
        else:
            source = -1
            value = self.constant
            if value is None:
                return False
        target = attrs.find(self.key)
        if target < 0:
            if not self.inserts:
                return False
            attrs.kvs.add(key=self.key).value.CopyFrom(value)
            attrs.keys.append(self.key)
            return True
        if not self.updates or target == source:  # copying a value onto itself
            return False
        attrs.kvs[target].value.CopyFrom(value)
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
        keys = [self.key, *self.matching(attrs)]
        changed = False
        for key in keys:
            value = attrs.get(key)
            if value is not None:
                hash_value(value)
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
        value = attrs.get(self.key)
        if value is None or value.WhichOneof("value") != "string_value":
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
        value = attrs.get(self.key)
        return value is not None and convert_value(value, self.to)


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
        self.context_keys = [a.from_context for a in actions if a.from_context]
        """The ``from_context`` keys: never found (see :func:`warn_about_context`)."""

    def process(self, kvs: Any) -> bool:
        """Apply every action to one ``repeated KeyValue``; True if it changed."""
        attrs = AttributeMap(kvs)
        changed = False
        for action in self.actions:
            if action.apply(attrs):
                changed = True
        return changed


def warn_about_context(actions: AttrProc, logger: logging.Logger) -> None:
    """Say, once at start, that ``from_context`` finds nothing: Sluice's
    pipeline data carries no client metadata or authentication (upstream's
    ``client.Info``), so such an action behaves as upstream's does when the
    key is absent: it sets its ``default_value``, if any, else does nothing."""
    for key in actions.context_keys:
        logger.warning(
            "from_context %r: pipeline data carries no client metadata or auth in Sluice; "
            "the action sets its default_value, if any, and otherwise does nothing",
            key,
        )
