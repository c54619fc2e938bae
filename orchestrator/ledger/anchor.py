"""The local anchor (docs/ledger.md §4a): the last record this machine appended to a ledger, kept outside the
workspace so that deleting, truncating, emptying or replacing the ledger on this machine is detected by ``verify``.

One small JSON file per (ledger file, branch) in :func:`orchestrator.state.keys.anchor_dir`:
``{"ledger": <real path>, "branch": <ref>, "head": "sha256:…", "line": N, "offset": bytes, "time": …}``. Keyed by
branch because checking out another branch legitimately shows another ledger. Written by the writer under the
ledger's lock after the record is on disk (a crash between the two leaves the anchor one record behind, which
still verifies), in place with one ``pwrite`` of a fixed-size block. Stdlib only: the writer imports it.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path


def anchor_path(ledger: str | os.PathLike[str], branch: str | None) -> Path:
    """Where the anchor of ``ledger`` (on ``branch``; None outside git) lives."""
    from orchestrator.state.keys import anchor_dir

    real = os.path.realpath(os.fspath(ledger))
    name = hashlib.sha256(f"{real}\0{branch or ''}".encode("utf-8", "surrogateescape")).hexdigest()[:32]
    return anchor_dir() / f"{name}.json"


def for_workspace(root: str | os.PathLike[str], ledger: str | os.PathLike[str]) -> Path:
    """The anchor path of a workspace's ledger on the branch checked out now."""
    from orchestrator.vcs.revision import head_ref

    return anchor_path(ledger, head_ref(root))


def write(path: Path, ledger: str, head: str, line: int | None, offset: int) -> None:
    """Record ``head`` (the record just appended, ending at byte ``offset``, at ``line`` when known).

    One ``pwrite`` of a fixed-size block over the old content, in place: no rename or truncation per append
    (~20 µs instead of ~200 µs for write-temp-and-rename); a crash cannot leave it half old and half new short
    of a torn sector, which ``verify`` would report as an unreadable anchor rather than accept."""
    data = json.dumps({"ledger": os.path.realpath(ledger), "head": head, "line": line, "offset": offset,
                       "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}).encode("utf-8")
    flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags, 0o600)
    except FileNotFoundError:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(path, flags, 0o600)
    try:
        size = max(_BLOCK, len(data) + 1)
        os.pwrite(fd, data.ljust(size - 1) + b"\n", 0)
    finally:
        os.close(fd)


#: the anchor's fixed size: every write covers the previous content entirely (a longer ledger path grows it)
_BLOCK = 512


def read(path: Path) -> dict | None:
    """The anchor at ``path``; None when there is none. A malformed anchor is returned as ``{"malformed": …}``."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as e:
        return {"malformed": e.strerror or str(e)}
    try:
        obj = json.loads(raw)
    except ValueError:
        return {"malformed": "not JSON"}
    if not isinstance(obj, dict) or not isinstance(obj.get("head"), str):
        return {"malformed": "no head"}
    return obj


def reset(path: Path, ledger: str) -> dict | None:
    """Re-anchor at the ledger's current last line (after a reviewed reset of the branch); None if it is empty."""
    from .format import _split_tail
    from .read import tail_lines

    last = tail_lines(ledger, 1)
    if not last:
        try:
            path.unlink()
        except FileNotFoundError:
            pass
        return None
    parts = _split_tail(last[0])
    if parts is None:
        return None
    n = 0
    with open(ledger, "rb") as f:
        for n, _ in enumerate(f, 1):
            pass
    head = "sha256:" + parts[1].decode("ascii")
    write(path, ledger, head, n, os.path.getsize(ledger))
    return read(path)


__all__ = ["anchor_path", "for_workspace", "write", "read", "reset"]
