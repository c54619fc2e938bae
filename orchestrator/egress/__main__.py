"""``python -m orchestrator.egress ROOT``: run the workspace's egress proxy in the foreground (how the engine starts
it, detached: :func:`orchestrator.egress.supervise.ensure`)."""

from __future__ import annotations

import sys

from orchestrator.egress.server import serve

if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.stderr.write("usage: python -m orchestrator.egress WORKSPACE_ROOT\n")
        sys.exit(2)
    sys.exit(serve(sys.argv[1]))
