"""``orch refusals``: the calls the pre-hooks refused or put to a person (``.orchestration/run/refusals.jsonl``)."""

from __future__ import annotations

import argparse
import textwrap
from collections import deque
from typing import Any

from orchestrator.commands import add_workspace_arg, workspace_of
from orchestrator.core.output import json_out, out
from orchestrator.state.refusals import read


def register(parser: argparse.ArgumentParser) -> None:
    add_workspace_arg(parser)
    parser.add_argument("--session", metavar="ID", help="only this session (a prefix of its id works)")
    parser.add_argument("--type", dest="kind", metavar="TYPE", help="only this error type (e.g. scope-violation)")
    parser.add_argument("-n", "--limit", type=int, default=20, help="the most recent N (0: all; default 20)")
    parser.add_argument("--json", action="store_true", help="print them as a JSON list")


def run(args: argparse.Namespace) -> int:
    ws = workspace_of(args)
    rows: deque[dict[str, Any]] = deque(maxlen=args.limit or None)
    for entry in read(ws.run_dir):
        if args.session and not str(entry.get("session_id") or "").startswith(args.session):
            continue
        if args.kind and entry.get("type") != args.kind:
            continue
        rows.append(entry)
    if args.json:
        json_out(list(rows))
        return 0
    if not rows:
        out("no refusals logged" + (" for this filter" if args.session or args.kind else ""))
        return 0
    for e in rows:
        sid = str(e.get("session_id") or "-")
        sid = sid if len(sid) <= 12 else sid[:8] + "…"
        what = e.get("command") or " ".join(map(str, e.get("targets") or [])) or ""
        out(f"{str(e.get('ts', ''))[:19].replace('T', ' ')} {str(e.get('decision', '')).upper()} "
            f"{e.get('type', '?')} ({e.get('hook', '?')}) {e.get('tool', '?')} session {sid}")
        for line in textwrap.wrap(f"{what}", 76)[:3]:
            out(f"    $ {line}" if e.get("command") else f"    {line}")
        for line in textwrap.wrap(str(e.get("message", "")), 76)[:4]:
            out(f"    {line}")
    return 0
