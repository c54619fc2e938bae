"""A long-lived Governor answers every call exactly as a fresh one (a new hook process) would.

``orch serve``, an in-process agent loop and the LangChain middleware keep one Governor for many calls. What it
remembers between calls is stat-keyed: the governance files (orchestrator.config.confcache) and the session states
(orchestrator.state.sessions) by mtime, size, ctime and inode — re-read while that key is too recent to prove anything
(orchestrator.core.fsutil.racy) —; paths are resolved with an ``lstat`` per component on every call. Each test changes
the world between two calls the way an agent, a person or another process could, then puts the same call to the
long-lived Governor and to a fresh one (:func:`tests.freshness_support.compare`). Nothing here waits for a clock:
changes are made, then the next call must see them.

The scenarios are the ones written against the inotify-backed live cache this replaced (docs/performance.md,
"Live cache decision"); :func:`test_random_operation_sequences` runs randomized sequences of the same operations.
"""

from __future__ import annotations

import ctypes
import json
import mmap
import os
import platform
import random
import shutil
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from orchestrator.config import confcache
from orchestrator.core import fsutil
from orchestrator.engine.pipeline import Governor
from orchestrator.engine.tools import to_call
from tests.freshness_support import (
    assert_same, bind, compare, fresh_pre, in_private_mount_namespace, intents, outcome, padded, renameat2_exchange,
    warm, warm_governor, write,
)

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux: renameat2, mounts, /proc")

ROOT = Path(__file__).resolve().parents[1]
INTENTS = ".orchestration/active_intents.yaml"


@pytest.fixture
def kept(ws: Path) -> Governor:
    """A long-lived Governor with INT-001 (src/**) selected for s1, its memos warm. The intents file has room for
    same-size rewrites (a padding comment)."""
    (ws / INTENTS).write_bytes(padded(intents("src/**"), len(intents("src/**")) + 40))
    (ws / "src" / "a" / "b").mkdir(parents=True)
    return warm_governor(ws, "src/a/b/new.py")


# ------------------------------------------------------------------------------------------- paths: symlink swaps
@pytest.mark.parametrize("target", ["governance", "outside"])
def test_symlink_swapped_in_for_a_directory(kept: Governor, ws: Path, tmp_path: Path, target: str) -> None:
    shutil.rmtree(ws / "src" / "a" / "b")
    if target == "governance":
        os.symlink(ws / ".orchestration", ws / "src" / "a" / "b")
        assert_same(kept, ws, lambda: write("src/a/b/policy.yaml"))
        assert kept.pre(write("src/a/b/policy.yaml")).error["path"] == ".orchestration/policy.yaml"
    else:
        (tmp_path / "elsewhere").mkdir()
        os.symlink(tmp_path / "elsewhere", ws / "src" / "a" / "b")
        assert_same(kept, ws, lambda: write("src/a/b/new.py"))
        assert kept.pre(write("src/a/b/new.py")).error["type"] == "path-outside-workspace"


def test_ancestor_renamed_and_replaced_by_a_symlink(kept: Governor, ws: Path) -> None:
    os.rename(ws / "src", ws / "src_old")
    os.symlink(ws / ".orchestration", ws / "src")
    assert_same(kept, ws, lambda: write("src/a/b/new.py"))


def test_final_component_turned_into_a_symlink(kept: Governor, ws: Path) -> None:
    os.symlink(ws / INTENTS, ws / "src" / "a" / "b" / "new.py")
    assert_same(kept, ws, lambda: write("src/a/b/new.py"))
    assert kept.pre(write("src/a/b/new.py")).error["path"] == INTENTS


def test_directory_renamed_away_and_replaced_by_a_link_out_of_scope(kept: Governor, ws: Path) -> None:
    os.rename(ws / "src" / "a" / "b", ws / "src" / "a" / "c")
    os.symlink("../../docs", ws / "src" / "a" / "b")
    assert_same(kept, ws, lambda: write("src/a/b/new.py"))
    v = kept.pre(write("src/a/b/new.py"))
    assert v.error["type"] == "scope-violation" and v.error["path"] == "docs/new.py"


def test_rename_exchange_of_a_directory_with_a_symlink(kept: Governor, ws: Path) -> None:
    os.symlink("../../.orchestration", ws / "src" / "a" / "lnk")
    renameat2_exchange(ws / "src" / "a" / "b", ws / "src" / "a" / "lnk")
    assert_same(kept, ws, lambda: write("src/a/b/policy.yaml"))


def test_rename_exchange_of_an_ancestor_with_a_symlink(kept: Governor, ws: Path) -> None:
    os.symlink("docs", ws / "srclink")
    renameat2_exchange(ws / "src", ws / "srclink")  # src is now a symlink to docs
    assert_same(kept, ws, lambda: write("src/a/b/new.py"))


def test_directory_moved_elsewhere_and_replaced_both_names(kept: Governor, ws: Path) -> None:
    os.rename(ws / "src" / "a" / "b", ws / "docs" / "b")
    os.symlink("../../.orchestration", ws / "src" / "a" / "b")
    assert_same(kept, ws, lambda: write("src/a/b/policy.yaml"))
    assert_same(kept, ws, lambda: write("docs/b/new.py"))
    os.rename(ws / "docs" / "b", ws / "docs" / "c")
    os.symlink("../.orchestration", ws / "docs" / "b")
    assert_same(kept, ws, lambda: write("docs/b/policy.yaml"))


