"""``orch explain "<command>"``: how the shell analyzer judged a command, and what the pipeline would decide.

Prints the analysis (kind, risks, writes, deletes, secrets, reasons) and the verdict the pre-hooks would give a
``Bash`` call with this command for a session (``--session``, a prefix works; default ``$ORCH_SESSION_ID`` or
``default``) or a declared intent (``--intent``), as a dry run: nothing is written or filed, nothing waits.

By default the call is judged as a host that runs the kernel sandbox would send it (Claude Code's, Codex's and
Gemini CLI's hooks, the reference loop): a command whose only risk is running code is then allowed, sandboxed.
``--no-sandbox`` judges it as a host that cannot (Cursor), where the approval channel decides instead.
"""

from __future__ import annotations

import argparse
import os
from typing import Any

from orchestrator.commands import add_workspace_arg, resolve_session, workspace_of
from orchestrator.core.output import json_out, out


def register(parser: argparse.ArgumentParser) -> None:
    add_workspace_arg(parser)
    parser.add_argument("shell_command", metavar="COMMAND", help="the shell command, quoted as one argument")
    parser.add_argument("--session", default=None, help="session id or prefix (default: $ORCH_SESSION_ID)")
    parser.add_argument("--intent", default=None, help="judge as if this intent were selected")
    parser.add_argument("--cwd", default=None, help="the command's working directory (default: the workspace)")
    parser.add_argument("--no-sandbox", action="store_true",
                        help="judge as a host that cannot run the kernel sandbox (Cursor)")
    parser.add_argument("--json", action="store_true", help="print analysis and verdict as JSON")


def run(args: argparse.Namespace) -> int:
    from orchestrator.commands.check import describe, dry_run_governor
    from orchestrator.engine.tools import to_call

    ws = workspace_of(args)
    session = resolve_session(ws, args.session or os.environ.get("ORCH_SESSION_ID"))
    gov, channel = dry_run_governor(ws)
    call = to_call("Bash", {"command": args.shell_command}, session_id=session, agent="cli",
                   intent_id=args.intent, cwd=os.path.abspath(args.cwd) if args.cwd else str(ws.root))
    verdict = gov.pre(call, sandbox=not args.no_sandbox)
    sh = call.shell
    analysis: dict[str, Any] = {
        "kind": sh.kind if sh else "?", "risks": sorted(sh.risks) if sh else [],
        "writes": list(sh.writes) if sh else [], "deletes": list(sh.deletes) if sh else [],
        "secrets": [{"path": p, "pattern": pat, "how": how} for p, pat, how in (sh.secrets if sh else ())],
        "unresolved": bool(sh and sh.unresolved), "reasons": list(sh.reasons) if sh else [],
        "targets": list(call.resolved),
    }
    intent = args.intent or gov.sessions.get(session).get("intent_id")
    if args.json:
        json_out({"command": args.shell_command, "session": session, "intent": intent, "analysis": analysis,
                  "verdict": verdict.to_dict(), "channel": channel})
        return 0 if verdict.allowed else 2
    out(f"command:  {args.shell_command}")
    out(f"kind:     {analysis['kind']}" + ("  (a target could not be resolved)" if analysis["unresolved"] else ""))
    out(f"risks:    {', '.join(analysis['risks']) or '-'}")
    out(f"writes:   {', '.join(analysis['writes']) or '-'}")
    out(f"deletes:  {', '.join(analysis['deletes']) or '-'}")
    if analysis["secrets"]:
        verbs = {"read": "reads", "copy": "copies", "send": "sends"}
        out("secrets:  " + ", ".join(f"{verbs.get(str(s['how']), s['how'])} {s['path']} ({s['pattern']})"
                                     for s in analysis["secrets"]))
    for i, reason in enumerate(analysis["reasons"]):
        out(("reasons:  " if i == 0 else "          ") + reason)
    out(f"session:  {session}   intent: {intent or '(none selected)'}   approval channel: {channel}")
    for line in _sandbox_lines(args, verdict, gov.policy):
        out(line)
    for line in describe(verdict, channel, "verdict"):
        out(line)
    return 0 if verdict.allowed else 2


def _sandbox_lines(args: argparse.Namespace, verdict: Any, policy: Any) -> list[str]:
    """What the kernel sandbox does with the command: writable set, unreadable secrets, environment not inherited."""
    sb = verdict.sandbox
    if args.no_sandbox:
        return ["sandbox:  not used (--no-sandbox: judged as a host that cannot run it)"]
    if sb is None:
        return ["sandbox:  no: runs unwrapped (git porcelain that writes .git, or a bare cd: orchestrator.sandbox."
                "exempt)"] if verdict.allowed else []
    if not sb.get("enabled"):
        return [f"sandbox:  no: {sb.get('reason') or 'not available'}"]
    from orchestrator.sandbox.envpolicy import dropped_by

    what = "the intent's scope" if sb.get("workspace") == "scope" else "nothing in the workspace (read plan)"
    lines = [f"sandbox:  yes: runs in the kernel sandbox; writes {what}; writable: "
             + (", ".join(str(w) for w in sb.get("writable") or ()) or "-")]
    patterns = sb.get("secret_patterns") or {}
    if patterns:
        lines.append("          unreadable: " + ", ".join(f"{p} ({pat})" for p, pat in patterns.items()))
    from orchestrator.sandbox import network

    lines += _env_lines(dropped_by(policy, os.environ))
    lines.append("          network: " + network.explain(sb.get("network"), str(workspace_of(args).run_dir)))
    return lines


def _env_lines(dropped: dict[str, str]) -> list[str]:
    """This shell's variables a sandboxed command would not inherit, grouped by why (names only, never values)."""
    if not dropped:
        return ["          environment not inherited: - (every variable of this shell is on the allow-list)"]
    groups: dict[str, list[str]] = {}
    for name, why in sorted(dropped.items()):
        head, _, detail = why.partition(" (")
        detail = detail[:-1]  # the closing parenthesis of the partition's opening one
        if why.startswith("name matches"):
            head, detail = "kept name, but it matches sandbox.env_scrub", why.rsplit(" ", 1)[1]
        groups.setdefault(head, []).append(f"{name} ({detail})" if detail else name)
    lines = ["          environment not inherited (names only; sandbox.env_keep keeps more):"]
    for head, names in groups.items():
        lines.append(f"            {head}: " + ", ".join(names))
    return lines
