"""``orch intents``: the intents and their lifecycle — list, show (with the summary of what was done), new, edit,
done, archive, and the agents' proposals (accept / reject).

    orch intents [list] [--all] [--json]          the intents (validates the file); --all adds the archived ones
    orch intents show ID [--context] [--json]     fields + summary: records, files, lines, commits, approvals, lessons
    orch intents new NAME --scope GLOB... [--constraint C]... [--criterion A]... [--owner O] [--description D]
                                                  a new intent (IN_PROGRESS unless --status), the next free id
    orch intents edit ID [--name N] [--scope G]... [--add-scope G]... [--drop-scope G]... [--constraint C]...
                         [--criterion A]... [--owner O] [--description D] [--status S]
    orch intents done ID [--status COMPLETED|CANCELLED|ABANDONED]     finish it; prints its summary
    orch intents archive ID... | --finished       move finished intents to .orchestration/archived_intents.yaml
    orch intents accept PROPOSAL_ID [edits as for edit]               accept an agent's proposed intent
    orch intents reject PROPOSAL_ID --reason R    reject it; the agent reads the reason

Writes go through :class:`orchestrator.config.intentstore.IntentStore` (validated like ``orch validate``, comments
and formatting kept, atomic, under a lock).
"""

from __future__ import annotations

import argparse
from typing import Any

from orchestrator.config import intents as _intents
from orchestrator.commands import add_workspace_arg, workspace_of
from orchestrator.core.errors import UsageError
from orchestrator.core.output import json_out, out

_LISTS = (("scope", "owned_scope", "GLOB", "a glob of the files the intent may change (repeat; replaces the list)"),
          ("constraint", "constraints", "TEXT", "a constraint (repeat; replaces the list; \"\" clears it)"),
          ("criterion", "acceptance_criteria", "TEXT", "an acceptance criterion (repeat; replaces the list)"))


def _json_flag(p: argparse.ArgumentParser, *, sub: bool) -> None:
    p.add_argument("--json", action="store_true", default=argparse.SUPPRESS if sub else False,
                   help="machine-readable output")


def _field_flags(p: argparse.ArgumentParser, *, edit: bool) -> None:
    if edit:
        p.add_argument("--name", help="the intent's name")
    for flag, dest, meta, text in _LISTS:
        p.add_argument(f"--{flag}", dest=dest, action="append", metavar=meta, help=text)
    if edit:
        p.add_argument("--add-scope", action="append", default=[], metavar="GLOB", help="add a glob to owned_scope")
        p.add_argument("--drop-scope", action="append", default=[], metavar="GLOB",
                       help="remove a glob from owned_scope")
    p.add_argument("--owner", help="who is responsible (a name or handle)")
    p.add_argument("--description", help="free text: what and why")


def register(parser: argparse.ArgumentParser) -> None:
    parser.description = __doc__
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    add_workspace_arg(parser)
    _json_flag(parser, sub=False)
    parser.add_argument("--all", action="store_true", default=False, help="include archived intents")
    verbs = parser.add_subparsers(dest="verb", metavar="VERB")
    parser.set_defaults(verb=None)
    lp = verbs.add_parser("list", help="the intents (default)")
    lp.add_argument("--all", action="store_true", default=argparse.SUPPRESS, help="include archived intents")
    sp = verbs.add_parser("show", help="an intent's fields and the summary of what was done under it")
    sp.add_argument("intent_id")
    sp.add_argument("--context", action="store_true", help="print the <intent_context> an agent receives")
    np = verbs.add_parser("new", help="create an intent (IN_PROGRESS unless --status)")
    np.add_argument("name")
    _field_flags(np, edit=False)
    np.add_argument("--status", default="IN_PROGRESS", help="PENDING, IN_PROGRESS, ... (default IN_PROGRESS)")
    np.add_argument("--id", dest="new_id", help="the id (default: the next free one, e.g. INT-004)")
    ep = verbs.add_parser("edit", help="change an intent's fields")
    ep.add_argument("intent_id")
    _field_flags(ep, edit=True)
    ep.add_argument("--status", help="the new status")
    dp = verbs.add_parser("done", help="finish an intent (COMPLETED) and print its summary")
    dp.add_argument("intent_id")
    dp.add_argument("--status", default="COMPLETED", choices=("COMPLETED", "CANCELLED", "ABANDONED"))
    ap = verbs.add_parser("archive", help="move finished intents to archived_intents.yaml")
    ap.add_argument("intent_ids", nargs="*", metavar="ID")
    ap.add_argument("--finished", action="store_true", help="every COMPLETED, CANCELLED or ABANDONED intent")
    acc = verbs.add_parser("accept", help="accept an agent's proposed intent (optionally edited)")
    acc.add_argument("proposal_id")
    _field_flags(acc, edit=True)
    rej = verbs.add_parser("reject", help="reject an agent's proposed intent")
    rej.add_argument("proposal_id")
    rej.add_argument("--reason", required=True, help="why; the agent reads it")
    for p in verbs.choices.values():
        p.add_argument("-C", "--workspace", metavar="DIR", default=argparse.SUPPRESS,
                       help="workspace root (default: nearest parent with .orchestration/)")
        _json_flag(p, sub=True)


