"""The compiled configuration cache: reloaded whenever the file changed, even when mtime and size did not."""

from __future__ import annotations

import os
from pathlib import Path

from orchestrator.config import confcache
from orchestrator.engine.pipeline import Governor
from orchestrator.engine.tools import to_call

NARROW = "active_intents:\n  - id: INT-001\n    name: n\n    status: IN_PROGRESS\n    owned_scope: ['src/**']\n"
OTHER = "active_intents:\n  - id: INT-001\n    name: n\n    status: IN_PROGRESS\n    owned_scope: ['doc/**']\n"


def _check(gov: Governor) -> str:
    return gov.pre(to_call("Write", {"file_path": "src/x.py"}, session_id="s")).decision


def test_same_size_edit_with_restored_mtime_is_reloaded(ws: Path) -> None:
    path = ws / ".orchestration" / "active_intents.yaml"
    path.write_text(NARROW)
    gov = Governor(ws, approval_channel="deny")
    gov.select_intent("INT-001", "s")
    assert _check(gov) == "allow"
    before = os.stat(path)
    path.write_text(OTHER)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))  # mtime and size as before; ctime moved
    assert os.stat(path).st_size == before.st_size
    assert _check(gov) == "deny"


def test_replaced_file_is_reloaded_even_with_identical_stat_times(ws: Path) -> None:
    path = ws / ".orchestration" / "active_intents.yaml"
    path.write_text(NARROW)
    gov = Governor(ws, approval_channel="deny")
    gov.select_intent("INT-001", "s")
    assert _check(gov) == "allow"
    tmp = path.with_name("new.yaml")
    tmp.write_text(OTHER)
    os.replace(tmp, path)  # a new inode
    assert _check(gov) == "deny"


def test_forget_rereads_the_file(ws: Path) -> None:
    path = str(ws / ".orchestration" / "active_intents.yaml")
    calls: list[str] = []

    def validate(p: Path, text: str) -> str:
        calls.append(text)
        return text

    load = lambda: confcache.load(path, "test-kind", validate=validate, materialise=str,  # noqa: E731
                                  missing=lambda: "")
    assert load() == load() and len(calls) == 1  # memory hit
    confcache.forget([path])
    assert load() and len(calls) == 2  # read, hashed and validated again (no disk cache_dir here)
