"""Run an agent CLI as its own process group, timed, and leave nothing behind when it overruns.

Qwen Code relaunches itself as a child node process and Cline runs a plugin subprocess: ``subprocess.run``'s timeout
kills only the direct child and would leave the others running (and answering a fake API that is gone) on a loaded
CI machine. Here a timeout kills the whole group, then raises as ``subprocess.run`` does.
"""
from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Sequence

from tests.e2e.claude_cli import CLI_TIMINGS


def run_cli(args: Sequence[str], *, cwd: Path, env: dict[str, str], label: str, input: str = "",
            timeout: float = 240) -> subprocess.CompletedProcess:
    """``args`` in ``cwd`` with ``env``, ``input`` on stdin; its wall time is added to the e2e summary."""
    start = time.perf_counter()
    proc = subprocess.Popen(list(args), cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = proc.communicate(input, timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        raise subprocess.TimeoutExpired(proc.args, timeout, out, err) from None
    finally:
        CLI_TIMINGS.append((label, time.perf_counter() - start))
        try:  # whatever the CLI left running in its group (a plugin host, a relaunched child)
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
