"""Attacks on the live caches: can a long-lived Governor answer differently from a fresh one?

Each test warms a ``live=True`` Governor (directories trusted, config and sessions cached), changes the world the
way a hostile agent (or anything else running on the machine) could, then compares the live verdict of one call
with the verdict of a fresh ``Governor(ws, live=False)`` for the same call at the same moment (decision, error type,
resolved paths). The fresh Governor stands for a new process, so the in-memory config cache is cleared for it.

Passing tests document attacks that are handled (seven of them were real discrepancies when this file was
written, fixed since). ``xfail(strict=True)`` tests document the limits of inotify that remain (docs/security.md).
"""

from __future__ import annotations

import ctypes
import json
import mmap
import os
import platform
import shutil
import sys
import textwrap
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from orchestrator import confcache
from orchestrator.pipeline import Governor
from orchestrator.tools import to_call
from tests.test_livecache import _intents as _one_intent

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux-only")

_libc = ctypes.CDLL(None, use_errno=True)


# ---------------------------------------------------------------------------------------------------- helpers
def write(path: str, session: str = "s1", cwd: str | None = None) -> Any:
    fields: dict[str, Any] = {"session_id": session}
    if cwd is not None:
        fields["cwd"] = cwd
    return to_call("Write", {"file_path": path, "content": "x = 1\n"}, **fields)


def outcome(verdict: Any, call: Any) -> tuple[str, str | None, list[str]]:
    return verdict.decision, (verdict.error or {}).get("type"), list(call.resolved)


def compare(gov: Governor, ws: Path, make: Callable[[], Any]) -> tuple[tuple, tuple]:
    """(live outcome, fresh outcome) of the same call at the same moment."""
    live_call = make()
    live = outcome(gov.pre(live_call), live_call)
    confcache.clear_memory()  # a fresh process has no in-memory config cache
    fresh_call = make()
    fresh = outcome(Governor(ws, live=False, approval_channel="deny").pre(fresh_call), fresh_call)
    return live, fresh


def assert_same(gov: Governor, ws: Path, make: Callable[[], Any], *, fresh_denies: bool = True) -> None:
    live, fresh = compare(gov, ws, make)
    if fresh_denies:
        assert fresh[0] == "deny", f"the attack should matter to a fresh governor: {fresh}"
    assert live == fresh


def warm(gov: Governor, *paths: str) -> None:
    for _ in range(2):
        for p in paths:
            assert gov.pre(write(p)).allowed, p
    assert gov._live is not None, "the live cache must be in use for these tests to mean anything"


def _intents(scope: str) -> str:
    """INT-001 owning ``scope`` (as in test_livecache), plus INT-003 owning docs/ for the session attacks."""
    return _one_intent(scope) + textwrap.indent(textwrap.dedent("""\
        - id: INT-003
          name: Docs now
          status: IN_PROGRESS
          owned_scope: ["docs/**"]
        """), "  ")


def _padded(text: str, length: int) -> bytes:
    """``text`` as YAML of exactly ``length`` bytes (a trailing comment pads it)."""
    data = text.encode()
    assert len(data) + 2 <= length
    return data + b"#" + b"x" * (length - len(data) - 1)


@pytest.fixture
def live(ws: Path) -> Any:
    (ws / "src" / "a" / "b").mkdir(parents=True)
    gov = _warm_live(ws, "src/a/b/new.py")
    assert {"src", "src/a", "src/a/b"} <= gov._live.dirs
    yield gov
    gov.close()


def _renameat2_exchange(a: Path, b: Path) -> None:
    fn = _libc.renameat2
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    AT_FDCWD, RENAME_EXCHANGE = -100, 2
    if fn(AT_FDCWD, os.fsencode(a), AT_FDCWD, os.fsencode(b), RENAME_EXCHANGE) != 0:
        err = ctypes.get_errno()
        pytest.skip(f"renameat2(RENAME_EXCHANGE): {os.strerror(err)}")


# ====================================================================================== handled (regressions)
def test_rename_exchange_of_a_trusted_dir_with_a_symlink(live: Governor, ws: Path) -> None:
    os.symlink("../../.orchestration", ws / "src" / "a" / "lnk")
    _renameat2_exchange(ws / "src" / "a" / "b", ws / "src" / "a" / "lnk")
    assert_same(live, ws, lambda: write("src/a/b/policy.yaml"))


