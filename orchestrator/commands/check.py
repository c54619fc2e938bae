"""``orch check``: dry-run one tool call through the pre-hooks and print the verdict.

The call comes as JSON on stdin (``{"tool": "Write", "input": {...}, "session_id": ...}``) or from
flags (``--tool Write --path src/a.py`` / ``--command 'rm -rf x'``). Exit 0 on allow, 2 otherwise,
so scripts can branch on it. Nothing is written, no approval request is filed and nothing waits: where the
approval channel is ``tui`` the approval stage is dry-run (it says a person would be asked), and refusals are not
logged. ``--session`` accepts a prefix of a session id.
"""

from __future__ import annotations

import argparse
import json
import sys

from orchestrator.commands import add_workspace_arg, resolve_session, workspace_of
from orchestrator.core.errors import UsageError
from orchestrator.core.output import json_out, out
from orchestrator.engine.pipeline import Governor
from orchestrator.engine.tools import to_call


def register(parser: argparse.ArgumentParser) -> None:
    add_workspace_arg(parser)
    parser.add_argument("--tool", help="tool name (Write, Edit, Bash, write_file, ...)")
    parser.add_argument("--path", action="append", default=[], help="target path (repeatable)")
    parser.add_argument("--command", dest="shell_command", help="shell command (for Bash-like tools)")
    parser.add_argument("--session", default="default", help="session id")
    parser.add_argument("--intent", default=None, help="declared intent id")
    parser.add_argument("--json", action="store_true", help="print the verdict as JSON")


def _from_args(args: argparse.Namespace) -> dict[str, object]:
    if args.tool:
        tool_input: dict[str, object] = {}
        if args.shell_command is not None:
            tool_input["command"] = args.shell_command
        if args.path:
            tool_input["file_path"] = args.path[0]
            tool_input["path"] = args.path[0]
        return {"tool": args.tool, "input": tool_input, "session_id": args.session, "intent_id": args.intent}
    if sys.stdin.isatty():
        raise UsageError("give --tool (and --path/--command) or a JSON call on stdin")
    try:
        data = json.loads(sys.stdin.read())
    except ValueError as exc:
        raise UsageError(f"stdin is not JSON: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("tool", data.get("tool_name")), str):
        raise UsageError('stdin must be a JSON object with "tool" and "input"')
    return data


def dry_run_governor(ws: object) -> tuple[Governor, str]:
    """A Governor that files nothing and waits for no one, and the approval channel it stands in for."""
    import os

    from orchestrator.pre.approval import CHANNELS

    probe = Governor(ws)  # type: ignore[arg-type]
    env = os.environ.get("ORCH_APPROVAL_CHANNEL")
    channel = (env if env in CHANNELS else "deny") if env else probe.policy.approval.channel
    # `tui` files a request and blocks on a person: ask instead, and say who would be asked
    gov = Governor(ws, approval_channel="agent-ask" if channel == "tui" else channel)  # type: ignore[arg-type]
    gov.record_refusals = False
    return gov, channel


def describe(verdict: object, channel: str, what: str) -> list[str]:
    """Human lines for a verdict: the decision with the call, then the reason, the risk reasons and the hint."""
    decision = verdict.decision.upper()  # type: ignore[attr-defined]
    error = verdict.error or {}  # type: ignore[attr-defined]
    lines = [f"{decision}  {what}".rstrip()]
    if verdict.decision == "ask":  # type: ignore[attr-defined]
        who = "a person in `orch tui`" if channel == "tui" else "the agent's own permission prompt" \
            if channel == "agent-ask" else f"the {channel!r} channel"
        lines[0] += f"   (would be put to {who}; nothing was filed)"
    if error:
        lines.append(f"  why:  {error.get('type')} ({error.get('hook')}): {error.get('message')}")
        for reason in error.get("reasons") or ():
            lines.append(f"        - {reason}")
        if error.get("hint"):
            lines.append(f"  hint: {error['hint']}")
    return lines


def run(args: argparse.Namespace) -> int:
    ws = workspace_of(args)
    args.session = resolve_session(ws, args.session)
    data = _from_args(args)
    gov, channel = dry_run_governor(ws)
    tool = str(data.get("tool") or data.get("tool_name"))
    raw_input = data.get("input", data.get("tool_input", {}))
    call = to_call(tool, raw_input if isinstance(raw_input, dict) else {},
                   session_id=str(data.get("session_id") or "default"), agent="cli",
                   intent_id=data.get("intent_id") or None, cwd=data.get("cwd") or None)
    if len(args.path) > 1:
        call.paths = list(args.path)
    verdict = gov.pre(call)
    if args.json:
        json_out({**verdict.to_dict(), "kind": call.kind.value, "targets": call.resolved, "channel": channel})
    else:
        what = f"{tool}: {call.command}" if call.command else f"{tool} {' '.join(call.resolved)}"
        for line in describe(verdict, channel, what):
            out(line)
    return 0 if verdict.allowed else 2
