"""orchestrator's own Python inside a workspace: the environment the hook runs from, when it lies there.

A leaf (stdlib only) shared by the sandbox plan (:mod:`orchestrator.sandbox.guard`: never granted) and selfguard
(:mod:`orchestrator.pre.selfguard`: refused to the file tools), so the file tools' hot path does not import the
sandbox package. A ``.pth`` file or a module written there would run inside every later hook call, unsandboxed.
"""

from __future__ import annotations

import os
import sys


def own_python(root: str, *, package: bool = True) -> tuple[str, ...]:
    """The directories the hook's own Python runs from that lie inside the workspace ``root``, relative to it: the
    environment's prefix (``.venv``: its interpreter, ``site-packages`` and ``.pth`` files), every site directory
    on ``sys.path``, and (``package``) the ``orchestrator`` package itself (an editable install's source)."""
    real = os.path.realpath(root)
    dirs = {sys.prefix, sys.exec_prefix}
    if package:
        dirs.add(os.path.dirname(os.path.abspath(__file__)))  # orchestrator/ (this is orchestrator/core/own_python.py)
    dirs.update(p for p in sys.path if p and os.path.basename(p) in ("site-packages", "dist-packages"))
    out = []
    for d in dirs:
        rd = os.path.realpath(d)
        if rd.startswith(real + os.sep):
            out.append(os.path.relpath(rd, real).replace(os.sep, "/"))
    return tuple(sorted(out))


__all__ = ["own_python"]
