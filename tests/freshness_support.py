"""Helpers for the freshness tests: does a long-lived Governor answer exactly as a fresh one would?

A long-lived Governor (``orch serve``, an in-process agent loop, the LangChain middleware) keeps stat-keyed memos
of the governance files and session states (orchestrator.config.confcache, orchestrator.state.sessions); a fresh Governor with
the in-memory config cache cleared stands for a new hook process. :func:`compare` puts the same call to both at the
same moment; the tests change the world in between the way an agent, a person or another process could.
"""

from __future__ import annotations

import ctypes
import json
import os
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from orchestrator.config import confcache
from orchestrator.engine.pipeline import Governor
from orchestrator.engine.tools import to_call

_libc = ctypes.CDLL(None, use_errno=True)


def write(path: str, session: str = "s1", cwd: str | None = None) -> Any:
    fields: dict[str, Any] = {"session_id": session}
    if cwd is not None:
        fields["cwd"] = cwd
    return to_call("Write", {"file_path": path, "content": "x = 1\n"}, **fields)


def outcome(verdict: Any, call: Any) -> tuple[str, str | None, list[str]]:
    return verdict.decision, (verdict.error or {}).get("type"), list(call.resolved)


def fresh_pre(ws: Path, call: Any) -> Any:
    """``call`` put to a new Governor with nothing in memory (a new hook process). The config memo is per process,
    so the long-lived Governor's is set aside meanwhile and put back untouched."""
    kept = dict(confcache._memory)
    confcache.clear_memory()
    try:
        return Governor(ws, approval_channel="deny").pre(call)
    finally:
        confcache.clear_memory()
        confcache._memory.update(kept)


def compare(gov: Governor, ws: Path, make: Callable[[], Any]) -> tuple[tuple, tuple]:
    """(long-lived outcome, fresh outcome) of the same call at the same moment."""
    kept_call = make()
    kept = outcome(gov.pre(kept_call), kept_call)
    fresh_call = make()
    fresh = outcome(fresh_pre(ws, fresh_call), fresh_call)
    return kept, fresh


def assert_same(gov: Governor, ws: Path, make: Callable[[], Any], *, fresh_denies: bool = True) -> None:
    kept, fresh = compare(gov, ws, make)
    if fresh_denies:
        assert fresh[0] == "deny", f"the attack should matter to a fresh governor: {fresh}"
    assert kept == fresh


def warm(gov: Governor, *paths: str) -> None:
    """Two rounds of allowed writes: every memo of the long-lived Governor is filled."""
    for _ in range(2):
        for p in paths:
            assert gov.pre(write(p)).allowed, p


def warm_governor(ws: Path, *paths: str) -> Governor:
    """A long-lived Governor with INT-001 selected for session s1, warmed by writes to ``paths``."""
    gov = Governor(ws, approval_channel="deny")
    gov.select_intent("INT-001", "s1")
    warm(gov, *(paths or ("src/a/b/new.py",)))
    return gov


def intents(scope: str) -> str:
    """INT-001 owning ``scope``, plus INT-003 owning docs/ (for the session attacks)."""
    return textwrap.dedent(f"""\
        active_intents:
          - id: INT-001
            name: Build the API
            status: IN_PROGRESS
            owned_scope: ["{scope}"]
          - id: INT-003
            name: Docs now
            status: IN_PROGRESS
            owned_scope: ["docs/**"]
        """)


def padded(text: str, length: int) -> bytes:
    """``text`` as YAML of exactly ``length`` bytes (a trailing comment pads it)."""
    data = text.encode()
    assert len(data) + 2 <= length
    return data + b"#" + b"x" * (length - len(data) - 1)


def renameat2_exchange(a: Path, b: Path) -> None:
    """Swap two names atomically (``renameat2(RENAME_EXCHANGE)``), or skip where the kernel cannot."""
    fn = _libc.renameat2
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    AT_FDCWD, RENAME_EXCHANGE = -100, 2
    if fn(AT_FDCWD, os.fsencode(a), AT_FDCWD, os.fsencode(b), RENAME_EXCHANGE) != 0:
        err = ctypes.get_errno()
        pytest.skip(f"renameat2(RENAME_EXCHANGE): {os.strerror(err)}")


def in_private_mount_namespace(body: Callable[[], dict]) -> dict:
    """Run ``body`` in a forked child inside its own mount namespace; its JSON result (or a skip reason)."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        result: dict = {}
        try:
            os.close(r)
            _libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_void_p]
            CLONE_NEWNS, MS_REC, MS_PRIVATE = 0x00020000, 0x4000, 1 << 18
            if _libc.unshare(CLONE_NEWNS) != 0:
                result = {"skip": "unshare(CLONE_NEWNS): " + os.strerror(ctypes.get_errno())}
            elif _libc.mount(None, b"/", None, MS_REC | MS_PRIVATE, None) != 0:
                result = {"skip": "mount --make-rprivate /: " + os.strerror(ctypes.get_errno())}
            else:
                result = body()
        except BaseException as exc:  # noqa: BLE001 - reported to the parent
            result = {"error": repr(exc)}
        finally:
            os.write(w, json.dumps(result).encode())
            os._exit(0)
    os.close(w)
    chunks = []
    while chunk := os.read(r, 65536):
        chunks.append(chunk)
    os.close(r)
    os.waitpid(pid, 0)
    result = json.loads(b"".join(chunks) or b"{}")
    if "skip" in result:
        pytest.skip(result["skip"])
    assert "error" not in result, result["error"]
    return result


def bind(source: Path, target: Path) -> None:
    """``mount --bind source target`` (inside :func:`in_private_mount_namespace` only)."""
    MS_BIND = 4096
    if _libc.mount(os.fsencode(source), os.fsencode(target), None, MS_BIND, None) != 0:
        raise OSError(ctypes.get_errno(), f"mount --bind {source} {target}")
