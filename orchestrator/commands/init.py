"""``orch init [DIR]``: create ``.orchestration/`` (idempotent, never overwrites)."""

from __future__ import annotations

import argparse
import os

from orchestrator import workspace
from orchestrator.output import out


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("directory", nargs="?", default=".", help="repository root (default: .)")


def run(args: argparse.Namespace) -> int:
    created = workspace.init(args.directory)
    root = os.path.realpath(args.directory)
    if not created:
        out(f"{root}: already initialised, nothing changed")
        return 0
    for path in created:
        out(f"created {os.path.relpath(path, root)}")
    out("next: edit .orchestration/active_intents.yaml, then `orch install claude-code` (or wrap your loop)")
    return 0