def test_rmdir_while_held_open_then_symlink(kept: Governor, ws: Path) -> None:
    fd = os.open(ws / "src" / "a" / "b", os.O_RDONLY | os.O_DIRECTORY)
    try:
        (ws / "src" / "a" / "b" / "new.py").unlink(missing_ok=True)
        os.rmdir(ws / "src" / "a" / "b")
        os.symlink("../../.orchestration", ws / "src" / "a" / "b")
        assert_same(kept, ws, lambda: write("src/a/b/policy.yaml"))
    finally:
        os.close(fd)


def test_deep_nesting_middle_component_swapped(ws: Path) -> None:
    (ws / INTENTS).write_text(intents("src/**"))
    parts = [f"d{i}" for i in range(40)]
    deep = "src/" + "/".join(parts)
    (ws / deep).mkdir(parents=True)
    gov = warm_governor(ws, f"{deep}/f.py")
    middle = ws / "src" / "/".join(parts[:20])
    os.rename(middle, ws / "src" / "moved")
    os.symlink(os.path.relpath(ws / "docs", middle.parent), middle)
    assert_same(gov, ws, lambda: write(f"{deep}/f.py"))


@pytest.mark.parametrize("spelling", [
    "src/a/b/policy.yaml",
    "src/./a//b/policy.yaml",
    "src/a/b/../b/policy.yaml",
    "{ws}/src/a/b/policy.yaml",
    "/proc/self/root{ws}/src/a/b/policy.yaml",
    "src/a/b/policy.yaml/",
])
def test_spellings_of_a_path_seen_before_a_swap(kept: Governor, ws: Path, spelling: str) -> None:
    raw = spelling.format(ws=ws)
    (ws / "src" / "a" / "b" / "policy.yaml").write_text("not governance\n")
    kept.pre(write(raw))
    kept.pre(write(raw))
    os.rename(ws / "src" / "a" / "b", ws / "src" / "a" / "old")
    os.symlink("../../.orchestration", ws / "src" / "a" / "b")
    kept_, fresh = compare(kept, ws, lambda: write(raw))
    assert kept_ == fresh and fresh[0] == "deny"


def test_relative_path_from_a_cwd_that_is_swapped(kept: Governor, ws: Path) -> None:
    cwd = str(ws / "src" / "a" / "b")
    assert kept.pre(write("new.py", cwd=cwd)).allowed
    os.rename(ws / "src" / "a", ws / "src" / "a_old")
    os.symlink("../docs", ws / "src" / "a")
    (ws / "docs" / "b").mkdir()
    assert_same(kept, ws, lambda: write("new.py", cwd=cwd))
    call = write("new.py", cwd=cwd)
    kept.pre(call)
    assert call.resolved == ["docs/b/new.py"]


