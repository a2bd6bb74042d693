"""Types of the C extension built from _lean.c (see sluice.telemetry.otlp_lean)."""

from collections.abc import Callable, Sequence
from typing import Any

_Scan = Callable[[bytes], tuple[int, ...]] | None

class Reader:
    def __init__(
        self,
        tags: bytes,
        body: _Scan,
        severity_text: _Scan,
        event_name: _Scan,
        keys: tuple[bytes, ...],
        attribute: _Scan,
        body_matcher: Any = None,
    ) -> None: ...
    def read(
        self, records: Sequence[bytes], prefix: tuple[int, ...] = ()
    ) -> list[tuple[int, ...] | None]: ...