def as_dict(i: _intents.CompiledIntent) -> dict[str, object]:
    return {"id": i.id, "name": i.name, "status": i.status, "owned_scope": list(i.owned_scope),
            "constraints": list(i.constraints), "acceptance_criteria": list(i.acceptance_criteria),
            "description": i.description}


def run(args: argparse.Namespace) -> int:
    verb = args.verb or "list"
    return _VERBS[verb](args)


def cmd_list(args: argparse.Namespace) -> int:
    ws = workspace_of(args)
    loaded = _intents.load(ws.intents_file)
    items: list[dict[str, Any]] = [as_dict(i) for i in loaded]
    if args.all:
        from orchestrator.config.intentstore import IntentStore

        items += [{**a, "archived": True} for a in IntentStore(ws).archived()]
    if args.json:
        json_out(items)
        return 0
    if not items:
        out(f"no intents in {ws.intents_file}")
        return 0
    width = max(len(str(i["id"])) for i in items)
    for i in items:
        mark = "  (archived)" if i.get("archived") else ""
        out(f"{i['id']:<{width}}  {i['status']:<11}  {i['name']}  [{', '.join(i['owned_scope'])}]{mark}")
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    ws = workspace_of(args)
    if args.context:
        intent = _intents.load(ws.intents_file).get(args.intent_id)
        if intent is None:
            raise UsageError(f"no active intent {args.intent_id!r}", hint="`orch intents` lists them")
        from orchestrator.post import lessons

        out(_intents.render_context(intent, lessons.relevant(ws.agents_md, intent.id)))
        return 0
    _print_summary(ws, args.intent_id, args.json)
    return 0


def _print_summary(ws: Any, intent_id: str, as_json: bool) -> None:
    from orchestrator.views.intentsummary import render, summarize

    summary = summarize(ws, intent_id)
    if as_json:
        json_out(summary.to_dict())
    else:
        for line in render(summary):
            out(line)


def _store(args: argparse.Namespace) -> Any:
    from orchestrator.config.intentstore import IntentStore

    return IntentStore(workspace_of(args))


def _texts(values: list[str] | None) -> list[str] | None:
    """A repeated flag's values; None when not given (an empty string clears the list)."""
    return None if values is None else [v for v in values if v.strip()]


def _fields(args: argparse.Namespace) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    for key in ("name", "owner", "description", "status"):
        value = getattr(args, key, None)
        if value is not None:
            fields[key] = value
    for _, dest, _, _ in _LISTS:
        value = _texts(getattr(args, dest, None))
        if value is not None:
            fields[dest] = value
    return fields


def cmd_new(args: argparse.Namespace) -> int:
    fields = {**_fields(args), "name": args.name}
    if not fields.get("owned_scope"):
        raise UsageError("a new intent needs at least one --scope GLOB",
                         hint="e.g. --scope 'src/auth/**' --scope 'tests/auth/**'")
    intent = _store(args).create(fields, intent_id=args.new_id)
    _done(args, intent, f"created {intent['id']} ({intent['status']}): {intent['name']}")
    return 0