def test_cwd_and_home_are_part_of_every_resolution(kept: Governor, ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    call = write("x.py", cwd=str(ws / "src"))
    assert kept.pre(call).allowed and call.resolved == ["src/x.py"]
    call = write("x.py", cwd=str(ws / "docs"))
    assert kept.pre(call).error["type"] == "scope-violation" and call.resolved == ["docs/x.py"]
    monkeypatch.setenv("HOME", str(ws / "src"))
    assert kept.pre(write("~/a/b/new.py")).allowed
    monkeypatch.setenv("HOME", str(ws / "docs"))
    assert_same(kept, ws, lambda: write("~/a/b/new.py"))
    monkeypatch.setenv("HOME", str(ws / "src" / "a"))
    os.rename(ws / "src" / "a" / "b", ws / "src" / "a" / "c")
    os.symlink("../../.orchestration", ws / "src" / "a" / "b")
    assert_same(kept, ws, lambda: write("~/b/policy.yaml"))


def test_final_directory_component_with_trailing_slash_swapped(kept: Governor, ws: Path) -> None:
    (ws / "src" / "a" / "b" / "sub").mkdir()
    kept.pre(write("src/a/b/sub/"))
    os.rename(ws / "src" / "a" / "b" / "sub", ws / "src" / "a" / "b" / "sub_old")
    os.symlink("../../../.orchestration", ws / "src" / "a" / "b" / "sub")
    assert_same(kept, ws, lambda: write("src/a/b/sub/"))


def test_case_variants_are_other_names(kept: Governor, ws: Path) -> None:
    os.symlink(".orchestration", ws / "SRC")
    assert_same(kept, ws, lambda: write("SRC/policy.yaml"))
    os.symlink("../.orchestration", ws / "src" / "A")
    assert_same(kept, ws, lambda: write("src/A/policy.yaml"))


def test_surrogate_escaped_alias_of_a_directory(ws: Path) -> None:
    (ws / INTENTS).write_text(intents("src/**"))
    (ws / "src" / "é").mkdir()
    alias = "src/\udcc3\udca9"  # os.fsencode(alias) == os.fsencode("src/é")
    gov = warm_governor(ws, f"{alias}/x.py")
    os.rmdir(ws / "src" / "é")
    os.symlink("../.orchestration", ws / "src" / "é")
    assert_same(gov, ws, lambda: write(f"{alias}/policy.yaml"))


def test_chmod_of_a_directory(kept: Governor, ws: Path) -> None:
    os.chmod(ws / "src" / "a" / "b", 0)
    try:
        kept_, fresh = compare(kept, ws, lambda: write("src/a/b/new.py"))
        assert kept_ == fresh
    finally:
        os.chmod(ws / "src" / "a" / "b", 0o755)


def test_ancestor_of_the_root_renamed_and_replaced(tmp_path: Path) -> None:
    from tests.conftest import make_workspace

    ws = make_workspace(tmp_path / "outer" / "repo", intents("src/**"))
    (ws / "src" / "a" / "b").mkdir(parents=True)
    gov = warm_governor(ws, "src/a/b/new.py")
    os.rename(tmp_path / "outer", tmp_path / "outer_old")
    shutil.copytree(tmp_path / "outer_old", tmp_path / "outer", symlinks=True)
    shutil.rmtree(ws / "src" / "a" / "b")
    os.symlink(ws / ".orchestration", ws / "src" / "a" / "b")
    assert_same(gov, ws, lambda: write("src/a/b/policy.yaml"))


# ---------------------------------------------------------------------------------------- governance files
def test_in_place_edit_with_same_size_and_restored_mtime(kept: Governor, ws: Path) -> None:
    path = ws / INTENTS
    before = os.stat(path)
    with open(path, "r+", encoding="utf-8") as fh:  # same length: "src/**" -> "doc/**"
        fh.write(intents("doc/**"))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert os.stat(path).st_size == before.st_size and os.stat(path).st_mtime_ns == before.st_mtime_ns
    assert_same(kept, ws, lambda: write("src/a/b/new.py"))


def test_atomic_replace_of_intents(kept: Governor, ws: Path) -> None:
    tmp = ws / ".orchestration" / "intents.tmp"
    tmp.write_text(intents("docs/**"))
    os.replace(tmp, ws / INTENTS)
    assert_same(kept, ws, lambda: write("src/a/b/new.py"))


def test_edit_through_a_hard_link(kept: Governor, ws: Path) -> None:
    link = ws / "hardlink-to-intents.yaml"
    os.link(ws / INTENTS, link)
    warm(kept, "src/a/b/new.py")
    with open(link, "w", encoding="utf-8") as fh:
        fh.write(intents("docs/**"))
    assert_same(kept, ws, lambda: write("src/a/b/new.py"))


def test_pwrite_through_a_hard_link_same_size(kept: Governor, ws: Path) -> None:
    link = ws / "docs" / "hl.yaml"
    os.link(ws / INTENTS, link)
    warm(kept, "src/a/b/new.py")
    fd = os.open(link, os.O_RDWR)
    try:
        os.pwrite(fd, padded(intents("docs/**"), (ws / INTENTS).stat().st_size), 0)
        assert_same(kept, ws, lambda: write("src/a/b/new.py"))
    finally:
        os.close(fd)


def test_intentignore_created_later(kept: Governor, ws: Path) -> None:
    (ws / ".orchestration" / ".intentignore").write_text("src/a/b/\n")
    assert_same(kept, ws, lambda: write("src/a/b/new.py"))
    assert kept.pre(write("src/a/b/new.py")).error["type"] == "protected-path"


def test_policy_changed_and_removed(kept: Governor, ws: Path) -> None:
    delete = lambda: to_call("Delete", {"file_path": "src/app.py"}, session_id="s1")  # noqa: E731
    assert kept.pre(delete()).error["type"] == "approval-denied"
    (ws / ".orchestration" / "policy.yaml").write_text("delete_is_destructive: false\n")
    assert_same(kept, ws, delete, fresh_denies=False)
    assert kept.pre(delete()).allowed
    (ws / ".orchestration" / "policy.yaml").unlink()
    assert_same(kept, ws, delete)


def test_broken_config_denies_at_once(kept: Governor, ws: Path) -> None:
    (ws / INTENTS).write_text("active_intents: [\n")
    assert_same(kept, ws, lambda: write("src/a/b/new.py"))
    assert kept.pre(write("src/a/b/new.py")).error["type"] == "config-error"


def test_orchestration_dir_exchanged_with_a_prepared_copy(kept: Governor, ws: Path) -> None:
    copy = ws / "orch_copy"
    shutil.copytree(ws / ".orchestration", copy, symlinks=True)
    (copy / "active_intents.yaml").write_text(intents("docs/**"))
    renameat2_exchange(ws / ".orchestration", copy)
    assert_same(kept, ws, lambda: write("src/a/b/new.py"))


def test_symlinked_config_follows_its_target(kept: Governor, ws: Path) -> None:
    target = ws / "src" / "ignore.txt"
    target.write_text("docs/\n")
    ignore = ws / ".orchestration" / ".intentignore"
    ignore.unlink(missing_ok=True)
    os.symlink(target, ignore)
    warm(kept, "src/a/b/new.py")
    target.write_text("src/a/\n")
    assert_same(kept, ws, lambda: write("src/a/b/new.py"))


def test_symlinked_orchestration_dir(tmp_path: Path) -> None:
    from tests.conftest import make_workspace

    real = make_workspace(tmp_path / "real", intents("src/**"))
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    os.symlink(real / ".orchestration", ws / ".orchestration")
    gov = warm_governor(ws, "src/x.py")
    (real / INTENTS).write_text(intents("docs/**"))
    assert_same(gov, ws, lambda: write("src/x.py"))


class _IOCB(ctypes.Structure):
    _fields_ = [("aio_data", ctypes.c_uint64), ("aio_key", ctypes.c_uint32), ("aio_rw_flags", ctypes.c_int32),
                ("aio_lio_opcode", ctypes.c_uint16), ("aio_reqprio", ctypes.c_int16), ("aio_fildes", ctypes.c_uint32),
                ("aio_buf", ctypes.c_uint64), ("aio_nbytes", ctypes.c_uint64), ("aio_offset", ctypes.c_int64),
                ("aio_reserved2", ctypes.c_uint64), ("aio_flags", ctypes.c_uint32), ("aio_resfd", ctypes.c_uint32)]


def _aio_pwrite(fd: int, data: bytes) -> None:
    """One ``io_submit`` PWRITE at offset 0 (Linux native AIO), waited for."""
    if platform.machine() != "x86_64":
        pytest.skip("syscall numbers below are x86_64")
    libc = ctypes.CDLL(None, use_errno=True)
    SYS_io_setup, SYS_io_destroy, SYS_io_getevents, SYS_io_submit = 206, 207, 208, 209
    ctx = ctypes.c_ulong(0)
    if libc.syscall(SYS_io_setup, 1, ctypes.byref(ctx)) != 0:
        pytest.skip("io_setup: " + os.strerror(ctypes.get_errno()))
    try:
        buf = ctypes.create_string_buffer(data, len(data))
        cb = _IOCB(aio_lio_opcode=1, aio_fildes=fd, aio_buf=ctypes.addressof(buf), aio_nbytes=len(data))
        cbs = (ctypes.POINTER(_IOCB) * 1)(ctypes.pointer(cb))
        assert libc.syscall(SYS_io_submit, ctx, 1, cbs) == 1
        events = (ctypes.c_int64 * 4)()
        assert libc.syscall(SYS_io_getevents, ctx, 1, 1, events, None) == 1
        assert events[2] == len(data)
    finally:
        libc.syscall(SYS_io_destroy, ctx)


def test_config_rewritten_with_native_aio(kept: Governor, ws: Path) -> None:
    # the inotify cache missed this one (no event) until a periodic re-check; a stat key moves with the write
    path = ws / INTENTS
    fd = os.open(path, os.O_RDWR)
    try:
        _aio_pwrite(fd, padded(intents("docs/**"), path.stat().st_size))
        assert_same(kept, ws, lambda: write("src/a/b/new.py"))
    finally:
        os.close(fd)


def test_config_rewritten_through_a_shared_mmap(kept: Governor, ws: Path) -> None:
    # no inotify event either; the write fault on a clean page stamps mtime and ctime. After msync the page is
    # clean again, so the next write faults and stamps too. (A second write to a page still dirty is not stamped:
    # docs/security.md, "Freshness in long-lived processes".)
    path = ws / INTENTS
    size = path.stat().st_size
    with open(path, "r+b") as fh:
        mapping = mmap.mmap(fh.fileno(), size)
    try:
        mapping[:] = padded(intents("docs/**"), size)
        mapping.flush()
        assert_same(kept, ws, lambda: write("src/a/b/new.py"))
        mapping[:] = padded(intents("src/**"), size)
        mapping.flush()
        assert_same(kept, ws, lambda: write("src/a/b/new.py"), fresh_denies=False)
        assert kept.pre(write("src/a/b/new.py")).allowed
    finally:
        mapping.close()


# ------------------------------------------------------------------------------------------------- sessions
def test_session_changed_by_another_process(kept: Governor, ws: Path) -> None:
    subprocess.run([sys.executable, "-m", "orchestrator", "intent", "select", "INT-003", "--session", "s1",
                    "--workspace", str(ws)], check=True, cwd=ROOT, capture_output=True,
                   env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert_same(kept, ws, lambda: write("src/a/b/new.py"))
    v = kept.pre(write("src/a/b/new.py"))
    assert v.error["type"] == "scope-violation" and v.error["intent"] == "INT-003"


def test_read_stamp_written_by_another_governor(kept: Governor, ws: Path) -> None:
    edit = lambda: to_call("Edit", {"file_path": "src/app.py"}, session_id="s1")  # noqa: E731
    assert kept.pre(edit()).allowed
    other = Governor(ws)  # a separate post-hook process, say
    read = to_call("Read", {"file_path": "src/app.py"}, session_id="s1")
    other.pre(read)
    other.post(read)
    (ws / "src" / "app.py").write_text("changed by someone else\n")
    assert_same(kept, ws, edit)
    assert kept.pre(edit()).error["type"] == "stale-file"


def test_session_replaced_with_restored_mtime(kept: Governor, ws: Path) -> None:
    path = ws / ".orchestration" / "run" / "sessions" / "s1.json"
    before = path.stat()
    tmp = path.with_name("s1.json.tmp")
    tmp.write_text(json.dumps({"intent_id": "INT-003", "reads": {}}))
    os.utime(tmp, ns=(before.st_atime_ns, before.st_mtime_ns))
    os.replace(tmp, path)
    assert_same(kept, ws, lambda: write("src/a/b/new.py"))


def test_session_edited_in_place_through_a_hard_link(kept: Governor, ws: Path) -> None:
    path = ws / ".orchestration" / "run" / "sessions" / "s1.json"
    link = ws / "docs" / "s1.json"
    os.link(path, link)
    warm(kept, "src/a/b/new.py")
    with open(link, "r+", encoding="utf-8") as fh:
        fh.truncate(0)
        fh.write(json.dumps({"intent_id": "INT-003", "reads": {}}))
    assert_same(kept, ws, lambda: write("src/a/b/new.py"))


def test_sessions_dir_replaced_by_a_prepared_one(kept: Governor, ws: Path) -> None:
    run = ws / ".orchestration" / "run"
    other = run / "sessions_new"
    other.mkdir()
    (other / "s1.json").write_text(json.dumps({"intent_id": "INT-003", "reads": {}}))
    os.rename(run / "sessions", run / "sessions_old")
    os.rename(other, run / "sessions")
    assert_same(kept, ws, lambda: write("src/a/b/new.py"))


# ---------------------------------------------------------------------------------------------------- mounts
def test_bind_mount_over_a_directory(ws: Path, tmp_path: Path) -> None:
    (ws / INTENTS).write_text(intents("src/**"))
    (ws / "src" / "a" / "b").mkdir(parents=True)
    evil = tmp_path / "evil"
    evil.mkdir()
    os.symlink(ws / ".orchestration", evil / "b")

    def body() -> dict:
        gov = warm_governor(ws)
        bind(evil, ws / "src" / "a")  # src/a/b is now a symlink into .orchestration
        kept_, fresh = compare(gov, ws, lambda: write("src/a/b/policy.yaml"))
        return {"kept": kept_, "fresh": fresh}

    result = in_private_mount_namespace(body)
    assert result["fresh"][0] == "deny" and result["kept"] == result["fresh"]


def test_bind_mount_over_a_config_file(ws: Path, tmp_path: Path) -> None:
    (ws / INTENTS).write_text(intents("src/**"))
    (ws / "src" / "a" / "b").mkdir(parents=True)
    narrower = tmp_path / "intents.yaml"
    narrower.write_text(intents("docs/**"))

    def body() -> dict:
        gov = warm_governor(ws, "src/a/b/new.py")
        bind(narrower, ws / INTENTS)
        kept_, fresh = compare(gov, ws, lambda: write("src/a/b/new.py"))
        return {"kept": kept_, "fresh": fresh}

    result = in_private_mount_namespace(body)
    assert result["fresh"][0] == "deny" and result["kept"] == result["fresh"]


def test_unmount_reveals_a_symlink_under_a_directory(ws: Path, tmp_path: Path) -> None:
    (ws / INTENTS).write_text(intents("src/**"))
    (ws / "src" / "a").mkdir(parents=True)
    os.symlink(ws / ".orchestration", ws / "src" / "a" / "b")  # hidden by the mount below
    cover = tmp_path / "cover"
    (cover / "b").mkdir(parents=True)

    def body() -> dict:
        bind(cover, ws / "src" / "a")
        gov = warm_governor(ws, "src/a/b/new.py")
        libc = ctypes.CDLL(None, use_errno=True)
        libc.umount2.argtypes = [ctypes.c_char_p, ctypes.c_int]
        if libc.umount2(os.fsencode(ws / "src" / "a"), 2) != 0:  # MNT_DETACH
            raise OSError(ctypes.get_errno(), "umount")
        kept_, fresh = compare(gov, ws, lambda: write("src/a/b/policy.yaml"))
        return {"kept": kept_, "fresh": fresh}

    result = in_private_mount_namespace(body)
    assert result["fresh"][0] == "deny" and result["kept"] == result["fresh"]


# ----------------------------------------------------------------------------------------------- concurrency
def test_threads_sharing_a_governor_see_every_change_made_before_their_call(kept: Governor, ws: Path) -> None:
    """The daemon evaluates many sessions at once with one Governor: a thread whose call starts after a change (an
    intent's scope edited in place, same size, as fast as the loop goes) must see it, however the other threads'
    loads interleave — as a fresh Governor does."""
    path = ws / INTENTS
    scopes = ("src/**", "zzz/**")  # equal length: the file's size never changes, only its content
    stop = threading.Event()
    errors: list[BaseException] = []

    def hammer() -> None:  # other sessions' calls, racing the loads after each change
        try:
            while not stop.is_set():
                kept.pre(write("src/a/b/new.py"))
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=hammer) for _ in range(4)]
    for t in threads:
        t.start()
    try:
        for round_ in range(40):
            scope = scopes[round_ % 2]
            with open(path, "r+b") as fh:  # in place: same inode, same size
                fh.write(intents(scope).encode())
            expected = "allow" if scope == "src/**" else "deny"
            results: list[str] = []
            checkers = [threading.Thread(target=lambda: results.append(kept.pre(write("src/a/b/new.py")).decision))
                        for _ in range(3)]
            for t in checkers:
                t.start()
            for t in checkers:
                t.join()
            assert results == [expected] * 3, (round_, scope, results)
    finally:
        stop.set()
        for t in threads:
            t.join()
    assert errors == []
    assert_same(kept, ws, lambda: write("src/a/b/new.py"), fresh_denies=False)


