from __future__ import annotations

from pathlib import Path

import pytest

from orchestrator import workspace
from orchestrator.errors import WorkspaceError


def test_init_creates_layout_and_is_idempotent(tmp_path: Path) -> None:
    created = workspace.init(tmp_path)
    names = {p.relative_to(tmp_path).as_posix() for p in created}
    assert {".orchestration/active_intents.yaml", ".orchestration/.intentignore", ".orchestration/policy.yaml",
            ".orchestration/agent_trace.jsonl", ".orchestration/.gitignore", ".gitattributes"} <= names
    assert (tmp_path / ".orchestration" / "run").is_dir()
    assert "run/" in (tmp_path / ".orchestration" / ".gitignore").read_text().splitlines()
    assert workspace.GITATTRIBUTES_LINE in (tmp_path / ".gitattributes").read_text()
    assert workspace.init(tmp_path) == []


def test_init_never_overwrites_user_files(tmp_path: Path) -> None:
    (tmp_path / ".orchestration").mkdir()
    mine = tmp_path / ".orchestration" / "active_intents.yaml"
    mine.write_text("active_intents: []\n# mine\n")
    (tmp_path / ".gitattributes").write_text("*.png binary")  # no trailing newline
    workspace.init(tmp_path)
    assert mine.read_text() == "active_intents: []\n# mine\n"
    lines = (tmp_path / ".gitattributes").read_text().splitlines()
    assert lines == ["*.png binary", workspace.GITATTRIBUTES_LINE]


def test_find_root_walks_up_and_fails_clearly(tmp_path: Path) -> None:
    governed, plain = tmp_path / "governed", tmp_path / "plain"
    plain.mkdir()
    governed.mkdir()
    workspace.init(governed)
    deep = governed / "a" / "b"
    deep.mkdir(parents=True)
    assert workspace.find_root(deep) == governed.resolve()
    with pytest.raises(WorkspaceError) as exc:
        workspace.find_root(plain)
    assert "orch init" in (exc.value.hint or "")


def test_init_refuses_missing_directory(tmp_path: Path) -> None:
    with pytest.raises(WorkspaceError):
        workspace.init(tmp_path / "nope")
