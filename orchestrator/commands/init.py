"""``orch init [DIR]``: create ``.orchestration/`` (idempotent, never overwrites).

Run inside a git repository without ``DIR``, it initialises the repository's top level (where agents start and
where ``orch`` finds the workspace from any subdirectory), and says so; ``--here`` keeps the current directory.
"""

from __future__ import annotations

import argparse
import os

from orchestrator.config import workspace
from orchestrator.core.output import out


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("directory", nargs="?", default=None,
                        help="where to initialise (default: the top of the git repository, else the current "
                             "directory)")
    parser.add_argument("--here", action="store_true",
                        help="initialise the current directory even inside a larger git repository")


def repo_top(start: str) -> str | None:
    """The top level of the git work tree containing ``start`` (a ``.git`` directory or file), or None."""
    path = os.path.realpath(start)
    while True:
        if os.path.exists(os.path.join(path, ".git")):
            return path
        parent = os.path.dirname(path)
        if parent == path:
            return None
        path = parent


def run(args: argparse.Namespace) -> int:
    directory = args.directory
    if directory is None:
        here = os.path.realpath(".")
        top = None if args.here else repo_top(here)
        directory = top or here
        if top and top != here:
            out(f"initialising the repository root {top} (you are in {os.path.relpath(here, top)}/; "
                "use --here to initialise this directory instead)")
    created = workspace.init(directory)
    root = os.path.realpath(directory)
    if not created:
        out(f"{root}: already initialised, nothing changed")
        return 0
    for path in created:
        out(f"created {os.path.relpath(path, root)}")
    out("next: edit .orchestration/active_intents.yaml, then `orch install claude-code` (or wrap your loop)")
    return 0