# ------------------------------------------------------------------------------------- the racy-key guard
def test_a_racy_memo_is_checked_against_the_bytes(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A coarse filesystem clock can leave mtime, ctime and size unchanged by a same-size rewrite. This kernel stamps
    finer than that, so the test plays the coarse clock: after the rewrite it puts the new stat key into the memo."""
    path = str(ws / INTENTS)
    loads: list[str] = []
    monkeypatch.setattr(fsutil, "RACY_NS", 10**18)  # "recent" however slow this machine is today

    def load() -> str:
        return confcache.load(path, "racy-test", validate=lambda _p, text: loads.append(text) or text,
                              materialise=str, missing=lambda: "")

    first = load()
    assert "src/**" in first
    with open(path, "r+", encoding="utf-8") as fh:
        fh.write(first.replace("src/**", "doc/**"))
    _key, digest, obj, recent = confcache._memory[(path, "racy-test")]
    assert recent, "written just now: the key alone must not vouch for the contents"
    confcache._memory[(path, "racy-test")] = (fsutil.stat_key(os.stat(path)), digest, obj, recent)
    assert "doc/**" in load()  # the key matched, but a racy memo is re-read and hashed
    assert len(loads) == 2
    # once the key is old enough (no clock is waited for: the window is closed), the key alone vouches
    monkeypatch.setattr(fsutil, "RACY_NS", 0)
    again = load()
    assert confcache._memory[(path, "racy-test")][3] is False
    assert load() is again and len(loads) == 2  # same bytes, then a trusted key: validated twice in all


def test_a_recent_session_file_is_read_again(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fsutil, "RACY_NS", 10**18)  # "recent" however slow this machine is today
    gov = Governor(ws, approval_channel="deny")
    gov.select_intent("INT-001", "s1")
    state = gov.sessions.get("s1")
    assert "s1" not in gov.sessions._cache, "written just now: not kept by its key"
    monkeypatch.setattr(fsutil, "RACY_NS", 0)
    assert gov.sessions.get("s1") == state and "s1" in gov.sessions._cache


def test_a_long_lived_store_keeps_a_bounded_number_of_sessions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The daemon serves every session of a workspace for as long as requests come (its idle timeout never
    fires): the states it keeps in memory must not grow with every session it has ever seen."""
    from orchestrator.state import sessions as _sessions

    monkeypatch.setattr(fsutil, "RACY_NS", 0)  # every key trusted: each state would be kept
    monkeypatch.setattr(_sessions, "MAX_CACHED", 8)
    monkeypatch.setattr(_sessions, "MAX_NAMES", 16)
    store = _sessions.SessionStore(tmp_path)
    n = 40
    for i in range(n):
        store.update(f"s{i}", lambda s, i=i: s.update(intent_id=f"INT-{i}"))
        assert store.get(f"s{i}")["intent_id"] == f"INT-{i}"
    assert len(store._cache) <= _sessions.MAX_CACHED
    assert f"s{n - 1}" in store._cache, "the newest is kept"
    assert store.get("s0")["intent_id"] == "INT-0", "an evicted one is read again"
    assert len(store._paths) <= _sessions.MAX_NAMES and len(store._names) <= _sessions.MAX_NAMES


# ------------------------------------------------------------------------- randomized operation sequences
class _World:
    """The operations a test may apply to a workspace: each leaves it in a state a Governor must judge afresh."""

    def __init__(self, ws: Path, tmp: Path, rng: random.Random) -> None:
        self.ws, self.tmp, self.rng = ws, tmp, rng
        self.n = 0
        self.intents_size = len(intents("src/**"))

    def _unique(self) -> str:
        self.n += 1
        return f"n{self.n}"

    def _dir(self) -> Path:
        return self.ws / "src" / "a" / "b"

    def write_file(self) -> None:
        d = self._dir()
        if d.is_dir() and not d.is_symlink():
            (d / self.rng.choice(["new.py", "f.py", "g.py"])).write_text(self._unique())

    def rename_dir_away(self) -> None:
        d = self._dir()
        if d.exists() or d.is_symlink():
            os.rename(d, self.ws / "src" / "a" / self._unique())

    def restore_dir(self) -> None:
        d = self._dir()
        if d.is_symlink():
            d.unlink()
        if not d.exists():
            d.mkdir(parents=True)

    def symlink_dir(self) -> None:
        self.rename_dir_away()
        if not (self.ws / "src" / "a").is_dir():
            return
        target = self.rng.choice(["../../docs", "../../.orchestration", str(self.tmp), "../../src"])
        os.symlink(target, self._dir())

    def swap_ancestor(self) -> None:
        a = self.ws / "src" / "a"
        if a.is_symlink():
            a.unlink()
            a.mkdir()
        elif a.exists():
            os.rename(a, self.ws / "src" / self._unique())
            os.symlink(self.rng.choice(["../docs", "../.orchestration"]), a)

    def link_final(self) -> None:
        d = self._dir()
        if d.is_dir() and not d.is_symlink():
            (d / "new.py").unlink(missing_ok=True)
            os.symlink(self.rng.choice([self.ws / INTENTS, self.ws / "docs" / "x.md"]), d / "new.py")

    def hard_link(self) -> None:
        d = self._dir()
        if d.is_dir() and not d.is_symlink() and (d / "f.py").exists():
            os.link(d / "f.py", self.ws / "docs" / self._unique())

    def intents_in_place(self) -> None:  # same size, same inode, mtime restored
        path = self.ws / INTENTS
        before = path.stat()
        with open(path, "r+b") as fh:
            fh.write(padded(intents(self.rng.choice(["src/**", "doc/**", "src/a/**"])), self.intents_size + 40))
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))

    def intents_replace(self) -> None:
        tmp = self.ws / ".orchestration" / "tmp.yaml"
        tmp.write_bytes(padded(intents(self.rng.choice(["src/**", "docs/**"])), self.intents_size + 40))
        os.replace(tmp, self.ws / INTENTS)

    def intents_mmap(self) -> None:  # msync'ed: the next mapping's write faults on a clean page and is stamped
        path = self.ws / INTENTS
        with open(path, "r+b") as fh:
            size = os.fstat(fh.fileno()).st_size
            with mmap.mmap(fh.fileno(), size) as mapping:
                mapping[:] = padded(intents(self.rng.choice(["src/**", "doc/**"])), size)
                mapping.flush()

    def intents_broken(self) -> None:
        (self.ws / INTENTS).write_bytes(padded("active_intents: [", self.intents_size + 40))

    def ignore_edit(self) -> None:
        (self.ws / ".orchestration" / ".intentignore").write_text(self.rng.choice(["", "src/a/b/new.py\n", "*.py\n"]))

    def policy_edit(self) -> None:
        (self.ws / ".orchestration" / "policy.yaml").write_text(
            self.rng.choice(["delete_is_destructive: false\n", "delete_is_destructive: true\n", "{"]))

    def session_select(self) -> None:
        intent = self.rng.choice(["INT-001", "INT-003"])
        try:
            Governor(self.ws).select_intent(intent, "s1")  # another process's Governor
        except Exception:  # noqa: BLE001 - broken intents: nothing selected, as in that process
            pass

    def session_replace(self) -> None:  # atomic, mtime restored
        path = self.ws / ".orchestration" / "run" / "sessions" / "s1.json"
        before = path.stat() if path.exists() else None
        tmp = path.with_name("s1.tmp")
        tmp.write_text(json.dumps({"intent_id": self.rng.choice(["INT-001", "INT-003"]), "reads": {}}))
        if before is not None:
            os.utime(tmp, ns=(before.st_atime_ns, before.st_mtime_ns))
        os.replace(tmp, path)

    OPERATIONS = ("write_file", "rename_dir_away", "restore_dir", "symlink_dir", "swap_ancestor", "link_final",
                  "hard_link", "intents_in_place", "intents_replace", "intents_mmap", "intents_broken", "ignore_edit",
                  "policy_edit", "session_select", "session_replace")


