"""One item's ``repeated KeyValue`` attributes as pdata's ``Map``: a key's
first entry is the one read, a new key goes at the end, and removing an entry
moves the last entry into its place (so attribute order after a delete is
upstream's). The keys are read once, when the map is made: reading a
``KeyValue`` through protobuf builds a Python object per entry, the largest
part of an action's cost, so actions and matches of one item share one map.

(A log record's attributes could also be edited as raw ``KeyValue`` bytes;
measured on 1,600-record requests that is no faster, compiled or not: the
keys are then read in Python and edited entries re-encoded.)
"""

from __future__ import annotations

from typing import Any

from opentelemetry.proto.common.v1.common_pb2 import AnyValue


class AttributeMap:
    """A ``repeated KeyValue`` field and its keys, edited in step."""

    __slots__ = ("keys", "kvs")

    def __init__(self, kvs: Any):
        self.kvs = kvs
        self.keys: list[str] = [kv.key for kv in kvs]

    def index(self, key: str) -> int:
        """The index of `key`'s first entry, or -1."""
        keys = self.keys
        return keys.index(key) if key in keys else -1

    def value(self, index: int) -> AnyValue:
        """The value at `index`, to read or edit in place."""
        value: AnyValue = self.kvs[index].value
        return value

    def put(self, target: int, key: str, value: AnyValue) -> None:
        """Give the entry at `target` (-1: a new entry `key`) a copy of `value`."""
        if target < 0:
            self.kvs.add(key=key).value.CopyFrom(value)
            self.keys.append(key)
        else:
            self.kvs[target].value.CopyFrom(value)

    def put_str(self, key: str, text: str) -> None:
        """Set `key` (its first entry, or a new one) to a string."""
        index = self.index(key)
        if index < 0:
            self.kvs.add(key=key).value.string_value = text
            self.keys.append(key)
        else:
            self.kvs[index].value.string_value = text

    def remove(self, key: str) -> bool:
        """Remove `key`'s first entry, moving the last entry into its place."""
        index = self.index(key)
        if index < 0:
            return False
        last = len(self.keys) - 1
        if index != last:
            self.kvs[index].CopyFrom(self.kvs[last])
            self.keys[index] = self.keys[last]
        del self.kvs[last]
        self.keys.pop()
        return True


EMPTY = AttributeMap(())
"""The map of an item without attributes of its own (a metric)."""