def test_rename_exchange_of_an_ancestor_with_a_symlink(live: Governor, ws: Path) -> None:
    os.symlink("docs", ws / "srclink")
    _renameat2_exchange(ws / "src", ws / "srclink")  # src is now a symlink to docs
    assert_same(live, ws, lambda: write("src/a/b/new.py"))


def test_trusted_dir_moved_elsewhere_and_replaced_both_names_checked(live: Governor, ws: Path) -> None:
    os.rename(ws / "src" / "a" / "b", ws / "docs" / "b")  # same inode, same watch descriptor, new name
    os.symlink("../../.orchestration", ws / "src" / "a" / "b")
    assert_same(live, ws, lambda: write("src/a/b/policy.yaml"))
    assert_same(live, ws, lambda: write("docs/b/new.py"))
    # and the moved directory, now trusted under its new name, is swapped again
    os.rename(ws / "docs" / "b", ws / "docs" / "c")
    os.symlink("../.orchestration", ws / "docs" / "b")
    assert_same(live, ws, lambda: write("docs/b/policy.yaml"))


def test_rmdir_while_held_open_then_symlink(live: Governor, ws: Path) -> None:
    # an open descriptor defers IN_DELETE_SELF until the last close; the parent's IN_DELETE must suffice
    fd = os.open(ws / "src" / "a" / "b", os.O_RDONLY | os.O_DIRECTORY)
    try:
        (ws / "src" / "a" / "b" / "new.py").unlink(missing_ok=True)
        os.rmdir(ws / "src" / "a" / "b")
        os.symlink("../../.orchestration", ws / "src" / "a" / "b")
        assert_same(live, ws, lambda: write("src/a/b/policy.yaml"))
    finally:
        os.close(fd)


def test_deep_nesting_middle_component_swapped(ws: Path) -> None:
    parts = [f"d{i}" for i in range(40)]
    deep = "src/" + "/".join(parts)
    (ws / deep).mkdir(parents=True)
    gov = _warm_live(ws, f"{deep}/f.py")
    assert deep in gov._live.dirs
    middle = ws / "src" / "/".join(parts[:20])
    os.rename(middle, ws / "src" / "moved")
    os.symlink(os.path.relpath(ws / "docs", middle.parent), middle)
    assert_same(gov, ws, lambda: write(f"{deep}/f.py"))
    gov.close()


@pytest.mark.parametrize("spelling", [
    "src/a/b/policy.yaml",
    "src/./a//b/policy.yaml",
    "src/a/b/../b/policy.yaml",
    "{ws}/src/a/b/policy.yaml",
    "/proc/self/root{ws}/src/a/b/policy.yaml",
    "src/a/b/policy.yaml/",
])
def test_spellings_of_a_memoised_path_after_a_swap(live: Governor, ws: Path, spelling: str) -> None:
    raw = spelling.format(ws=ws)
    (ws / "src" / "a" / "b" / "policy.yaml").write_text("not governance\n")
    live.pre(write(raw))
    live.pre(write(raw))  # memoised where the walk was lexical
    os.rename(ws / "src" / "a" / "b", ws / "src" / "a" / "old")
    os.symlink("../../.orchestration", ws / "src" / "a" / "b")
    live_, fresh = compare(live, ws, lambda: write(raw))
    assert live_ == fresh and fresh[0] == "deny"


def test_relative_path_from_a_trusted_cwd_after_the_cwd_is_swapped(live: Governor, ws: Path) -> None:
    cwd = str(ws / "src" / "a" / "b")
    assert live.pre(write("new.py", cwd=cwd)).allowed
    assert live.pre(write("new.py", cwd=cwd)).allowed
    os.rename(ws / "src" / "a", ws / "src" / "a_old")
    os.symlink("../docs", ws / "src" / "a")
    (ws / "docs" / "b").mkdir()
    assert_same(live, ws, lambda: write("new.py", cwd=cwd))


def test_home_inside_a_trusted_dir_then_swapped(live: Governor, ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(ws / "src" / "a"))
    assert live.pre(write("~/b/new.py")).allowed
    os.rename(ws / "src" / "a" / "b", ws / "src" / "a" / "c")
    os.symlink("../../.orchestration", ws / "src" / "a" / "b")
    assert_same(live, ws, lambda: write("~/b/policy.yaml"))