def _probes(ws: Path) -> list[Callable[[], Any]]:
    def call(tool: str, session: str = "s1", cwd: str | None = None, **args: Any) -> Callable[[], Any]:
        fields: dict[str, Any] = {"session_id": session} if cwd is None else {"session_id": session, "cwd": cwd}
        return lambda: to_call(tool, args, **fields)

    return [
        call("Write", file_path="src/a/b/new.py", content="x"),
        call("Write", file_path="src/a/b/policy.yaml", content="x"),
        call("Edit", file_path="src/a/b/f.py", old_string="a", new_string="b"),
        call("Write", file_path="new.py", content="x", cwd=str(ws / "src" / "a" / "b")),
        call("Write", file_path="src/./a//b/../b/g.py", content="x"),
        call("Write", file_path="docs/x.md", content="x"),
        call("Delete", file_path="src/app.py"),
        call("Bash", command="echo hi > src/a/b/new.py"),
        call("Write", file_path="src/a/b/new.py", content="x", session="s2"),
    ]


@pytest.mark.parametrize("seed", range(12))
def test_random_operation_sequences(ws: Path, tmp_path: Path, seed: int) -> None:
    """Randomized sequences of writes, renames, symlink swaps, hard links, governance and session edits (in place
    with restored mtimes, atomic replaces, shared mmap writes): after every operation, every probe call gets the
    same verdict and the same resolved paths from the long-lived Governor as from a fresh one."""
    (ws / INTENTS).write_bytes(padded(intents("src/**"), len(intents("src/**")) + 40))
    (ws / "src" / "a" / "b").mkdir(parents=True)
    rng = random.Random(seed)
    world = _World(ws, tmp_path / "outside", rng)
    (tmp_path / "outside").mkdir()
    gov = Governor(ws, approval_channel="deny")
    gov.select_intent("INT-001", "s1")
    probes = _probes(ws)
    for make in probes:  # warm every memo
        gov.pre(make())
    history: list[str] = []
    for _ in range(14):
        op = rng.choice(_World.OPERATIONS)
        history.append(op)
        getattr(world, op)()
        for make in rng.sample(probes, 4):
            kept_call = make()
            kept = outcome(gov.pre(kept_call), kept_call)
            fresh_call = make()
            fresh = outcome(fresh_pre(ws, fresh_call), fresh_call)
            assert kept == fresh, (seed, history, kept_call.tool, kept_call.paths)


