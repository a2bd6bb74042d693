"""The console commands: Ctrl-C while a program is still loading ends it at
once, as any Unix command, with no ``KeyboardInterrupt`` traceback."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
SIGINT_BIT = 1 << (signal.SIGINT - 1)


def catches_sigint(pid: int) -> bool | None:
    """Whether the process has a handler for SIGINT (None once it is gone)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    caught = next(line for line in status.splitlines() if line.startswith("SigCgt:"))
    return bool(int(caught.split()[1], 16) & SIGINT_BIT)


@pytest.mark.parametrize(
    "command",
    [
        ["sluice-collector"],
        ["sluice-edge", str(ROOT / "examples/edge/quickstart/config.json")],
        ["sluice", "eval", "--help"],
    ],
    ids=["collector", "edge", "sluice"],
)
def test_ctrl_c_while_loading_ends_the_program_quietly(command: list[str]) -> None:
    # exec gives the program SIGINT's default action unless this process
    # ignores it. No preexec_fn: Python code in a child forked from a process
    # with threads (a pytest-xdist worker's) can deadlock before the exec.
    ignored = signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    if ignored:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        process = subprocess.Popen(
            [str(BIN / command[0]), *command[1:]],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
    finally:
        if ignored:
            signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        # Python's own handler comes first; the command then sets the
        # default action while it imports the program: interrupt it there.
        seen_handler = False
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            caught = catches_sigint(process.pid)
            assert caught is not None, "the program ended before it was interrupted"
            if caught:
                seen_handler = True
            elif seen_handler:
                break
        else:
            pytest.fail("SIGINT never went back to its default action")
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=30)
    finally:
        process.kill()
        process.wait()
    assert process.returncode == -signal.SIGINT
    assert b"Traceback" not in stderr and b"KeyboardInterrupt" not in stderr
