"""``orch serve``: the resident hook daemon of one workspace (normally started on demand by the hook client)."""

from __future__ import annotations

import argparse

from orchestrator.core.output import out


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--root", "-C", dest="root", default=None,
                        help="workspace root (default: nearest parent with .orchestration/)")
    parser.add_argument("--idle", type=float, default=None,
                        help="exit after this many idle seconds (default: $ORCH_DAEMON_IDLE or 900)")
    parser.add_argument("--stop", action="store_true", help="stop the workspace's running daemon")
    parser.add_argument("--status", action="store_true", help="say whether a daemon serves the workspace")


def run(args: argparse.Namespace) -> int:
    from orchestrator.daemon import server as daemon
    from orchestrator.config.workspace import find_root

    root = find_root(args.root)
    if args.status:
        alive = daemon.is_alive(daemon.socket_path(root))
        out(f"daemon {'running' if alive else 'not running'} for {root}")
        return 0
    if args.stop:
        stopped = daemon.stop(root)
        out("daemon stopped" if stopped else "daemon did not stop in time")
        return 0 if stopped else 1
    return daemon.serve(root, idle_timeout=args.idle)
