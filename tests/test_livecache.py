"""The live caches of a long-lived Governor: every change made before a call is seen by that call.

Real files, real symlinks, real processes; each test first proves the cache is in use (the Governor has a live
cache and the directories are trusted), then changes the world the way an agent or a person would, then checks
that the very next call sees it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from orchestrator import livecache
from orchestrator.inotify import IN_Q_OVERFLOW
from orchestrator.pipeline import Governor
from orchestrator.tools import to_call

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux-only")

ROOT = Path(__file__).resolve().parents[1]


def write(path: str, session: str = "s1") -> object:
    return to_call("Write", {"file_path": path, "content": "x = 1\n"}, session_id=session)


@pytest.fixture
def live(ws: Path) -> Governor:
    (ws / "src" / "a" / "b").mkdir(parents=True)
    gov = Governor(ws, approval_channel="deny", live=True)
    gov.select_intent("INT-001", "s1")
    assert gov.pre(write("src/a/b/new.py")).allowed
    assert gov._live is not None, "the live cache must be in use for these tests to mean anything"
    assert {"src", "src/a", "src/a/b"} <= gov._live.dirs
    return gov


def test_second_call_uses_the_caches_without_touching_config(live: Governor, ws: Path) -> None:
    assert live.pre(write("src/a/b/new.py")).allowed
    cached = dict(live._live.config)
    assert {"policy", "intents", "ignore"} <= set(cached)
    assert live.pre(write("src/a/b/other.py")).allowed
    assert all(live._live.config[k] is v for k, v in cached.items())  # same objects: nothing was reloaded


def test_auto_mode_starts_on_the_second_call_only(ws: Path) -> None:
    gov = Governor(ws, approval_channel="deny")
    gov.select_intent("INT-001", "s1")
    gov.pre(write("src/x.py"))
    assert gov._live is None  # a one-call process (a cold hook) never pays for inotify
    gov.pre(write("src/x.py"))
    assert gov._live is not None
    assert Governor(ws, live=False).pre(write("src/x.py")) is not None and Governor(ws, live=False)._live is None


@pytest.mark.parametrize("target", ["governance", "outside"])
def test_symlink_swapped_in_for_a_trusted_directory_is_seen(live: Governor, ws: Path, tmp_path: Path,
                                                            target: str) -> None:
    shutil.rmtree(ws / "src" / "a" / "b")
    if target == "governance":
        os.symlink(ws / ".orchestration", ws / "src" / "a" / "b")
        v = live.pre(write("src/a/b/policy.yaml"))
        assert v.error["type"] == "governance-file" and v.error["path"] == ".orchestration/policy.yaml"
    else:
        (tmp_path / "elsewhere").mkdir()
        os.symlink(tmp_path / "elsewhere", ws / "src" / "a" / "b")
        assert live.pre(write("src/a/b/new.py")).error["type"] == "path-outside-workspace"


def test_ancestor_renamed_and_replaced_by_a_symlink_is_seen(live: Governor, ws: Path) -> None:
    os.rename(ws / "src", ws / "src_old")
    os.symlink(ws / ".orchestration", ws / "src")
    v = live.pre(write("src/a/b/new.py"))
    assert v.error["type"] == "governance-file"
    assert "src" not in live._live.dirs and "src/a/b" not in live._live.dirs


def test_final_component_turned_into_a_symlink_is_seen(live: Governor, ws: Path) -> None:
    os.symlink(ws / ".orchestration" / "active_intents.yaml", ws / "src" / "a" / "b" / "new.py")
    v = live.pre(write("src/a/b/new.py"))
    assert v.error["type"] == "governance-file" and v.error["path"] == ".orchestration/active_intents.yaml"


def test_directory_swapped_by_rename_exchange_of_a_sibling_is_seen(live: Governor, ws: Path) -> None:
    # mv src/a/b src/a/c; ln -s ../../docs src/a/b  — the trusted name now leads out of the intent's scope
    os.rename(ws / "src" / "a" / "b", ws / "src" / "a" / "c")
    os.symlink("../../docs", ws / "src" / "a" / "b")
    v = live.pre(write("src/a/b/new.py"))
    assert v.error["type"] == "scope-violation" and v.error["path"] == "docs/new.py"


def _intents(scope: str) -> str:
    return textwrap.dedent(f"""\
        active_intents:
          - id: INT-001
            name: Build the API
            status: IN_PROGRESS
            owned_scope: ["{scope}"]
        """)


def test_in_place_edit_with_same_size_and_restored_mtime_is_seen(live: Governor, ws: Path) -> None:
    # the stat-based cache keys on (mtime, size) and would miss this edit; inotify does not
    path = ws / ".orchestration" / "active_intents.yaml"
    path.write_text(_intents("src/**"))
    assert live.pre(write("src/a/b/new.py")).allowed
    before = os.stat(path)
    with open(path, "r+", encoding="utf-8") as fh:  # same length: "src/**" -> "doc/**"
        fh.write(_intents("doc/**"))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert os.stat(path).st_size == before.st_size and os.stat(path).st_mtime_ns == before.st_mtime_ns
    assert live.pre(write("src/a/b/new.py")).error["type"] == "scope-violation"


def test_atomic_replace_of_intents_is_seen(live: Governor, ws: Path) -> None:
    tmp = ws / ".orchestration" / "intents.tmp"
    tmp.write_text(_intents("docs/**"))
    os.replace(tmp, ws / ".orchestration" / "active_intents.yaml")
    assert live.pre(write("src/a/b/new.py")).error["type"] == "scope-violation"


def test_edit_through_a_hard_link_is_seen(live: Governor, ws: Path, tmp_path: Path) -> None:
    link = ws / "hardlink-to-intents.yaml"  # same filesystem; the watched directory never sees this name
    os.link(ws / ".orchestration" / "active_intents.yaml", link)
    assert live.pre(write("src/a/b/new.py")).allowed
    with open(link, "w", encoding="utf-8") as fh:
        fh.write(_intents("docs/**"))
    assert live.pre(write("src/a/b/new.py")).error["type"] == "scope-violation"


def test_intentignore_created_later_is_seen(live: Governor, ws: Path) -> None:
    (ws / ".orchestration" / ".intentignore").write_text("src/a/b/\n")
    v = live.pre(write("src/a/b/new.py"))
    assert v.error["type"] == "protected-path"


def test_policy_change_is_seen(live: Governor, ws: Path) -> None:
    v = live.pre(to_call("Delete", {"file_path": "src/app.py"}, session_id="s1"))
    assert v.error["type"] == "approval-denied"
    (ws / ".orchestration" / "policy.yaml").write_text("delete_is_destructive: false\n")
    assert live.pre(to_call("Delete", {"file_path": "src/app.py"}, session_id="s1")).allowed
    (ws / ".orchestration" / "policy.yaml").unlink()
    assert live.pre(to_call("Delete", {"file_path": "src/app.py"}, session_id="s1")).error["type"] == "approval-denied"


def test_broken_config_written_later_denies_at_once(live: Governor, ws: Path) -> None:
    (ws / ".orchestration" / "active_intents.yaml").write_text("active_intents: [\n")
    assert live.pre(write("src/a/b/new.py")).error["type"] == "config-error"


def test_session_changed_by_another_process_is_seen(live: Governor, ws: Path) -> None:
    assert live.pre(write("src/a/b/new.py")).allowed
    # another process (another hook, the MCP server) selects a different intent for this session
    subprocess.run([sys.executable, "-m", "orchestrator", "intent", "select", "INT-003", "--session", "s1",
                    "--workspace", str(ws)], check=True, cwd=ROOT, capture_output=True,
                   env={**os.environ, "PYTHONPATH": str(ROOT)})
    v = live.pre(write("src/a/b/new.py"))
    assert v.error["type"] == "scope-violation" and v.error["intent"] == "INT-003"


def test_read_stamp_written_by_another_governor_is_seen(live: Governor, ws: Path) -> None:
    target = ws / "src" / "app.py"
    assert live.pre(to_call("Edit", {"file_path": "src/app.py"}, session_id="s1")).allowed
    other = Governor(ws, live=False)  # a separate post-hook process, say
    read = to_call("Read", {"file_path": "src/app.py"}, session_id="s1")
    other.pre(read)
    other.post(read)
    target.write_text("changed by someone else\n")
    assert live.pre(to_call("Edit", {"file_path": "src/app.py"}, session_id="s1")).error["type"] == "stale-file"


def test_queue_overflow_discards_everything_and_starts_again(live: Governor, ws: Path) -> None:
    first = live._live
    limit = int(Path("/proc/sys/fs/inotify/max_queued_events").read_text())
    if limit > 100_000:
        pytest.skip(f"max_queued_events is {limit}: too many files to create")
    many = ws / "src" / "a" / "b"
    for i in range(limit + 10):  # entry events in a watched directory, more than the queue holds
        (many / f"f{i}").touch()
    os.symlink(ws / ".orchestration", ws / "src" / "a" / "b" / "sneaky")
    assert live.pre(write("src/a/b/sneaky/policy.yaml")).error["type"] == "governance-file"
    assert first.dead and live._live is not first and live._live is not None


def test_overflow_event_kills_the_cache(live: Governor) -> None:
    cache = live._live
    cache._apply([(-1, IN_Q_OVERFLOW, "")])
    assert cache.dead and not cache.dirs and not cache.config
    assert live.pre(write("src/a/b/new.py")).allowed
    assert live._live is not cache


def test_forked_child_does_not_steal_the_parents_events(live: Governor, ws: Path) -> None:
    go_r, go_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # child: wait until the parent changed the intents, then make a call of its own
        try:
            os.read(go_r, 1)
            live.pre(write("src/a/b/new.py"))
        finally:
            os._exit(0)
    (ws / ".orchestration" / "active_intents.yaml").write_text(_intents("docs/**"))
    os.write(go_w, b"x")
    os.waitpid(pid, 0)
    assert live.pre(write("src/a/b/new.py")).error["type"] == "scope-violation"


def test_symlinked_orchestration_dir_is_not_cached_but_still_fresh(tmp_path: Path) -> None:
    from tests.conftest import make_workspace

    real = make_workspace(tmp_path / "real")
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    os.symlink(real / ".orchestration", ws / ".orchestration")
    gov = Governor(ws, approval_channel="deny", live=True)
    gov.select_intent("INT-001", "s1")
    assert gov.pre(write("src/x.py")).allowed and gov.pre(write("src/x.py")).allowed
    assert gov._live is not None and not gov._live.config  # config is not vouched for through a symlink
    (real / ".orchestration" / "active_intents.yaml").write_text(_intents("docs/**"))
    assert gov.pre(write("src/x.py")).error["type"] == "scope-violation"


def test_many_governors_do_not_exhaust_inotify_instances(ws: Path) -> None:
    # 128 instances per user by default: a dropped Governor must give its instance back
    for _ in range(300):
        gov = Governor(ws, approval_channel="deny", live=True)
        gov.pre(write("src/x.py"))
        assert gov._live is not None
    gov.close()
    assert gov._live is None


def test_workspace_on_a_non_local_filesystem_gets_no_live_cache() -> None:
    assert livecache.filesystem_type("/proc/self") == "proc"
    assert livecache.LiveCache.start("/proc", "/proc/x", "/proc/x/run", "/proc/x/run/sessions", ()) is None
    assert livecache.filesystem_type(str(ROOT)) is not None


def test_lexical_memo_respects_cwd_and_home(live: Governor, ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sub = ws / "docs"
    call = to_call("Write", {"file_path": "x.py"}, session_id="s1", cwd=str(ws / "src"))
    assert live.pre(call).allowed and call.resolved == ["src/x.py"]
    call = to_call("Write", {"file_path": "x.py"}, session_id="s1", cwd=str(sub))
    assert live.pre(call).error["type"] == "scope-violation" and call.resolved == ["docs/x.py"]
    monkeypatch.setenv("HOME", str(ws / "src"))
    assert live.pre(write("~/a/b/new.py")).allowed
    monkeypatch.setenv("HOME", str(ws / "docs"))
    assert live.pre(write("~/a/b/new.py")).error["type"] == "scope-violation"


def test_cwd_through_a_swapped_directory_is_resolved_again(live: Governor, ws: Path) -> None:
    cwd = str(ws / "src" / "a" / "b")
    assert live.pre(to_call("Write", {"file_path": "x.py"}, session_id="s1", cwd=cwd)).allowed
    shutil.rmtree(ws / "src" / "a" / "b")
    os.symlink(ws / "docs", ws / "src" / "a" / "b")
    call = to_call("Write", {"file_path": "x.py"}, session_id="s1", cwd=cwd)
    assert live.pre(call).error["type"] == "scope-violation" and call.resolved == ["docs/x.py"]


def _can_mount(tmp_path: Path) -> bool:
    probe = tmp_path / "probe"
    probe.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "tmpfs", str(probe)], capture_output=True).returncode != 0:
        return False
    subprocess.run(["umount", str(probe)], check=True)
    return True


def test_mount_over_a_trusted_directory_kills_the_cache(live: Governor, ws: Path, tmp_path: Path) -> None:
    # a mount raises no inotify event in the parent: the trusted src/a/b would hide a symlink inside the mount
    if not shutil.which("mount") or not _can_mount(tmp_path):
        pytest.skip("mounting is not permitted here")
    (ws / "src" / "a" / "b" / "c").mkdir()
    assert live.pre(write("src/a/b/c/new.py")).allowed and "src/a/b/c" in live._live.dirs
    first = live._live
    other = tmp_path / "other"
    (other / "b").mkdir(parents=True)
    os.symlink(ws / ".orchestration", other / "b" / "c")
    subprocess.run(["mount", "--bind", str(other / "b"), str(ws / "src" / "a" / "b")], check=True)
    try:
        v = live.pre(write("src/a/b/c/policy.yaml"))
        assert v.error["type"] == "governance-file", v
        assert first.dead
    finally:
        subprocess.run(["umount", str(ws / "src" / "a" / "b")], check=True)