def test_final_directory_component_with_trailing_slash_swapped(live: Governor, ws: Path) -> None:
    (ws / "src" / "a" / "b" / "sub").mkdir()
    live.pre(write("src/a/b/sub/"))
    live.pre(write("src/a/b/sub/"))
    os.rename(ws / "src" / "a" / "b" / "sub", ws / "src" / "a" / "b" / "sub_old")
    os.symlink("../../../.orchestration", ws / "src" / "a" / "b" / "sub")
    assert_same(live, ws, lambda: write("src/a/b/sub/"))


def test_case_variant_of_a_trusted_dir_is_not_trusted(live: Governor, ws: Path) -> None:
    os.symlink(".orchestration", ws / "SRC")
    assert_same(live, ws, lambda: write("SRC/policy.yaml"))
    os.symlink("../.orchestration", ws / "src" / "A")
    assert_same(live, ws, lambda: write("src/A/policy.yaml"))


def test_chmod_of_a_trusted_dir(live: Governor, ws: Path) -> None:
    os.chmod(ws / "src" / "a" / "b", 0)
    try:
        live_, fresh = compare(live, ws, lambda: write("src/a/b/new.py"))
        assert live_ == fresh
    finally:
        os.chmod(ws / "src" / "a" / "b", 0o755)


def test_orchestration_dir_exchanged_with_a_prepared_copy(live: Governor, ws: Path) -> None:
    copy = ws / "orch_copy"
    shutil.copytree(ws / ".orchestration", copy, symlinks=True)
    (copy / "active_intents.yaml").write_text(_intents("docs/**"))
    _renameat2_exchange(ws / ".orchestration", copy)
    assert_same(live, ws, lambda: write("src/a/b/new.py"))


def test_sessions_dir_replaced_by_a_prepared_one(live: Governor, ws: Path) -> None:
    run = ws / ".orchestration" / "run"
    other = run / "sessions_new"
    other.mkdir()
    (other / "s1.json").write_text(json.dumps({"intent_id": "INT-003", "reads": {}}))
    os.rename(run / "sessions", run / "sessions_old")
    os.rename(other, run / "sessions")
    assert_same(live, ws, lambda: write("src/a/b/new.py"))


def test_config_symlinked_to_an_agent_file_is_not_cached(live: Governor, ws: Path) -> None:
    target = ws / "src" / "ignore.txt"
    target.write_text("docs/\n")
    ignore = ws / ".orchestration" / ".intentignore"
    ignore.unlink(missing_ok=True)
    os.symlink(target, ignore)
    assert live.pre(write("src/a/b/new.py")).allowed and live.pre(write("src/a/b/new.py")).allowed
    target.write_text("src/a/\n")  # no event reaches .orchestration: the symlinked config must not be cached
    assert_same(live, ws, lambda: write("src/a/b/new.py"))


def test_config_edited_in_place_through_a_hard_link_with_pwrite(live: Governor, ws: Path) -> None:
    intents = ws / ".orchestration" / "active_intents.yaml"
    link = ws / "docs" / "hl.yaml"
    os.link(intents, link)
    warm(live, "src/a/b/new.py")
    size = intents.stat().st_size
    fd = os.open(link, os.O_RDWR)
    try:
        os.pwrite(fd, _padded(_intents("docs/**"), size), 0)
        assert_same(live, ws, lambda: write("src/a/b/new.py"))
    finally:
        os.close(fd)


def test_forked_child_swaps_a_dir_while_parent_cache_is_live(live: Governor, ws: Path) -> None:
    pid = os.fork()
    if pid == 0:
        try:
            live.pre(write("src/a/b/new.py"))  # the child's copy of the cache is dead: it starts its own
            os.rename(ws / "src" / "a" / "b", ws / "src" / "a" / "c")
            os.symlink("../../.orchestration", ws / "src" / "a" / "b")
        finally:
            os._exit(0)
    os.waitpid(pid, 0)
    assert_same(live, ws, lambda: write("src/a/b/policy.yaml"))


def _in_private_mount_namespace(body: Callable[[], dict]) -> dict:
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


