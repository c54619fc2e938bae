"""The refusal log: every deny or ask of the pre-hooks, and every request the daemon refused to serve (``hook:
daemon``: a peer it may not serve, a frame left open, a post-hook with no pre-hook), one JSON line each, in
``.orchestration/run/refusals.jsonl``.

Runtime state (machine-local, never committed, never in the ledger: the ledger records what *changed*, this records
what was stopped). A line holds the decision, the error's type/hook/message/path/intent, the tool, the session and a
shortened command; never file contents. Written with one ``O_APPEND`` write (atomic for lines this short); rotated
to ``refusals.jsonl.1`` past :data:`MAX_BYTES`. Read by ``orch refusals``.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

FILE = "refusals.jsonl"
MAX_BYTES = 4 * 1024 * 1024
_FIELDS = ("type", "hook", "message", "path", "intent", "pattern", "risk", "hint")


def record(run_dir: str | os.PathLike[str], call: Any, verdict: Any) -> None:
    """Append one refusal. Never raises (logging must not turn a verdict into a crash)."""
    try:
        error = verdict.error or {}
        entry: dict[str, Any] = {"ts": _now(), "decision": verdict.decision, "session_id": call.session_id,
                                 "agent": call.agent, "tool": call.tool}
        entry.update({k: error[k] for k in _FIELDS if error.get(k) is not None})
        if call.command:
            entry["command"] = call.command if len(call.command) <= 300 else call.command[:299] + "…"
        elif call.paths:
            entry["targets"] = [str(p) for p in call.paths[:5]]
    except Exception:  # noqa: BLE001
        return
    log(run_dir, entry)


def log(run_dir: str | os.PathLike[str], entry: dict[str, Any]) -> None:
    """Append one structured entry (a refused call, or a request the daemon refused: ``hook: daemon``), with a
    timestamp if it has none. One ``O_APPEND`` write, never through a symlink. Never raises."""
    try:
        entry = entry if "ts" in entry else {"ts": _now(), **entry}
        line = (json.dumps(entry, ensure_ascii=False, default=str) + "\n").encode("utf-8")
        os.makedirs(run_dir, exist_ok=True)
        path = os.path.join(run_dir, FILE)
        try:
            if os.stat(path).st_size > MAX_BYTES:
                os.replace(path, path + ".1")
        except FileNotFoundError:
            pass
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        try:
            os.write(fd, line)
        finally:
            os.close(fd)
    except Exception:  # noqa: BLE001
        pass


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def read(run_dir: str | os.PathLike[str]) -> Iterator[dict[str, Any]]:
    """The logged refusals, oldest first (the rotated file, then the current one); bad lines are skipped."""
    for name in (FILE + ".1", FILE):
        path = Path(run_dir) / name
        try:
            with path.open(encoding="utf-8") as fh:
                for line in fh:
                    try:
                        entry = json.loads(line)
                    except ValueError:
                        continue
                    if isinstance(entry, dict):
                        yield entry
        except OSError:
            continue
