"""Symlink swap (orchestrator/post/swap.py): a write that landed through a link swapped in after the pre-hook is
reported as out of scope and, where its pre-image is known, undone. Real files, real links, the real Governor."""

from __future__ import annotations

import os
from pathlib import Path

from orchestrator.state import leases
from orchestrator.core.models import ToolResult
from orchestrator.engine.pipeline import Governor
from orchestrator.post import trace
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


def test_a_write_through_a_swapped_link_is_reported_and_undone(ws: Path) -> None:
    gov = Governor(ws, persist_preimages=True)
    _swap_and_write(gov, ws)
    post = to_call("Write", {"file_path": "src/app.py", "content": "evil\n"}, session_id="s1", tool_use_id="toolu_1")
    record = gov.post(post, ToolResult(original="readme\n"))  # Claude Code's originalFile: what it overwrote
    assert (ws / "README.md").read_text() == "readme\n"
    assert not (ws / "src" / "app.py").is_symlink() and (ws / "src" / "app.py").read_text() == ORIGINAL
    assert record is not None
    ns = record["metadata"]["dev.orchestrator"]
    assert ns["swapped"] == [{"written": "README.md", "allowed": "src/app.py", "restored": True,
                              "allowed_restored": True}]
    assert ns["out_of_scope"] == ["README.md"]
    (entry,) = ns["files"]
    assert entry["path"] == "README.md" and entry["out_of_scope"] and entry["swapped"]
    warning = trace.warning(record)
    assert warning is not None and warning["type"] == "symlink-swap" and warning["restored"] == ["README.md",
                                                                                                    "src/app.py"]
    assert warning["hint"] and warning["allowed"] == ["src/app.py"]
    # the allowed file's lease went with the post-hook, although the post resolved the path elsewhere
    assert leases.held(gov.workspace.leases_dir) == []


def test_without_a_known_pre_image_the_swap_is_reported_not_undone(ws: Path) -> None:
    gov = Governor(ws, persist_preimages=True)
    _swap_and_write(gov, ws, tool_use_id="toolu_2")
    record = gov.post(to_call("Write", {"file_path": "src/app.py"}, session_id="s1", tool_use_id="toolu_2"))
    assert (ws / "README.md").read_text() == "evil\n"  # nothing told what README.md held
    assert (ws / "src" / "app.py").read_text() == ORIGINAL  # the link itself is undone (its file was captured)
    ns = record["metadata"]["dev.orchestrator"]
    assert ns["swapped"] == [{"written": "README.md", "allowed": "src/app.py", "restored": False,
                              "allowed_restored": True}]
    assert "could not be restored" in trace.warning(record)["message"]


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