def _bind(source: Path, target: Path) -> None:
    MS_BIND = 4096
    if _libc.mount(os.fsencode(source), os.fsencode(target), None, MS_BIND, None) != 0:
        raise OSError(ctypes.get_errno(), f"mount --bind {source} {target}")


def _evil_tree(ws: Path, tmp_path: Path) -> Path:
    """src/a/b in the workspace, and a tree elsewhere whose b is a symlink into .orchestration (to mount over src/a)."""
    (ws / "src" / "a" / "b").mkdir(parents=True)
    evil = tmp_path / "evil"
    evil.mkdir()
    os.symlink(ws / ".orchestration", evil / "b")
    return evil


def _warm_live(ws: Path, *paths: str) -> Governor:
    """A live Governor with INT-001 selected for session s1, warmed by writes to ``paths``."""
    gov = Governor(ws, approval_channel="deny", live=True)
    gov.select_intent("INT-001", "s1")
    warm(gov, *(paths or ("src/a/b/new.py",)))
    return gov


def test_bind_mount_over_a_trusted_directory(ws: Path, tmp_path: Path) -> None:
    evil = _evil_tree(ws, tmp_path)

    def body() -> dict:
        gov = _warm_live(ws)
        _bind(evil, ws / "src" / "a")  # src/a/b is now a symlink into .orchestration
        live, fresh = compare(gov, ws, lambda: write("src/a/b/policy.yaml"))
        return {"live": live, "fresh": fresh}

    result = _in_private_mount_namespace(body)
    assert result["fresh"][0] == "deny"
    assert result["live"] == result["fresh"]  # mount(2) raises no inotify event: /proc/self/mounts POLLPRI kills


def test_bind_mount_over_a_config_file(ws: Path, tmp_path: Path) -> None:
    (ws / "src" / "a" / "b").mkdir(parents=True)
    narrower = tmp_path / "intents.yaml"
    narrower.write_text(_intents("docs/**"))

    def body() -> dict:
        gov = _warm_live(ws, "src/a/b/new.py")
        _bind(narrower, ws / ".orchestration" / "active_intents.yaml")
        live, fresh = compare(gov, ws, lambda: write("src/a/b/new.py"))
        return {"live": live, "fresh": fresh}

    result = _in_private_mount_namespace(body)
    assert result["fresh"][0] == "deny"
    assert result["live"] == result["fresh"]


def test_unmount_reveals_a_symlink_under_a_trusted_directory(ws: Path, tmp_path: Path) -> None:
    (ws / "src" / "a").mkdir(parents=True)
    os.symlink(ws / ".orchestration", ws / "src" / "a" / "b")  # hidden by the mount below while trusted
    cover = tmp_path / "cover"
    (cover / "b").mkdir(parents=True)

    def body() -> dict:
        _bind(cover, ws / "src" / "a")
        gov = _warm_live(ws, "src/a/b/new.py")
        assert "src/a/b" in gov._live.dirs
        MNT_DETACH = 2
        _libc.umount2.argtypes = [ctypes.c_char_p, ctypes.c_int]
        if _libc.umount2(os.fsencode(ws / "src" / "a"), MNT_DETACH) != 0:
            raise OSError(ctypes.get_errno(), "umount")
        live, fresh = compare(gov, ws, lambda: write("src/a/b/policy.yaml"))
        return {"live": live, "fresh": fresh}

    result = _in_private_mount_namespace(body)
    assert result["fresh"][0] == "deny"
    assert result["live"] == result["fresh"]


# ============================================================================================ NOT handled
def test_surrogate_escaped_alias_of_a_trusted_dir(ws: Path) -> None:
    (ws / "src" / "é").mkdir()
    alias = "src/\udcc3\udca9"  # os.fsencode(alias) == os.fsencode("src/é")
    gov = _warm_live(ws, f"{alias}/x.py")
    assert "src/é" in gov._live.dirs and alias not in gov._live.dirs  # one spelling: the bytes' decoding
    fd = os.open(ws / "src" / "é", os.O_RDONLY | os.O_DIRECTORY)  # defers IN_DELETE_SELF
    try:
        os.rmdir(ws / "src" / "é")  # the parent reports IN_DELETE "é", which drops "src/é", not the alias
        os.symlink("../.orchestration", ws / "src" / "é")
        assert_same(gov, ws, lambda: write(f"{alias}/policy.yaml"))  # live: allowed; fresh: governance-file
    finally:
        os.close(fd)
        gov.close()


