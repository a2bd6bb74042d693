"""The event loop Edge and the collector serve on (sluice.transport.loop)."""

from __future__ import annotations

import asyncio
import sys

import uvloop

from sluice.transport import loop


def test_serving_loop_is_uvloop_with_a_one_millisecond_switch_interval() -> None:
    async def seen() -> tuple[type, float]:
        return type(asyncio.get_running_loop()), sys.getswitchinterval()

    before = sys.getswitchinterval()
    try:
        kind, interval = loop.run(seen())
    finally:
        sys.setswitchinterval(before)
    assert kind is uvloop.Loop
    assert interval == loop.SWITCH_INTERVAL_S == 0.001
