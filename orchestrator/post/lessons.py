"""``record_lesson``: append a lesson to AGENTS.md under a ``## Lessons`` heading.

Appends under an exclusive lock (several agents may finish at once) and skips exact duplicates, so
a lesson the agent repeats does not pile up.
"""

from __future__ import annotations

import datetime as _dt
import re
from pathlib import Path

from orchestrator.core.errors import UsageError
from orchestrator.core.fsutil import atomic_write, locked

HEADING = "## Lessons"
_LINE = re.compile(r"^- (?:\[(?P<intent>[^\]]+)\] )?(?P<text>.*?)(?: \(\d{4}-\d{2}-\d{2}\))?$")


def _normalise(text: str) -> str:
    return " ".join(text.split())


def record(agents_md: Path, text: str, intent_id: str | None = None, *, lock_dir: Path | None = None) -> bool:
    """Append ``text`` as a lesson. Returns False if the same lesson is already there."""
    lesson = _normalise(text)
    if not lesson:
        raise UsageError("a lesson needs some text", hint="say what was learned in one sentence")
    if len(lesson) > 2000:
        raise UsageError("a lesson is at most 2000 characters", hint="shorten it to the essential rule")
    lock = (lock_dir or agents_md.parent) / ".agents_md.lock"
    with locked(lock):
        current = _read_own(agents_md)
        if any(entry == lesson for _intent, entry in _entries(current)):
            return False
        tag = f"[{intent_id}] " if intent_id else ""
        line = f"- {tag}{lesson} ({_dt.date.today().isoformat()})"
        if HEADING not in current.splitlines():
            sep = "" if not current else ("\n" if current.endswith("\n") else "\n\n")
            current = f"{current}{sep}\n{HEADING}\n\n" if current else f"# AGENTS.md\n\n{HEADING}\n\n"
        elif not current.endswith("\n"):
            current += "\n"
        atomic_write(agents_md, (current + line + "\n").encode("utf-8"))
    return True


def _read_own(agents_md: Path) -> str:
    """AGENTS.md's text ("" when absent), never through a symlink: the lesson is written back in place of the file
    by an atomic rename, so a link's target would be copied into AGENTS.md (issue 28's audit of privileged writes)."""
    import errno
    import os

    try:
        fd = os.open(agents_md, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        return ""
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise UsageError(f"{agents_md.name} is a symlink; lessons are recorded in a regular file only",
                             hint=f"make {agents_md.name} the file itself (a link from CLAUDE.md to it is fine)") \
                from None
        raise
    with os.fdopen(fd, "rb") as fh:
        return fh.read().decode("utf-8")


def _entries(text: str) -> list[tuple[str | None, str]]:
    out: list[tuple[str | None, str]] = []
    in_section = False
    for raw in text.splitlines():
        if raw.startswith("## "):
            in_section = raw.strip() == HEADING
            continue
        if in_section and raw.startswith("- "):
            m = _LINE.match(raw)
            if m:
                out.append((m.group("intent"), _normalise(m.group("text"))))
    return out


def relevant(agents_md: Path, intent_id: str | None, limit: int = 10) -> list[str]:
    """Lessons for ``intent_id`` plus untagged ones, most recent last, at most ``limit``."""
    try:
        text = agents_md.read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    picked = [t for i, t in _entries(text) if i is None or i == intent_id]
    return picked[-limit:]


def of_intent(agents_md: Path, intent_id: str) -> list[str]:
    """The lessons recorded for ``intent_id`` (tagged with it; not the untagged ones), oldest first."""
    try:
        text = agents_md.read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    return [t for i, t in _entries(text) if i == intent_id]
