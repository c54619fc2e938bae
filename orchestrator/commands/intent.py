"""``orch intent select ID --session SID``: select an intent for a session (humans, scripts); it always says which
session it selected for (without ``--session``: ``default``, which no agent hook session shares)."""

from __future__ import annotations

import argparse

from orchestrator.commands import add_workspace_arg, workspace_of
from orchestrator.core.output import err, out
from orchestrator.engine.pipeline import Governor

#: the session of in-process Python callers that name none (``Governor.select_intent``'s default)
DEFAULT_SESSION = "default"


def register(parser: argparse.ArgumentParser) -> None:
    add_workspace_arg(parser)
    parser.add_argument("action", choices=("select",))
    parser.add_argument("intent_id")
    parser.add_argument("--session", default=None,
                        help="the session id to select for (an agent's session: see `orch status`); without it, "
                             "the 'default' session, which only in-process Python callers use")


def run(args: argparse.Namespace) -> int:
    session = args.session if args.session is not None else DEFAULT_SESSION
    context = Governor(workspace_of(args)).select_intent(args.intent_id, session)
    if args.session is None:
        # an agent's hook calls carry their own session ids: a selection for 'default' never reaches them
        err(f"orch: selected {args.intent_id} for session {DEFAULT_SESSION!r} (in-process Python callers that "
            f"pass no session id); an agent's session is not affected: pass --session <id> (see `orch status`)")
    else:
        err(f"orch: selected {args.intent_id} for session {session!r}")
    out(context)
    return 0
