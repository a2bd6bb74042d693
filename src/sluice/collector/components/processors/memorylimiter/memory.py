"""How much memory the process uses and how much it may have."""

from __future__ import annotations

from pathlib import Path

MIB = 1 << 20
_CGROUP_LIMITS = (
    Path("/sys/fs/cgroup/memory.max"),  # cgroup v2
    Path("/sys/fs/cgroup/memory/memory.limit_in_bytes"),  # cgroup v1
)
_UNLIMITED_V1 = 1 << 62
"""cgroup v1 writes "no limit" as a huge page-rounded number."""


def total_memory() -> int:
    """The memory the process may use: the cgroup's limit when one is set
    (even above the machine's, as upstream), else the machine's
    (``MemTotal``). Raises OSError when neither is known."""
    for path in _CGROUP_LIMITS:
        try:
            text = path.read_text().strip()
        except OSError:
            continue
        if text.isdigit() and int(text) < _UNLIMITED_V1:
            return int(text)
    total = _mem_total()
    if not total:
        raise OSError("neither a cgroup memory limit nor MemTotal in /proc/meminfo")
    return total


def _mem_total() -> int:
    try:
        with open("/proc/meminfo") as meminfo:
            for line in meminfo:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0