def test_ancestor_of_the_root_renamed_and_replaced(tmp_path: Path) -> None:
    from tests.conftest import make_workspace

    ws = make_workspace(tmp_path / "outer" / "repo")
    (ws / "src" / "a" / "b").mkdir(parents=True)
    gov = _warm_live(ws, "src/a/b/new.py")
    os.rename(tmp_path / "outer", tmp_path / "outer_old")
    shutil.copytree(tmp_path / "outer_old", tmp_path / "outer", symlinks=True)
    shutil.rmtree(ws / "src" / "a" / "b")
    os.symlink(ws / ".orchestration", ws / "src" / "a" / "b")
    try:
        assert_same(gov, ws, lambda: write("src/a/b/policy.yaml"))  # live: allowed; fresh: governance-file
    finally:
        gov.close()


def test_thread_polls_after_another_thread_consumed_the_mount_notification(ws: Path, tmp_path: Path) -> None:
    evil = _evil_tree(ws, tmp_path)

    def body() -> dict:
        gov = _warm_live(ws)
        cache = gov._live
        real_poll = cache._poll
        a_polled, b_done = threading.Event(), threading.Event()

        def poll(timeout: int) -> list:
            ready = real_poll(timeout)
            if threading.current_thread() is thread_a:  # thread A is preempted right after its poll()
                a_polled.set()
                b_done.wait(1)  # with the fix, B waits for A's lock: this bounds how long
            return ready

        cache._poll = poll
        thread_a = threading.Thread(target=lambda: gov.pre(write("src/app.py", session="other")))
        _bind(evil, ws / "src" / "a")  # the mount happens before both calls start
        thread_a.start()
        assert a_polled.wait(5)
        try:
            live, fresh = compare(gov, ws, lambda: write("src/a/b/policy.yaml"))  # thread B: this thread
        finally:
            b_done.set()
            thread_a.join()
        return {"live": live, "fresh": fresh}

    result = _in_private_mount_namespace(body)
    assert result["fresh"][0] == "deny"
    assert result["live"] == result["fresh"]  # live: allowed src/a/b/policy.yaml; fresh: governance-file


class _HookedSet(set):
    """``live.dirs`` that runs ``action`` once, the first time ``key`` is looked up (a thread switch there)."""

    def __init__(self, items: set, key: str, action: Callable[[], None]) -> None:
        super().__init__(items)
        self.key, self.action, self.fired = key, action, False

    def __contains__(self, item: object) -> bool:
        found = super().__contains__(item)
        if item == self.key and not self.fired:
            self.fired = True
            self.action()
        return found


def _other_thread_calls_pre(gov: Governor) -> None:
    t = threading.Thread(target=lambda: gov.pre(write("src/app.py", session="other")))
    t.start()
    t.join()


def test_thread_drops_the_start_dir_before_gen_is_read(ws: Path) -> None:
    (ws / "src" / "a").mkdir()
    gov = _warm_live(ws, "src/a/x.py")
    cache = gov._live
    assert {"src", "src/a"} <= cache.dirs

    def switch_to_other_thread() -> None:  # thread A is between `dirs = live.dirs` and `gen = live.gen`
        os.rename(ws / "src" / "a", ws / "src" / "a_old")
        os.symlink("../docs", ws / "src" / "a")
        (ws / "docs" / "b").mkdir()
        _other_thread_calls_pre(gov)  # thread B's refresh applies the events: "src/a" dropped, gen bumped

    cache.dirs = _HookedSet(cache.dirs, "src/a", switch_to_other_thread)
    gov.pre(write("src/a/b/x.py"))  # the racing call itself may answer either way
    assert gov._live is cache and "src/a" not in cache.dirs
    try:
        # no concurrency any more: "src/a/b" is trusted although "src/a" is a symlink to docs
        assert_same(gov, ws, lambda: write("src/a/b/y.py"))  # live: allowed; fresh: scope-violation docs/b/y.py
    finally:
        gov.close()