# ------------------------------------------------------------------- the sandbox's secret deny list (issue 21)
@pytest.mark.skipif(__import__("orchestrator.sandbox.landlock", fromlist=["abi"]).abi() < 1,
                    reason="this kernel has no Landlock")
@pytest.mark.parametrize("change", ["create", "rename-into", "delete", "swap-directory", "new-subdirectory"])
def test_secret_deny_list_of_a_long_lived_governor(kept: Governor, ws: Path, monkeypatch: pytest.MonkeyPatch,
                                                    change: str) -> None:
    """orchestrator/secrets/scan.py remembers each directory's secret names by its stat key: with the racy window
    closed (every key trusted at once, the hardest case for the memo), a long-lived Governor's deny list still
    equals a fresh one's after every kind of change to the names in the tree."""
    from orchestrator.secrets import scan as secret_scan

    monkeypatch.setattr(fsutil, "RACY_NS", 0)
    secret_scan.clear()
    deep = ws / "src" / "a" / "b"
    (deep / "keep.env.example").write_text("x")
    (deep / "cfg.txt").write_text("x")
    if change == "delete":
        (deep / ".env").write_text("K=v")

    def deny(gov: Any) -> list[str]:
        v = gov.pre(to_call("Bash", {"command": "ls"}, session_id="s1", cwd=str(ws)), sandbox=True)
        return sorted(p for p in (v.sandbox or {}).get("deny_read", []) if p.startswith(str(ws)))

    deny(kept), deny(kept)  # the memo is warm
    if change == "create":
        (deep / ".env").write_text("K=v")
    elif change == "rename-into":
        os.rename(deep / "cfg.txt", deep / "id_rsa")
    elif change == "delete":
        (deep / ".env").unlink()
    elif change == "swap-directory":
        os.rename(deep, ws / "src" / "a" / "old")
        deep.mkdir()
        (deep / "server.pem").write_text("k")
    else:
        (deep / "new" / "deeper").mkdir(parents=True)
        (deep / "new" / "deeper" / "credentials.json").write_text("{}")
    long_lived = deny(kept)
    remembered = dict(secret_scan._MEMO)
    secret_scan.clear()  # a new process: nothing remembered
    assert long_lived == deny(Governor(ws, approval_channel="deny"))
    assert remembered, "the memo was in use"
    assert (long_lived != []) == (change != "delete")


