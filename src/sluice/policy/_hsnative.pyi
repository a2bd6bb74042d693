"""Types of the C extension built from _hsnative.c (see sluice.policy.native)."""

from collections.abc import Sequence

class Database:
    def __init__(self, blob: bytes) -> None: ...
    @property
    def size(self) -> int: ...

class Matcher:
    def __init__(
        self,
        shards: Sequence[
            tuple[Database, Sequence[Sequence[int]]]
            | tuple[Database, Sequence[Sequence[int]], Sequence[int] | None]
        ],
    ) -> None: ...
    def scan(self, data: bytes) -> tuple[int, ...]: ...

def load(path: str) -> str: ...