def _scope_edits(args: argparse.Namespace, current: list[str], fields: dict[str, Any]) -> None:
    if args.add_scope or args.drop_scope:
        scope = list(fields.get("owned_scope", current))
        scope += [g for g in args.add_scope if g not in scope]
        missing = [g for g in args.drop_scope if g not in scope]
        if missing:
            raise UsageError(f"not in owned_scope: {', '.join(missing)}", hint=f"owned_scope: {', '.join(scope)}")
        fields["owned_scope"] = [g for g in scope if g not in args.drop_scope]


def cmd_edit(args: argparse.Namespace) -> int:
    store = _store(args)
    fields = _fields(args)
    current = next((i for i in store.read().active.intents() if str(i.get("id")) == args.intent_id), None)
    if current is None:
        raise UsageError(f"no active intent {args.intent_id!r}", hint="`orch intents` lists them")
    _scope_edits(args, list(current.get("owned_scope") or []), fields)
    if not fields:
        raise UsageError("nothing to change", hint="give --name, --scope, --status, ... (`orch intents edit -h`)")
    intent = store.edit(args.intent_id, fields)
    _done(args, intent, f"updated {args.intent_id}: {', '.join(sorted(fields))}")
    return 0


def cmd_done(args: argparse.Namespace) -> int:
    intent = _store(args).finish(args.intent_id, args.status)
    if args.json:
        from orchestrator.views.intentsummary import summarize

        json_out(summarize(workspace_of(args), args.intent_id).to_dict())
        return 0
    out(f"{args.intent_id} is {intent['status']}")
    _print_summary(workspace_of(args), args.intent_id, False)
    return 0


def cmd_archive(args: argparse.Namespace) -> int:
    from orchestrator.config.intentstore import FINISHED, normal_status

    store = _store(args)
    ids = list(args.intent_ids)
    if args.finished:
        ids += [str(i.get("id")) for i in store.read().active.intents() if normal_status(i.get("status")) in FINISHED]
    if not ids:
        raise UsageError("which intents?", hint="give their ids, or --finished for every finished one")
    done = store.archive(ids)
    if args.json:
        json_out({"archived": done})
    else:
        out(f"archived {', '.join(done)} to .orchestration/archived_intents.yaml" if done else "nothing to archive")
    return 0


def _decider(args: argparse.Namespace) -> Any:
    from orchestrator.approvals import Broker

    return Broker(workspace_of(args).shared_run_dir)


def cmd_accept(args: argparse.Namespace) -> int:
    from orchestrator.approvals import proposal

    broker = _decider(args)
    edits = {k: v for k, v in _fields(args).items() if k in proposal.EDITABLE}
    if args.add_scope or args.drop_scope:
        request = broker.load(args.proposal_id)
        _scope_edits(args, list((request.proposal or {}).get("owned_scope") or []), edits)
    data = proposal.accept(broker, args.proposal_id, edits, by="cli")
    if args.json:
        json_out(data)
    else:
        out(f"accepted {args.proposal_id}" + (f" with {', '.join(sorted(edits))} changed" if edits else "")
            + ": the waiting agent's session writes the intent and selects it")
    return 0


def cmd_reject(args: argparse.Namespace) -> int:
    from orchestrator.approvals import proposal

    data = proposal.reject(_decider(args), args.proposal_id, args.reason, by="cli")
    if args.json:
        json_out(data)
    else:
        out(f"rejected {args.proposal_id}: {data['reason']}")
    return 0


def _done(args: argparse.Namespace, intent: dict[str, Any], message: str) -> None:
    if args.json:
        json_out(intent)
    else:
        out(message)


_VERBS = {"list": cmd_list, "show": cmd_show, "new": cmd_new, "edit": cmd_edit, "done": cmd_done,
          "archive": cmd_archive, "accept": cmd_accept, "reject": cmd_reject}
