"""``orch approver``: the people whose passkeys may decide approvals (``.orchestration/approvers``, docs/console.md).

    orch approver add NAME         register a passkey for NAME: prints a one-time link to open in the browser that
                                   holds the passkey; serves the console meanwhile if none runs; waits until done
    orch approver add NAME --no-wait
                                   print the link and return (a console must be running: `orch console`)
    orch approver list             the registered approvers and their credentials
    orch approver remove NAME [--credential ID]
                                   forget NAME's passkeys (or one of them); their signed grants stop matching

The approvers file is a governance file: commit it, review changes to it like code. No agent can write it.
"""

from __future__ import annotations

import argparse
import threading
import time

from orchestrator.commands import add_workspace_arg, workspace_of
from orchestrator.core.errors import UsageError
from orchestrator.core.output import json_out, out


def register(parser: argparse.ArgumentParser) -> None:
    parser.description = __doc__
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    add_workspace_arg(parser)
    parser.add_argument("action", choices=("add", "list", "remove"))
    parser.add_argument("name", nargs="?", help="the approver's name (add, remove)")
    parser.add_argument("--credential", default=None, help="remove: only this credential id")
    parser.add_argument("--port", type=int, default=None, help="add: the port of the console it starts (8470)")
    parser.add_argument("--no-wait", action="store_true", help="add: print the link and return")
    parser.add_argument("--json", action="store_true")


def _list(ws, as_json: bool) -> int:  # type: ignore[no-untyped-def]
    from orchestrator.approvals import approvers

    try:
        found = approvers.load(ws.orch_dir)
    except approvers.ApproversError as exc:
        raise UsageError(exc.message, hint=exc.hint) from None
    rows = [{"name": a.name, "rp_id": a.rp_id, "credential_id": a.credential_id, "added": a.added}
            for a in found.by_credential.values()]
    if as_json:
        json_out(rows)
        return 0
    if not rows:
        out("no approvers registered (orch approver add NAME)")
    for r in rows:
        out(f"{r['name']:<20} {r['rp_id']:<16} {r['credential_id'][:22]}…  {r['added'] or ''}".rstrip())
    return 0


def _wait(ws, token: str) -> int:  # type: ignore[no-untyped-def]
    from orchestrator.web import registration

    pause = threading.Event()
    while True:
        ticket = registration.peek(ws.run_dir, token)
        if ticket.done and (ticket.credential_id or ticket.error):
            if ticket.error:
                raise UsageError(f"registration failed: {ticket.error}", hint="run `orch approver add` again")
            out(f"registered {ticket.name}'s passkey ({(ticket.credential_id or '')[:16]}…) in "
                ".orchestration/approvers; commit it so the team's hooks trust it")
            return 0
        if time.time() >= ticket.expires:
            raise UsageError("the registration link expired before it was used", hint="run `orch approver add` again")
        pause.wait(0.2)


def _add(args: argparse.Namespace, ws) -> int:  # type: ignore[no-untyped-def]
    from orchestrator.web import registration
    from orchestrator.web.server import running

    if not args.name:
        raise UsageError("add: give the approver's name (e.g. `orch approver add alice`)")
    token, ticket = registration.create(ws.run_dir, args.name)
    info = running(ws.run_dir)
    if info is not None:
        link = f"{info['url']}/#register={token}"
        _announce(args.name, link)
        return 0 if args.no_wait else _wait(ws, token)
    if args.no_wait:
        raise UsageError("no console is running for this workspace", hint="start `orch console`, or drop --no-wait")
    from orchestrator.commands.console import origins_for
    from orchestrator.web.console import DEFAULT_PORT, Console
    from orchestrator.web.server import Background

    port = args.port or DEFAULT_PORT
    console = Console(ws, origins=origins_for(port, [], False), port=port)
    with Background(console):
        _announce(args.name, f"{console.url}/#register={token}")
        return _wait(ws, token)


def _announce(name: str, link: str) -> None:
    out(f"open this link in the browser that holds {name}'s passkey (one use, 10 minutes):\n  {link}")


def run(args: argparse.Namespace) -> int:
    ws = workspace_of(args)
    if args.action == "list":
        return _list(ws, args.json)
    if args.action == "add":
        return _add(args, ws)
    from orchestrator.approvals import approvers

    if not args.name:
        raise UsageError("remove: give the approver's name")
    try:
        gone = approvers.remove(ws.orch_dir, args.name, args.credential)
    except (approvers.ApproversError, FileNotFoundError) as exc:
        raise UsageError(f"cannot remove: {getattr(exc, 'message', exc)}") from None
    if not gone:
        raise UsageError(f"no passkey of {args.name!r} is registered", hint="`orch approver list`")
    out(f"removed {gone} passkey(s) of {args.name}; commit .orchestration/approvers")
    return 0
