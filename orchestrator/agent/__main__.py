"""``python -m orchestrator.agent "TASK"``: run the reference loop on a workspace.

The model is a real one when ``ANTHROPIC_API_KEY`` or ``OPENAI_API_KEY`` is set (see
:func:`orchestrator.agent.providers.from_env`), or a YAML script with ``--script``. Destructive
commands are put to you on the terminal (``y`` to approve); without a terminal they are refused.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from orchestrator.agent.loop import AgentLoop, ApprovalDecision, ApprovalQuestion, LoopEvent
from orchestrator.agent.providers import from_env
from orchestrator.config.workspace import find_workspace

if TYPE_CHECKING:
    from orchestrator.agent.providers import Provider


def _ask_on_terminal(request: ApprovalQuestion) -> ApprovalDecision:
    reasons = "; ".join(request.reasons)
    answer = input(f"approve `{request.summary}` ({reasons})? [y/N] ").strip().lower()
    return ApprovalDecision(answer in ("y", "yes"), "approved on the terminal" if answer in ("y", "yes")
                            else "refused on the terminal", by="you")


def _print(ev: LoopEvent) -> None:
    if ev.type in ("model", "answer") and ev.text:
        print(f"model: {ev.text}")
    elif ev.type == "call":
        print(f"  -> {ev.tool} {ev.input}")
    elif ev.type == "result":
        text = (ev.content or "").strip().splitlines()
        print(f"     {'ERROR ' if ev.is_error else ''}{text[0] if text else ''}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m orchestrator.agent", description=__doc__.splitlines()[0])
    parser.add_argument("task", help="what the agent should do")
    parser.add_argument("-C", "--workspace", default=None, help="workspace root (default: found from the cwd)")
    parser.add_argument("--session", default="loop", help="orchestrator session id")
    parser.add_argument("--script", default=None, help="replay this YAML script instead of calling a model")
    parser.add_argument("--max-turns", type=int, default=25)
    args = parser.parse_args(argv)
    if args.script:
        from orchestrator.agent.providers.scripted import ScriptedProvider

        provider: Provider = ScriptedProvider.from_yaml(args.script)
    else:
        found = from_env()
        if found is None:
            print("no model: set ANTHROPIC_API_KEY or OPENAI_API_KEY, or pass --script FILE", file=sys.stderr)
            return 2
        provider = found
    from orchestrator.engine.pipeline import Governor

    gov = Governor(find_workspace(args.workspace))
    loop = AgentLoop(gov, provider, session_id=args.session, max_turns=args.max_turns, on_event=_print,
                     approver=_ask_on_terminal if sys.stdin.isatty() else None)
    result = loop.run(args.task)
    return 0 if result.stopped == "answer" else 1


if __name__ == "__main__":
    raise SystemExit(main())
