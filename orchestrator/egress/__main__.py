"""``python -m orchestrator.egress [DIR]``: run the egress proxy in the foreground (DIR: its directory, by default
this user's, :func:`orchestrator.egress.paths.egress_dir`). The engine starts it so, detached
(:func:`orchestrator.egress.supervise.ensure`)."""

from __future__ import annotations

import sys

from orchestrator.egress.server import serve

if __name__ == "__main__":
    if len(sys.argv) > 2:
        sys.stderr.write("usage: python -m orchestrator.egress [DIR]\n")
        sys.exit(2)
    from orchestrator.egress.paths import egress_dir

    sys.exit(serve(sys.argv[1] if len(sys.argv) == 2 else egress_dir()))