def test_thread_applies_events_between_watch_and_trust(ws: Path) -> None:
    (ws / "src" / "a").mkdir()
    gov = _warm_live(ws, "src/a/x.py")
    (ws / "src" / "a" / "b").mkdir()
    cache = gov._live
    original = cache.watch_dir

    def watch_then_switch(rel: str, full: str) -> bool:
        ok = original(rel, full)
        if rel == "src/a/b":
            cache.watch_dir = original
            os.rename(ws / "src" / "a" / "b", ws / "src" / "a" / "b_old")
            os.symlink("../../.orchestration", ws / "src" / "a" / "b")
            _other_thread_calls_pre(gov)  # thread B applies MOVE_SELF / MOVED_FROM / CREATE: nothing to drop yet
        return ok

    cache.watch_dir = watch_then_switch
    gov.pre(write("src/a/b/policy.yaml"))  # the racing call itself may answer either way
    assert gov._live is cache
    try:
        assert_same(gov, ws, lambda: write("src/a/b/policy.yaml"))  # live: allowed; fresh: governance-file
    finally:
        gov.close()


def test_session_replaced_with_restored_mtime(live: Governor, ws: Path) -> None:
    path = ws / ".orchestration" / "run" / "sessions" / "s1.json"
    before = path.stat()
    tmp = path.with_name("s1.json.tmp")
    tmp.write_text(json.dumps({"intent_id": "INT-003", "reads": {}}))
    os.utime(tmp, ns=(before.st_atime_ns, before.st_mtime_ns))
    os.replace(tmp, path)  # IN_MOVED_TO s1.json: the live cache drops the session, then reloads it stale
    assert_same(live, ws, lambda: write("src/a/b/new.py"))  # live: allowed (INT-001); fresh: scope-violation


def test_session_edited_in_place_through_a_hard_link(live: Governor, ws: Path) -> None:
    path = ws / ".orchestration" / "run" / "sessions" / "s1.json"
    link = ws / "docs" / "s1.json"
    os.link(path, link)
    warm(live, "src/a/b/new.py")
    with open(link, "r+", encoding="utf-8") as fh:
        fh.truncate(0)
        fh.write(json.dumps({"intent_id": "INT-003", "reads": {}}))
    assert_same(live, ws, lambda: write("src/a/b/new.py"))  # live: allowed (INT-001); fresh: scope-violation


class _IOCB(ctypes.Structure):
    _fields_ = [("aio_data", ctypes.c_uint64), ("aio_key", ctypes.c_uint32), ("aio_rw_flags", ctypes.c_int32),
                ("aio_lio_opcode", ctypes.c_uint16), ("aio_reqprio", ctypes.c_int16), ("aio_fildes", ctypes.c_uint32),
                ("aio_buf", ctypes.c_uint64), ("aio_nbytes", ctypes.c_uint64), ("aio_offset", ctypes.c_int64),
                ("aio_reserved2", ctypes.c_uint64), ("aio_flags", ctypes.c_uint32), ("aio_resfd", ctypes.c_uint32)]


def _aio_pwrite(fd: int, data: bytes) -> None:
    """One ``io_submit`` PWRITE at offset 0 (Linux native AIO), waited for."""
    if platform.machine() != "x86_64":
        pytest.skip("syscall numbers below are x86_64")
    SYS_io_setup, SYS_io_destroy, SYS_io_getevents, SYS_io_submit = 206, 207, 208, 209
    syscall = _libc.syscall
    ctx = ctypes.c_ulong(0)
    if syscall(SYS_io_setup, 1, ctypes.byref(ctx)) != 0:
        pytest.skip("io_setup: " + os.strerror(ctypes.get_errno()))
    try:
        buf = ctypes.create_string_buffer(data, len(data))
        cb = _IOCB(aio_lio_opcode=1, aio_fildes=fd, aio_buf=ctypes.addressof(buf), aio_nbytes=len(data))
        cbs = (ctypes.POINTER(_IOCB) * 1)(ctypes.pointer(cb))
        assert syscall(SYS_io_submit, ctx, 1, cbs) == 1
        events = (ctypes.c_int64 * 4)()
        assert syscall(SYS_io_getevents, ctx, 1, 1, events, None) == 1
        assert events[2] == len(data)
    finally:
        syscall(SYS_io_destroy, ctx)


