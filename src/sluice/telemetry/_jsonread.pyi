"""Types of the C extension built from _jsonread.c (see sluice.telemetry.otlp_json)."""

from collections.abc import Callable, Sequence
from typing import Any

MAX_KEYS: int
_Scanner = tuple[Callable[[Any], tuple[int, ...]], dict[Any, tuple[int, ...]] | None]

class Reader:
    def __init__(
        self,
        body: _Scanner | None,
        plain: tuple[tuple[str, Callable[[Any], tuple[int, ...]], dict[Any, Any] | None], ...],
        getters: tuple[
            tuple[Callable[[Any], Any], Callable[[Any], tuple[int, ...]], dict[Any, Any] | None],
            ...,
        ],
        multi: tuple[
            tuple[Callable[[Any], Any], Callable[[Any], tuple[int, ...]], dict[Any, Any] | None],
            ...,
        ],
        attributes: str | Callable[[Any], Any] | None,
        index: dict[str, _Scanner | tuple[None, Any]],
        nested: Callable[[Any, Any], tuple[int, ...]],
        present: object,
        body_matcher: Any = None,
    ) -> None: ...
    def read(
        self, records: Sequence[Any], prefix: tuple[int, ...] = ()
    ) -> list[tuple[int, ...] | None]: ...
