"""``orch intent select ID --session SID``: select an intent for a session (humans, scripts)."""

from __future__ import annotations

import argparse

from orchestrator.commands import add_workspace_arg, workspace_of
from orchestrator.output import out
from orchestrator.pipeline import Governor


def register(parser: argparse.ArgumentParser) -> None:
    add_workspace_arg(parser)
    parser.add_argument("action", choices=("select",))
    parser.add_argument("intent_id")
    parser.add_argument("--session", default="default", help="session id (default: 'default')")


def run(args: argparse.Namespace) -> int:
    context = Governor(workspace_of(args)).select_intent(args.intent_id, args.session)
    out(context)
    return 0
