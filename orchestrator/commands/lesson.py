"""``orch lesson add TEXT [--intent ID]``: append a lesson to AGENTS.md."""

from __future__ import annotations

import argparse

from orchestrator.commands import add_workspace_arg, workspace_of
from orchestrator.core.output import out
from orchestrator.engine.pipeline import Governor


def register(parser: argparse.ArgumentParser) -> None:
    add_workspace_arg(parser)
    parser.add_argument("action", choices=("add",))
    parser.add_argument("text")
    parser.add_argument("--intent", default=None, help="tag the lesson with an intent id")


def run(args: argparse.Namespace) -> int:
    added = Governor(workspace_of(args)).record_lesson(args.text, args.intent)
    out("lesson recorded in AGENTS.md" if added else "lesson already present; nothing changed")
    return 0
