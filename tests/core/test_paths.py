from __future__ import annotations

import os
from pathlib import Path

import pytest

from orchestrator.core.paths import OutsideWorkspace, PathError, canonical


@pytest.fixture
def root(tmp_path: Path) -> str:
    r = tmp_path / "ws"
    (r / "src" / "pkg").mkdir(parents=True)
    (r / "docs").mkdir()
    return os.path.realpath(r)


def test_relative_absolute_and_cwd(root: str) -> None:
    assert canonical("src/a.py", root) == "src/a.py"
    assert canonical(os.path.join(root, "src/a.py"), root) == "src/a.py"
    assert canonical("a.py", root, os.path.join(root, "src/pkg")) == "src/pkg/a.py"
    assert canonical("../a.py", root, os.path.join(root, "src/pkg")) == "src/a.py"
    assert canonical(".", root) == "."


def test_dotdot_duplicate_slashes_and_dot(root: str) -> None:
    assert canonical("src//pkg/./../a.py", root) == "src/a.py"
    assert canonical("./docs///x.md", root) == "docs/x.md"


@pytest.mark.parametrize("raw", ["../x", "src/../../x", "/etc/passwd", "//etc/passwd"])
def test_outside_workspace_is_refused(root: str, raw: str) -> None:
    with pytest.raises(OutsideWorkspace) as exc:
        canonical(raw, root)
    assert exc.value.to_dict()["type"] == "path-outside-workspace"


def test_symlink_inside_pointing_outside_is_outside(root: str, tmp_path: Path) -> None:
    outside = tmp_path / "secret"
    outside.mkdir()
    os.symlink(outside, os.path.join(root, "src", "link"))
    with pytest.raises(OutsideWorkspace):
        canonical("src/link/new.txt", root)  # not-yet-existing file under a symlinked dir


def test_symlink_to_other_place_in_workspace_resolves_to_target(root: str) -> None:
    os.symlink(os.path.join(root, "docs"), os.path.join(root, "src", "docs-link"))
    assert canonical("src/docs-link/new.md", root) == "docs/new.md"
    os.symlink(os.path.join(root, ".orchestration-like"), os.path.join(root, "src", "dangling"))
    assert canonical("src/dangling", root) == ".orchestration-like"


def test_symlink_dotdot_is_physical(root: str, tmp_path: Path) -> None:
    # src/up -> ../docs ; "src/up/../x" is docs/../x = x at the root physically, not src/x
    os.symlink(os.path.join(root, "docs"), os.path.join(root, "src", "up"))
    assert canonical("src/up/../x", root) == "x"


def test_tilde_expands_to_home(root: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", root)
    assert canonical("~/src/a.py", root) == "src/a.py"
    monkeypatch.setenv("HOME", "/")
    with pytest.raises(OutsideWorkspace):
        canonical("~/x", root)


@pytest.mark.parametrize("raw", ["", "src/a\x00.py", "src/a\n.py", "src/a\r.py"])
def test_malformed_names_are_refused(root: str, raw: str) -> None:
    with pytest.raises(PathError):
        canonical(raw, root)


def test_case_insensitive_mode_folds(root: str) -> None:
    assert canonical("SRC/A.py", root, ignore_case=True) == "src/a.py"
