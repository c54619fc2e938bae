"""One module per ``orch`` subcommand, each with ``register(parser)`` and ``run(args) -> int``.

May import: anything in the package (it is the top); each subcommand imports what it needs inside ``run`` so ``orch
--help`` stays cheap.
"""

from __future__ import annotations

import argparse

from orchestrator.config.workspace import Workspace, find_workspace


def add_workspace_arg(parser: argparse.ArgumentParser) -> None:
    """The common ``-C/--workspace`` option."""
    parser.add_argument("-C", "--workspace", metavar="DIR", default=None,
                        help="workspace root (default: nearest parent with .orchestration/)")


def workspace_of(args: argparse.Namespace) -> Workspace:
    """The workspace named by ``-C`` or found from the cwd."""
    return find_workspace(getattr(args, "workspace", None))


def resolve_session(ws: Workspace, value: str | None) -> str:
    """A session id from what a person typed: the id itself, or a unique prefix of a known session's id (ids are
    UUIDs; tables show the first 8 characters). Unknown values are returned unchanged (a new session)."""
    from orchestrator.core.errors import UsageError
    from orchestrator.state.sessions import SessionStore

    if not value:
        return "default"
    store = SessionStore(ws.run_dir)
    known = [sid for sid, _state in store.list()]
    if value in known:
        return value
    matches = [sid for sid in known if sid.startswith(value)]
    if len(matches) > 1:
        raise UsageError(f"session prefix {value!r} matches {len(matches)} sessions: {', '.join(matches[:5])}",
                         hint="type more characters of the session id")
    return matches[0] if matches else value
