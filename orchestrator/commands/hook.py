"""``orch hook <agent>``: run as an agent's hook — one event as JSON on stdin, the agent's answer on stdout.

This is the in-process path (it imports the engine: ~90 ms). Installed hooks use the faster stdlib-only client
``orchestrator/hookclient.py``, which forwards to ``orch serve`` and falls back to exactly this evaluation.
Exit codes are 0 (answered) or 2 (blocked, reason on stderr) — never 1, which agents treat as "allow".
"""

from __future__ import annotations

import argparse
import sys

from orchestrator.adapters.base import ADAPTERS, run_hook


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("agent", choices=sorted(ADAPTERS), help="the agent whose hook protocol to speak")


def run(args: argparse.Namespace) -> int:
    try:
        raw = sys.stdin.buffer.read()
    except OSError as exc:
        sys.stderr.write(f"orchestrator: cannot read the hook event ({exc}); call blocked\n")
        return 2
    result = run_hook(args.agent, raw)
    if result.stdout:
        sys.stdout.write(result.stdout)
        sys.stdout.flush()
    if result.stderr:
        sys.stderr.write(result.stderr)
    return result.exit_code
