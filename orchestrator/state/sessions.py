"""Per-session state, shared by every process of one agent session.

A Claude Code session runs one hook process per event, so the selected intent and the read-stamps
(hash of each file as this session last saw it) live in ``.orchestration/run/sessions/<id>.json``.
Updates are read-modify-write under a per-session ``flock`` and land by atomic rename; reads are
cached by mtime, size, ctime and inode so the hot path costs one ``stat`` (a file changed within the last
:data:`~orchestrator.core.fsutil.RACY_NS` is read again: its key cannot prove the next change).
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from orchestrator.core.fsutil import atomic_write_json, locked, racy, stat_key

_SAFE = re.compile(r"[^A-Za-z0-9._-]")

#: session states a store keeps in memory. A long-lived store (the daemon's Governor) serves every session of its
#: workspace for as long as requests come; past this many, the oldest quarter is dropped (read again on their next
#: call), so memory does not grow with every session ever seen.
MAX_CACHED = 256
#: session ids whose file path and name a store remembers (plain strings: cleared at once past this many)
MAX_NAMES = 4096


#: the session of a call whose agent named none, or an unusable one: every mutating call and every intent selection
#: for it is refused (:func:`usable`); it never shares the ``default`` session, nor any other
NO_SESSION = ""
#: longest session id accepted (Claude Code's are UUIDs, Cursor's conversation ids too)
MAX_SESSION_ID = 256


def usable(session_id: Any) -> bool:
    """Whether ``session_id`` can name a session: a non-empty string of at most :data:`MAX_SESSION_ID` printable
    characters (no control characters: the id is shown in logs and the ledger)."""
    return isinstance(session_id, str) and 0 < len(session_id) <= MAX_SESSION_ID and session_id.isprintable() \
        and not session_id.isspace()


def session_from(value: Any) -> str:
    """The engine's session id for the id an agent's event carries: the value itself when :func:`usable`, else
    :data:`NO_SESSION`. The one rule every adapter applies (never a coercion to ``default``)."""
    return value if usable(value) else NO_SESSION


def session_required(hook: str = "session") -> Any:
    """The structured refusal of a mutating call (or an intent selection) that names no usable session."""
    from orchestrator.core.models import Verdict

    return Verdict.deny(
        "session-required", hook,
        "this call names no usable session id, so no selected intent can apply to it (and it may not share "
        "another session's)",
        hint="the agent's hook event must carry its session id (Claude Code, Codex and Gemini CLI: session_id; "
             "Cursor: conversation_id); check that the hook is installed as `orch install <agent>` writes it, "
             "or pass session_id when calling the Governor yourself")


def _empty() -> dict[str, Any]:
    return {"intent_id": None, "selected_at": None, "reads": {}, "agent": None, "last_seen": None}


class SessionStore:
    """Session state files under ``run_dir/sessions/``."""

    def __init__(self, run_dir: Path) -> None:
        self.dir = run_dir / "sessions"
        #: session id -> (stat key, state); no entry while the key is racy (the next get reads the file again)
        self._cache: dict[str, tuple[tuple[int, int, int, int], dict[str, Any]]] = {}
        self._paths: dict[str, str] = {}
        self._names: dict[str, str] = {}

    def _path(self, session_id: str) -> Path:
        return Path(self._path_str(session_id))

    def _path_str(self, session_id: str) -> str:
        path = self._paths.get(session_id)
        if path is None:
            if len(self._paths) >= MAX_NAMES:
                self._paths.clear()
            # session ids come from agents: never let one become a path traversal; two ids never share a file
            # ("a/b" and "a_b"; an empty id and "default"): a rewritten one gets a hash of the original ("~" never
            # appears in a kept id)
            safe = _SAFE.sub("_", session_id)[:128]
            if safe != session_id or not safe:
                import hashlib

                digest = hashlib.sha256(session_id.encode("utf-8", "surrogateescape")).hexdigest()[:16]
                safe = f"{safe[:100]}~{digest}"
            path = self._paths[session_id] = os.path.join(self.dir, f"{safe}.json")
        return path

    def file_name(self, session_id: str) -> str:
        """The base name of the session's state file."""
        name = self._names.get(session_id)
        if name is None:
            if len(self._names) >= MAX_NAMES:
                self._names.clear()
            name = self._names[session_id] = os.path.basename(self._path_str(session_id))
        return name

    def get(self, session_id: str) -> dict[str, Any]:
        """The session's state (a fresh empty state if none). Treat the result as read-only."""
        path = self._path_str(session_id)
        try:
            st = os.stat(path)
        except FileNotFoundError:
            return _empty()
        key = stat_key(st)
        hit = self._cache.get(session_id)
        if hit is not None and hit[0] == key:
            return hit[1]
        try:
            with open(path, "rb") as fh:
                state = json.loads(fh.read())
        except (OSError, ValueError):
            # a corrupt state file must not grant anything: behave as a new session
            state = _empty()
        if not isinstance(state, dict):
            state = _empty()
        cache = self._cache
        if racy(st):
            cache.pop(session_id, None)
        else:
            if len(cache) >= MAX_CACHED and session_id not in cache:
                # the oldest quarter at once: one pop per call from a dict's front costs more with every pop (the
                # slots left empty are walked again); list() copies the keys in one step while other threads write
                for old in list(cache)[:max(1, MAX_CACHED // 4)]:
                    cache.pop(old, None)
            cache[session_id] = (key, state)
        return state

    def forget(self, session_id: str) -> None:
        """Drop the in-memory copy: the next :meth:`get` reads the file again."""
        self._cache.pop(session_id, None)

    def update(self, session_id: str, fn: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
        """Apply ``fn`` to the state under the session lock and persist it atomically."""
        path = self._path(session_id)
        with locked(path.with_suffix(".lock")):
            try:
                state = json.loads(path.read_bytes())
                if not isinstance(state, dict):
                    state = _empty()
            except (OSError, ValueError):
                state = _empty()
            state.setdefault("reads", {})
            fn(state)
            state["last_seen"] = time.time()
            atomic_write_json(path, state)
        self._cache.pop(session_id, None)
        return state

    def list(self) -> list[tuple[str, dict[str, Any]]]:
        """All sessions (id, state), most recently seen first."""
        out: list[tuple[str, dict[str, Any]]] = []
        if not self.dir.is_dir():
            return out
        for p in self.dir.glob("*.json"):
            try:
                state = json.loads(p.read_bytes())
            except (OSError, ValueError):
                continue
            if isinstance(state, dict):
                out.append((p.stem, state))
        out.sort(key=lambda kv: kv[1].get("last_seen") or 0, reverse=True)
        return out


def stamp(state: dict[str, Any], path: str, digest: str | None) -> None:
    """Record (or forget, for a deleted file) the hash this session last saw for ``path``."""
    reads = state.setdefault("reads", {})
    if digest is None:
        reads.pop(path, None)
    else:
        reads[path] = digest
    # keep state bounded for very long sessions
    if len(reads) > 5000:
        for k in list(reads)[: len(reads) - 5000]:
            reads.pop(k, None)

