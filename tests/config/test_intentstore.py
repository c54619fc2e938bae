"""The intent lifecycle on disk: validated, formatting kept, atomic, locked, no lost concurrent edit, no id twice."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from orchestrator.config.intentstore import ARCHIVE_NAME, Docs, IntentStore, allocate_id, check_archive, prefix_of
from orchestrator.core.errors import ConfigError, UsageError
from orchestrator.config.workspace import Workspace
from tests.conftest import make_workspace

ROOT = Path(__file__).resolve().parents[2]
HAND = """\
# our intents (keep this comment)
active_intents:
  - id: "INT-001"
    name: "Build the API"   # the main one
    status: "IN_PROGRESS"
    owned_scope: ["src/**", "tests/*.py"]
  - id: "INT-002"
    name: "Docs"
    status: "PENDING"
    owned_scope: ["docs/**"]
"""


@pytest.fixture
def store(tmp_path: Path) -> IntentStore:
    return IntentStore(Workspace.at(make_workspace(tmp_path / "repo", HAND)), clock=lambda: "2026-01-02T03:04:05Z")


def active(store: IntentStore) -> list[dict]:
    return yaml.safe_load(store.active_path.read_text())["active_intents"]


def test_create_allocates_the_next_id_and_keeps_the_file_as_written(store: IntentStore) -> None:
    intent = store.create({"name": "Login", "owned_scope": ["src/auth/**"], "owner": "ana"})
    assert intent["id"] == "INT-003" and intent["status"] == "IN_PROGRESS"
    text = store.active_path.read_text()
    assert text.startswith(HAND)  # every byte of what was there, the comments included
    assert active(store)[-1] == {"id": "INT-003", "name": "Login", "status": "IN_PROGRESS", "owner": "ana",
                                 "owned_scope": ["src/auth/**"], "created_at": "2026-01-02T03:04:05Z"}


def test_edit_finish_and_archive(store: IntentStore) -> None:
    store.edit("INT-002", {"owned_scope": ["docs/**", "README.md"], "description": "user guide"})
    store.finish("INT-002")
    assert active(store)[1]["status"] == "COMPLETED" and "# the main one" in store.active_path.read_text()
    assert store.archive(["INT-002"]) == ["INT-002"]
    assert [i["id"] for i in active(store)] == ["INT-001"]
    archived = yaml.safe_load(store.archive_path.read_text())["archived_intents"]
    assert archived[0]["id"] == "INT-002" and archived[0]["archived_at"] == "2026-01-02T03:04:05Z"
    assert archived[0]["owned_scope"] == ["docs/**", "README.md"]
    # an archived id is never handed out again
    assert store.create({"name": "next", "owned_scope": ["x/**"]})["id"] == "INT-003"
    with pytest.raises(UsageError, match="already used"):
        store.create({"name": "again", "owned_scope": ["x/**"]}, intent_id="INT-002")


def test_only_a_finished_intent_is_archived(store: IntentStore) -> None:
    with pytest.raises(UsageError, match="only a finished intent is archived"):
        store.archive(["INT-001"])
    assert len(active(store)) == 2 and not store.archive_path.exists()


def test_bad_fields_are_refused_naming_the_field_and_nothing_is_written(store: IntentStore) -> None:
    before = store.active_path.read_bytes()
    with pytest.raises(ConfigError, match=r"owned_scope.*'\.\./x'"):
        store.create({"name": "bad", "owned_scope": ["../x"]})
    with pytest.raises(ConfigError, match="unknown status 'DONE_ISH'"):
        store.edit("INT-001", {"status": "done-ish"})
    with pytest.raises(UsageError, match="cannot edit id"):
        store.edit("INT-001", {"id": "X"})
    assert store.active_path.read_bytes() == before


def test_a_broken_file_is_never_edited(store: IntentStore) -> None:
    store.active_path.write_text(HAND.replace('status: "PENDING"', 'status: "WAT"'))
    with pytest.raises(ConfigError) as info:
        store.create({"name": "x", "owned_scope": ["x/**"]})
    assert info.value.line == 7 and "unknown status" in info.value.message


def test_a_concurrent_edit_by_an_editor_without_the_lock_is_kept(store: IntentStore) -> None:
    """A person saves the file in an editor while a change is being made: the change is made again on their
    text, so both land."""
    rounds = []

    def change(docs: Docs) -> tuple[Docs, None]:
        rounds.append(docs.active.text)
        if len(rounds) == 1:  # the editor saves between our read and our write
            store.active_path.write_text(docs.active.text.replace('name: "Docs"', 'name: "Docs and guides"'))
        return Docs(docs.active.update("INT-001", {"status": "BLOCKED"}), docs.archive), None

    store.transact(change)
    assert len(rounds) == 2
    names = {i["id"]: (i["name"], i["status"]) for i in active(store)}
    assert names == {"INT-001": ("Build the API", "BLOCKED"), "INT-002": ("Docs and guides", "PENDING")}


def test_parallel_processes_never_share_an_id_nor_lose_an_intent(store: IntentStore) -> None:
    script = ("import sys; from orchestrator.config.intentstore import IntentStore; "
              "from orchestrator.config.workspace import Workspace; "
              "print(IntentStore(Workspace.at(sys.argv[1])).create({'name': sys.argv[2], "
              "'owned_scope': ['x/**']})['id'])")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs = [subprocess.Popen([sys.executable, "-c", script, str(store.ws.root), f"task {n}"], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for n in range(8)]
    ids = []
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
        ids.append(out.strip())
    assert len(set(ids)) == 8
    written = active(store)
    assert sorted(i["id"] for i in written[2:]) == sorted(ids)
    assert sorted(i["name"] for i in written[2:]) == sorted(f"task {n}" for n in range(8))


def test_crlf_and_the_file_mode_survive(store: IntentStore) -> None:
    store.active_path.write_bytes(HAND.replace("\n", "\r\n").encode())
    os.chmod(store.active_path, 0o600)
    store.edit("INT-001", {"owner": "bo"})
    raw = store.active_path.read_bytes()
    assert b"\r\n" in raw and b"\n" not in raw.replace(b"\r\n", b"")
    assert os.stat(store.active_path).st_mode & 0o777 == 0o600


def test_an_interrupted_archive_is_completed_and_reported_until_then(store: IntentStore) -> None:
    store.finish("INT-002")
    # as if a crash hit between writing the archive and the active file: the intent is in both
    store.archive_path.write_text("archived_intents:\n  - id: INT-002\n    name: Docs\n    status: COMPLETED\n")
    with pytest.raises(ConfigError, match="both active and archived"):
        check_archive(store.ws)
    assert store.archive(["INT-002"]) == ["INT-002"]
    check_archive(store.ws)
    assert [i["id"] for i in active(store)] == ["INT-001"]
    assert (store.ws.orch_dir / ARCHIVE_NAME).exists()


@pytest.mark.parametrize(("ids", "want"), [
    ([], "INT-001"), (["INT-001", "INT-007"], "INT-008"), (["ORCH-2", "ORCH-31", "X"], "ORCH-32"),
    (["INT-1", "INT-002"], "INT-003"), (["A-9", "A-10", "B-1"], "A-11"),
])
def test_allocate_id(ids: list[str], want: str) -> None:
    assert allocate_id(ids, prefix_of(ids)) == want


def test_two_worktrees_never_allocate_the_same_new_id(tmp_path: Path) -> None:
    """Each worktree has its own checkout of the file; a new id is the next after every worktree's, so the
    branches merge without two different INT-004."""
    from tests.approval_support import make_worktrees

    main, linked = make_worktrees(tmp_path)
    assert IntentStore(main).create({"name": "on main", "owned_scope": ["a/**"]})["id"] == "INT-4"
    assert IntentStore(linked).create({"name": "on the branch", "owned_scope": ["b/**"]})["id"] == "INT-5"
    assert IntentStore(main).create({"name": "main again", "owned_scope": ["c/**"]})["id"] == "INT-6"
    assert "INT-4" not in {i["id"] for i in yaml.safe_load(linked.intents_file.read_text())["active_intents"]}


def test_a_dry_run_validates_everything_and_writes_nothing(store: IntentStore) -> None:
    from orchestrator.config.intentstore import plain

    before = store.active_path.read_text()
    assert store.create({"name": "Login", "owned_scope": ["src/auth/**"]}, write=False)["id"] == "INT-003"
    assert store.edit("INT-001", {"name": "API"}, write=False)["name"] == "API"
    store.finish("INT-002", "CANCELLED")
    changed = store.active_path.read_text()
    assert store.archive(["INT-002"], write=False) == ["INT-002"]
    with pytest.raises(ConfigError, match="invalid glob"):
        store.create({"name": "x", "owned_scope": ["src/["]}, write=False)
    assert store.active_path.read_text() == changed != before
    assert not (store.active_path.parent / ARCHIVE_NAME).exists()
    # expect: the change is made only to the intent as it was seen
    seen = plain(next(i for i in store.read().active.intents() if i["id"] == "INT-001"))
    store.edit("INT-001", {"owner": "ana"})
    with pytest.raises(UsageError, match="changed since"):
        store.edit("INT-001", {"name": "API"}, expect=seen)
    with pytest.raises(UsageError, match="changed since"):
        store.archive(["INT-002"], expect={"INT-002": seen})
    assert active(store)[0]["name"] == "Build the API"
