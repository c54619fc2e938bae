"""``orch check``: dry-run one tool call through the pre-hooks and print the verdict.

The call comes as JSON on stdin (``{"tool": "Write", "input": {...}, "session_id": ...}``) or from
flags (``--tool Write --path src/a.py`` / ``--command 'rm -rf x'``). Exit 0 on allow, 2 otherwise,
so scripts can branch on it. Nothing is written.
"""

from __future__ import annotations

import argparse
import json
import sys

from orchestrator.commands import add_workspace_arg, workspace_of
from orchestrator.errors import UsageError
from orchestrator.output import json_out, out
from orchestrator.pipeline import Governor
from orchestrator.tools import to_call


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


def run(args: argparse.Namespace) -> int:
    data = _from_args(args)
    gov = Governor(workspace_of(args))
    tool = str(data.get("tool") or data.get("tool_name"))
    raw_input = data.get("input", data.get("tool_input", {}))
    call = to_call(tool, raw_input if isinstance(raw_input, dict) else {},
                   session_id=str(data.get("session_id") or "default"), agent="cli",
                   intent_id=data.get("intent_id") or None, cwd=data.get("cwd") or None)
    if len(args.path) > 1:
        call.paths = list(args.path)
    verdict = gov.pre(call)
    if args.json:
        json_out({**verdict.to_dict(), "kind": call.kind.value, "targets": call.resolved})
    else:
        out(f"{verdict.decision.upper()}  {tool} {' '.join(call.resolved) or call.command or ''}".rstrip())
        if verdict.error:
            out(f"  {verdict.error['type']} ({verdict.error['hook']}): {verdict.error['message']}")
            out(f"  hint: {verdict.error['hint']}")
    return 0 if verdict.allowed else 2
