from __future__ import annotations

from pathlib import Path

import pytest

from orchestrator.config import workspace
from orchestrator.core.errors import WorkspaceError


def test_init_creates_layout_and_is_idempotent(tmp_path: Path) -> None:
    created = workspace.init(tmp_path)
    names = {p.relative_to(tmp_path).as_posix() for p in created}
    assert {".orchestration/active_intents.yaml", ".orchestration/.intentignore", ".orchestration/policy.yaml",
            ".orchestration/agent_trace.jsonl", ".orchestration/.gitignore", ".gitattributes",
            ".orchestration/trusted_keys"} <= names
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


def test_one_finder_the_hook_client_walks_like_find_root_of(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """hookclient._find_root (stdlib only, for the -S client) finds what workspace.find_root_of finds."""
    from orchestrator import hookclient

    governed = tmp_path / "repo"
    (governed / ".orchestration").mkdir(parents=True)
    deep = governed / "a" / "b"
    deep.mkdir(parents=True)
    plain = tmp_path / "plain"
    plain.mkdir()
    link = tmp_path / "link"
    link.symlink_to(deep)
    for name in hookclient.PROJECT_VARS:
        monkeypatch.delenv(name, raising=False)
    for cwd, env in ((deep, None), (plain, None), (link, None), (plain, str(deep)), (deep, str(plain))):
        monkeypatch.chdir(cwd)
        if env is None:
            monkeypatch.delenv("ORCH_ROOT", raising=False)
        else:
            monkeypatch.setenv("ORCH_ROOT", env)
        expected = workspace.find_root_of((env, str(cwd)))
        got = hookclient._find_root()
        assert (Path(got) if got else None) == expected, (cwd, env)
    assert workspace.find_root_of((None, "", str(plain))) is None
    assert workspace.find_root_of((str(plain), str(deep))) == governed.resolve()
