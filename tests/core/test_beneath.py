"""orchestrator/core/beneath.py: writes and removals beneath a root never follow a link, at any component. Real files,
real links; every case checks the link's target is untouched."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from orchestrator.core import beneath


@pytest.fixture
def tree(tmp_path: Path) -> tuple[Path, Path]:
    root = tmp_path / "root"
    (root / "src" / "pkg").mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret").write_text("the person's file\n")
    return root, outside


def test_replace_puts_a_regular_file_in_place_of_a_link_never_through_it(tree) -> None:
    root, outside = tree
    os.symlink(outside / "secret", root / "src" / "x.py")
    beneath.replace(root, "src/x.py", b"restored\n")
    assert not (root / "src" / "x.py").is_symlink() and (root / "src" / "x.py").read_text() == "restored\n"
    assert (outside / "secret").read_text() == "the person's file\n"


@pytest.mark.parametrize("op", ["replace", "unlink", "remove_dir", "lstat", "read"])
def test_a_link_above_the_last_component_is_refused(tree, op: str) -> None:
    root, outside = tree
    (outside / "x.py").write_text("outside\n")
    (outside / "d").mkdir()
    os.symlink(outside, root / "src" / "lnk")
    args = (b"data",) if op == "replace" else ()
    rel = "src/lnk/d" if op == "remove_dir" else "src/lnk/x.py"
    with pytest.raises(beneath.Refused) as info:
        getattr(beneath, op)(root, rel, *args)
    assert info.value.reason == "link"
    assert (outside / "x.py").read_text() == "outside\n" and (outside / "d").is_dir()


def test_unlink_removes_the_link_itself(tree) -> None:
    root, outside = tree
    os.symlink(outside / "secret", root / "src" / "x.py")
    assert beneath.unlink(root, "src/x.py") is True
    assert not os.path.lexists(root / "src" / "x.py") and (outside / "secret").exists()
    assert beneath.unlink(root, "src/x.py") is False


def test_read_refuses_a_link_and_reads_a_file(tree) -> None:
    root, outside = tree
    (root / "src" / "a.py").write_text("a\n")
    os.symlink(outside / "secret", root / "src" / "b.py")
    assert beneath.read(root, "src/a.py") == b"a\n"
    assert beneath.read(root, "src/none.py") is None
    with pytest.raises(beneath.Refused):
        beneath.read(root, "src/b.py")


@pytest.mark.parametrize("rel", ["", "/etc/passwd", "../outside/secret", "src/../../outside/secret", "src//x",
                                 "./src/x"])
def test_paths_that_name_no_place_beneath_the_root_are_refused(tree, rel: str) -> None:
    root, outside = tree
    with pytest.raises(beneath.Refused) as info:
        beneath.replace(root, rel, b"x")
    assert info.value.reason == "outside"
    assert (outside / "secret").read_text() == "the person's file\n"


def test_a_directory_in_the_way_is_not_replaced(tree) -> None:
    root, _ = tree
    with pytest.raises(beneath.Refused):
        beneath.replace(root, "src/pkg", b"x")
    assert (root / "src" / "pkg").is_dir()


def test_remove_dir_removes_only_an_empty_real_directory(tree) -> None:
    root, outside = tree
    os.symlink(outside, root / "src" / "lnk")
    with pytest.raises(NotADirectoryError):
        beneath.remove_dir(root, "src/lnk")
    assert (root / "src" / "lnk").is_symlink()
    assert beneath.remove_dir(root, "src/pkg") is True and not (root / "src" / "pkg").exists()
