"""Symlink swap (orchestrator/post/swap.py): a write that landed through a link swapped in after the pre-hook is
reported as out of scope; the allowed path gets its captured content back in place of the link, the path the link
led to is never written (issue 28: its only pre-image is one the agent controls). Real files, real links, the real
Governor. The attacks themselves, through the hook and the sandbox: tests/post/test_swap_attacks.py."""

from __future__ import annotations

import os
from pathlib import Path

from orchestrator.state import leases
from orchestrator.core.models import ToolResult
from orchestrator.engine.pipeline import Governor
from orchestrator.post import swap, trace
from orchestrator.engine.tools import to_call

ORIGINAL = "x = 1\nprint(x)\n"


def _swap_and_write(gov: Governor, ws: Path, *, tool_use_id: str = "toolu_1") -> None:
    gov.select_intent("INT-001", "s1")
    (ws / "README.md").write_text("readme\n")
    assert gov.pre(to_call("Write", {"file_path": "src/app.py", "content": "evil\n"}, session_id="s1",
                           tool_use_id=tool_use_id)).allowed
    # a background process swaps the allowed file for a link; the host's own write follows it
    os.unlink(ws / "src" / "app.py")
    os.symlink("../README.md", ws / "src" / "app.py")
    with open(ws / "src" / "app.py", "w") as fh:
        fh.write("evil\n")
    assert (ws / "README.md").read_text() == "evil\n"


def test_a_write_through_a_swapped_link_is_reported_and_the_link_undone(ws: Path) -> None:
    gov = Governor(ws, persist_preimages=True)
    _swap_and_write(gov, ws)
    post = to_call("Write", {"file_path": "src/app.py", "content": "evil\n"}, session_id="s1", tool_use_id="toolu_1")
    record = gov.post(post, ToolResult(original="readme\n"))  # Claude Code's originalFile: never written anywhere
    assert (ws / "README.md").read_text() == "evil\n"  # left as found: reported, for a person to check
    assert not (ws / "src" / "app.py").is_symlink() and (ws / "src" / "app.py").read_text() == ORIGINAL
    assert record is not None
    ns = record["metadata"]["dev.orchestrator"]
    assert ns["swapped"] == [{"written": "README.md", "allowed": "src/app.py", "restored": False,
                              "allowed_restored": True}]
    assert ns["out_of_scope"] == ["README.md"]
    (entry,) = ns["files"]
    assert entry["path"] == "README.md" and entry["out_of_scope"] and entry["swapped"]
    assert "before" not in entry  # the tool's pre-image of a path a link chose is not taken as the content before
    warning = trace.warning(record)
    assert warning is not None and warning["type"] == "symlink-swap" and warning["restored"] == ["src/app.py"]
    assert warning["paths"] == ["README.md"] and "left as found" in warning["message"]
    assert warning["hint"] and warning["allowed"] == ["src/app.py"]
    # the allowed file's lease went with the post-hook, although the post resolved the path elsewhere
    assert leases.held(gov.workspace.leases_dir) == []


def test_a_directory_swapped_above_the_allowed_file_is_reported_nothing_written(ws: Path) -> None:
    gov = Governor(ws, persist_preimages=True)
    gov.select_intent("INT-001", "s1")
    (ws / "src" / "pkg").mkdir()
    (ws / "src" / "pkg" / "mod.py").write_text("a = 1\n")
    (ws / "docs" / "mod.py").write_text("the docs\n")
    call = to_call("Write", {"file_path": "src/pkg/mod.py"}, session_id="s1", tool_use_id="toolu_d")
    assert gov.pre(call).allowed
    os.rename(ws / "src" / "pkg", ws / "pkg.away")
    os.symlink("../docs", ws / "src" / "pkg")  # src/pkg/mod.py now leads to docs/mod.py
    (ws / "src" / "pkg" / "mod.py").write_text("a = 2\n")
    record = gov.post(to_call("Write", {"file_path": "src/pkg/mod.py"}, session_id="s1", tool_use_id="toolu_d"),
                      ToolResult(original="the docs\n"))
    assert (ws / "docs" / "mod.py").read_text() == "a = 2\n"  # what the host wrote through it, left for a person
    assert (ws / "src" / "pkg").is_symlink() and (ws / "pkg.away" / "mod.py").read_text() == "a = 1\n"
    (entry,) = record["metadata"]["dev.orchestrator"]["swapped"]
    assert entry["written"] == "docs/mod.py" and not entry["allowed_restored"]
    assert entry["allowed_refused"] == swap.REFUSED_LINK
    assert "not put back" in trace.warning(record)["message"]


def test_restore_refuses_a_governance_path_or_one_outside_the_scope(ws: Path) -> None:
    os.symlink("../README.md", ws / "src" / "x.py")
    (ws / "README.md").write_text("readme\n")
    captured = {"src/x.py": {"exists": True, "text": "agent text\n"}}
    assert swap.restore(str(ws), {"README.md": "src/x.py"}, captured, lambda rel: False) == \
        {"src/x.py": swap.REFUSED_SCOPE}
    assert (ws / "src" / "x.py").is_symlink() and (ws / "README.md").read_text() == "readme\n"
    assert swap.restore(str(ws), {"README.md": "src/x.py"}, captured, lambda rel: True) == {"src/x.py": "restored"}
    assert not (ws / "src" / "x.py").is_symlink() and (ws / "README.md").read_text() == "readme\n"


def test_without_a_capture_the_allowed_path_is_left_too(ws: Path) -> None:
    os.symlink("../README.md", ws / "src" / "x.py")
    assert swap.restore(str(ws), {"README.md": "src/x.py"}, {}, lambda rel: True) == \
        {"src/x.py": swap.REFUSED_UNKNOWN}
    assert (ws / "src" / "x.py").is_symlink()


def test_an_unswapped_write_is_recorded_as_before(ws: Path) -> None:
    gov = Governor(ws)
    gov.select_intent("INT-001", "s1")
    call = to_call("Write", {"file_path": "src/app.py"}, session_id="s1")
    assert gov.pre(call).allowed
    (ws / "src" / "app.py").write_text("y = 2\n")
    record = gov.post(call)
    ns = record["metadata"]["dev.orchestrator"]
    assert "swapped" not in ns and "out_of_scope" not in ns and trace.warning(record) is None


def test_a_link_that_was_there_before_the_check_is_no_swap(ws: Path) -> None:
    (ws / "src" / "real.py").write_text("a = 1\n")
    os.symlink("real.py", ws / "src" / "alias.py")
    gov = Governor(ws)
    gov.select_intent("INT-001", "s1")
    call = to_call("Write", {"file_path": "src/alias.py"}, session_id="s1")
    assert gov.pre(call).allowed
    (ws / "src" / "alias.py").write_text("a = 2\n")
    record = gov.post(call)
    assert "swapped" not in record["metadata"]["dev.orchestrator"]
    assert (ws / "src" / "real.py").read_text() == "a = 2\n"
