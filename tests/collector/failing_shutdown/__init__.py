"""Test-only components whose shutdown fails as configured, for what the
service does then (upstream's service tests use stand-in components the same
way): an extension ``failingext`` and a processor ``failingproc``, each with
``shutdown_error`` (raise it) and ``shutdown_hangs`` (never return). A
distribution holding :data:`PACKAGES` loads them."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from sluice.collector.component import ComponentConfig, Consumer, Processor


@dataclass(frozen=True)
class FailingConfig(ComponentConfig):
    shutdown_error: str = ""
    shutdown_hangs: bool = False


class Failing(Processor):
    def __init__(self, config: FailingConfig, next_: Consumer | None = None):
        self.config = config
        self.next = next_

    async def consume(self, data: Any) -> None:
        assert self.next is not None
        await self.next.consume(data)

    async def shutdown(self) -> None:
        if self.config.shutdown_hangs:
            await asyncio.Event().wait()
        if self.config.shutdown_error:
            raise RuntimeError(self.config.shutdown_error)


PACKAGES = (f"{__name__}.extension", f"{__name__}.processor")
"""Importable names, each holding one component's ``FACTORY``."""
