"""One module per ``orch`` subcommand, each with ``register(parser)`` and ``run(args) -> int``."""

from __future__ import annotations

import argparse

from orchestrator.workspace import Workspace, find_workspace


def add_workspace_arg(parser: argparse.ArgumentParser) -> None:
    """The common ``-C/--workspace`` option."""
    parser.add_argument("-C", "--workspace", metavar="DIR", default=None,
                        help="workspace root (default: nearest parent with .orchestration/)")


def workspace_of(args: argparse.Namespace) -> Workspace:
    """The workspace named by ``-C`` or found from the cwd."""
    return find_workspace(getattr(args, "workspace", None))