# ------------------------------------------------ protected paths made read-only in the command's namespace (issue 28)
@pytest.mark.skipif(__import__("orchestrator.sandbox.landlock", fromlist=["abi"]).abi() < 1,
                    reason="this kernel has no Landlock")
@pytest.mark.parametrize("change", ["create", "rename-into", "delete", "swap-directory", "new-subdirectory",
                                    "intentignore-edited"])
def test_read_only_list_of_a_long_lived_governor(kept: Governor, ws: Path, monkeypatch: pytest.MonkeyPatch,
                                                  change: str) -> None:
    """orchestrator/sandbox/protected.py remembers each directory's protected entries by its stat key: with the racy
    window closed, a long-lived Governor's ``--ro`` list equals a fresh one's after every kind of change."""
    from orchestrator import sandbox
    from orchestrator.sandbox import protected

    monkeypatch.setattr(fsutil, "RACY_NS", 0)
    protected.clear()
    with open(ws / ".orchestration" / ".intentignore", "a") as fh:
        fh.write("vendor/\n*.golden\n")
    deep = ws / "src" / "a" / "b"
    (deep / "cfg.txt").write_text("x")
    if change == "delete":
        (deep / "vendor").mkdir()

    def read_only(gov: Any) -> list[str]:
        v = gov.pre(to_call("Bash", {"command": "python3 src/x.py"}, session_id="s1", cwd=str(ws)), sandbox=True)
        opts = sandbox.options_of(v.command) or []
        return sorted(value for key, value in zip(opts[::2], opts[1::2]) if key == "--ro")

    read_only(kept), read_only(kept)  # the memo is warm
    if change == "create":
        (deep / "vendor").mkdir()
    elif change == "rename-into":
        os.rename(deep / "cfg.txt", deep / "expected.golden")
    elif change == "delete":
        (deep / "vendor").rmdir()
    elif change == "swap-directory":
        os.rename(deep, ws / "src" / "a" / "old")
        deep.mkdir()
        (deep / "x.golden").write_text("k")
    elif change == "new-subdirectory":
        (deep / "new" / "deeper").mkdir(parents=True)
        (deep / "new" / "deeper" / "vendor").mkdir()
    else:
        with open(ws / ".orchestration" / ".intentignore", "a") as fh:
            fh.write("cfg.txt\n")
    long_lived = read_only(kept)
    remembered = dict(protected._MEMO)
    protected.clear()  # a new process: nothing remembered
    assert long_lived == read_only(Governor(ws, approval_channel="deny"))
    assert remembered, "the memo was in use"
    assert (long_lived != []) == (change != "delete")
