"""The collector process's own metrics, as upstream's service registers them
(``otelcol_process_*``), read at scrape time.

Upstream's ``runtime`` metrics describe Go's heap; here they describe the C
heap Python allocates from (glibc's ``mallinfo2``; 0 where it is missing):
bytes in use, bytes obtained from the OS, and a cumulative count of
allocated bytes that adds up the growth of the bytes in use between reads
(a lower bound: what was allocated and freed between two scrapes is not
seen).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator

from prometheus_client.metrics_core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from sluice.heap import c_heap, resident_bytes


def _resident_bytes() -> int:
    """The process's resident set size (0 when ``/proc`` cannot tell)."""
    try:
        return resident_bytes()
    except (OSError, IndexError, ValueError):
        return 0


class ProcessMetrics(Collector):
    """``otelcol_process_{uptime,cpu_seconds,memory_rss,runtime_*}`` with
    upstream's names and descriptions."""

    def __init__(self) -> None:
        self.started = time.monotonic()
        self._lock = threading.Lock()
        self._in_use = 0
        self._allocated = 0

    def _heap(self) -> tuple[int, int, int]:
        """(bytes in use, bytes from the OS, cumulative bytes allocated)."""
        heap = c_heap()
        if heap is None:
            return 0, 0, 0
        in_use, from_os = heap
        with self._lock:
            self._allocated += max(in_use - self._in_use, 0)
            self._in_use = in_use
            allocated = self._allocated
        return in_use, from_os, allocated

    def collect(self) -> Iterator[Metric]:
        times = os.times()
        in_use, from_os, allocated = self._heap()
        yield CounterMetricFamily(
            "otelcol_process_uptime",
            "Uptime of the process [alpha]",
            value=time.monotonic() - self.started,
        )
        yield GaugeMetricFamily(
            "otelcol_process_runtime_heap_alloc_bytes",
            "Bytes of allocated heap objects (see 'go doc runtime.MemStats.HeapAlloc') [alpha]",
            value=in_use,
        )
        yield CounterMetricFamily(
            "otelcol_process_runtime_total_alloc_bytes",
            "Cumulative bytes allocated for heap objects"
            " (see 'go doc runtime.MemStats.TotalAlloc') [alpha]",
            value=allocated,
        )
        yield GaugeMetricFamily(
            "otelcol_process_runtime_total_sys_memory_bytes",
            "Total bytes of memory obtained from the OS (see 'go doc runtime.MemStats.Sys') [alpha]",
            value=from_os,
        )
        yield CounterMetricFamily(
            "otelcol_process_cpu_seconds",
            "Total CPU user and system time in seconds [alpha]",
            value=times.user + times.system,
        )
        yield GaugeMetricFamily(
            "otelcol_process_memory_rss",
            "Total physical memory (resident set size) [alpha]",
            value=_resident_bytes(),
        )