@pytest.mark.xfail(strict=True, reason="a native-AIO (io_submit) write raises no IN_MODIFY; while the descriptor "
                   "stays open there is no IN_CLOSE_WRITE either: the cached config stays in use until the "
                   "once-a-second stat revalidation (see the test below)")
def test_config_rewritten_with_native_aio(live: Governor, ws: Path) -> None:
    intents = ws / ".orchestration" / "active_intents.yaml"
    fd = os.open(intents, os.O_RDWR)  # opening raises no event in the watched mask
    try:
        _aio_pwrite(fd, _padded(_intents("docs/**"), intents.stat().st_size))
        assert_same(live, ws, lambda: write("src/a/b/new.py"))  # live: allowed; fresh: scope-violation
    finally:
        os.close(fd)


@pytest.mark.xfail(strict=True, reason="(documented) writes through a shared mmap raise no event; the mapping keeps "
                   "the open file alive, so IN_CLOSE_WRITE comes only at munmap; the once-a-second stat "
                   "revalidation catches it (see the test below)")
def test_config_rewritten_through_a_shared_mmap(live: Governor, ws: Path) -> None:
    intents = ws / ".orchestration" / "active_intents.yaml"
    size = intents.stat().st_size
    with open(intents, "r+b") as fh:
        mapping = mmap.mmap(fh.fileno(), size)  # holds its own reference to the open file
    try:
        mapping[:] = _padded(_intents("docs/**"), size)
        mapping.flush()
        assert_same(live, ws, lambda: write("src/a/b/new.py"))  # live: allowed; fresh: scope-violation
    finally:
        mapping.close()


@pytest.mark.parametrize("how", ["aio", "mmap"])
def test_invisible_config_writes_are_caught_by_the_periodic_revalidation(
        live: Governor, ws: Path, how: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from orchestrator import livecache

    monkeypatch.setattr(livecache, "REVALIDATE_SECONDS", 0.05)
    intents = ws / ".orchestration" / "active_intents.yaml"
    size = intents.stat().st_size
    time.sleep(0.02)  # past the coarse clock tick of the last write, so the new mtime differs
    fd = os.open(intents, os.O_RDWR)
    mapping = None
    try:
        if how == "aio":
            _aio_pwrite(fd, _padded(_intents("docs/**"), size))
        else:
            mapping = mmap.mmap(fd, size)
            mapping[:] = _padded(_intents("docs/**"), size)
            mapping.flush()
        time.sleep(0.1)
        assert_same(live, ws, lambda: write("src/a/b/new.py"))
    finally:
        if mapping is not None:
            mapping.close()
        os.close(fd)


# ---------------------------------------------------------------------------------------------------- concurrency
def test_threads_sharing_a_governor_see_every_change_made_before_their_call(live: Governor, ws: Path) -> None:
    """The daemon evaluates many sessions at once with one Governor: a thread whose call starts after a change (an
    intent's scope edited in place, same size, within one clock tick of the last edit) must see it, however the other
    threads' loads, misses and refreshes interleave — as a fresh Governor does."""
    path = ws / ".orchestration" / "active_intents.yaml"
    # two scopes of equal length: the file's size never changes, only its content
    scopes = ("src/**", "zzz/**")
    assert len(_intents(scopes[0])) == len(_intents(scopes[1]))
    path.write_text(_intents(scopes[0]))
    warm(live, "src/a/b/new.py")
    stop = threading.Event()
    errors: list[BaseException] = []

    def hammer() -> None:  # other sessions' calls, racing the loads after each change
        try:
            while not stop.is_set():
                live.pre(write("src/a/b/new.py"))
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=hammer) for _ in range(4)]
    for t in threads:
        t.start()
    try:
        for round_ in range(40):
            scope = scopes[round_ % 2]
            with open(path, "r+b") as fh:  # in place: same inode, same size
                fh.write(_intents(scope).encode())
            expected = "allow" if scope == "src/**" else "deny"
            results: list[str] = []
            checkers = [threading.Thread(target=lambda: results.append(live.pre(write("src/a/b/new.py")).decision))
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
    assert_same(live, ws, lambda: write("src/a/b/new.py"), fresh_denies=False)
