"""post/revert.py: governance files a shell command created inside the scope are removed after it."""

from __future__ import annotations

from pathlib import Path

from orchestrator.post import revert


def test_only_created_governance_paths_are_selected() -> None:
    changes = [{"path": "src/.orchestration/policy.yaml", "op": "create", "governance": True},
               {"path": "src/.orchestration/old.yaml", "op": "modify", "governance": True},  # reported, kept
               {"path": "src/app.py", "op": "create"},
               {"path": "src/notes.md", "op": "create", "governance": True}]  # not a governance path: kept
    assert revert.created_governance(changes) == ["src/.orchestration/policy.yaml"]


def test_remove_takes_the_file_and_the_emptied_governance_dirs(tmp_path: Path) -> None:
    nested = tmp_path / "src" / ".orchestration" / "run"
    nested.mkdir(parents=True)
    (nested / "x.json").write_text("{}")
    (tmp_path / "src" / "app.py").write_text("x = 1\n")
    assert revert.remove(str(tmp_path), ["src/.orchestration/run/x.json"]) == ["src/.orchestration/run/x.json"]
    assert not (tmp_path / "src" / ".orchestration").exists()
    assert (tmp_path / "src" / "app.py").read_text() == "x = 1\n"  # the scope directory itself stays


def test_a_governance_dir_that_still_holds_files_stays(tmp_path: Path) -> None:
    gov = tmp_path / "src" / ".orchestration"
    gov.mkdir(parents=True)
    (gov / "a.yaml").write_text("a")
    (gov / "b.yaml").write_text("b")
    assert revert.remove(str(tmp_path), ["src/.orchestration/a.yaml"]) == ["src/.orchestration/a.yaml"]
    assert (gov / "b.yaml").exists()


def test_a_link_is_removed_never_its_target(tmp_path: Path) -> None:
    target = tmp_path / "README.md"
    target.write_text("keep\n")
    gov = tmp_path / "src" / ".orchestration"
    gov.mkdir(parents=True)
    (gov / "policy.yaml").symlink_to(target)
    assert revert.remove(str(tmp_path), ["src/.orchestration/policy.yaml"]) == ["src/.orchestration/policy.yaml"]
    assert target.read_text() == "keep\n"
    assert not gov.exists()


def test_a_directory_or_a_missing_path_is_left_and_not_listed(tmp_path: Path) -> None:
    (tmp_path / "src" / ".orchestration" / "d").mkdir(parents=True)
    assert revert.remove(str(tmp_path), ["src/.orchestration/d", "src/.orchestration/gone.yaml"]) == []
    assert (tmp_path / "src" / ".orchestration" / "d").is_dir()


def test_nested_host_configuration_is_selected_and_removed_with_its_emptied_dirs(tmp_path: Path) -> None:
    """A host started from src/ would load these (orchestrator.core.governance's nested patterns)."""
    created = ["src/.claude/settings.json", "src/.mcp.json", "src/.codex/config.toml", "src/.github/hooks/h.json",
               "src/opencode.json", "src/.opencode/plugin/p.js"]
    for rel in created:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("{}")
    (tmp_path / "src" / ".github" / "workflows").mkdir()
    changes = [{"path": p, "op": "create", "governance": True} for p in created]
    changes.append({"path": "src/.claude/settings.local.json", "op": "modify", "governance": True})  # reported
    assert revert.created_governance(changes) == created
    assert revert.remove(str(tmp_path), created) == created
    for gone in ("src/.claude", "src/.mcp.json", "src/.codex", "src/.github/hooks", "src/opencode.json",
                 "src/.opencode"):
        assert not (tmp_path / gone).exists(), gone
    assert (tmp_path / "src" / ".github" / "workflows").is_dir()  # .github itself holds more than host config


def test_a_pre_existing_nested_config_dir_keeps_its_other_files(tmp_path: Path) -> None:
    claude = tmp_path / "src" / ".claude"
    claude.mkdir(parents=True)
    (claude / "agents.md").write_text("keep")
    (claude / "settings.json").write_text("{}")
    assert revert.remove(str(tmp_path), ["src/.claude/settings.json"]) == ["src/.claude/settings.json"]
    assert (claude / "agents.md").read_text() == "keep"


def test_a_directory_swapped_for_a_link_above_the_file_is_not_followed(tmp_path: Path) -> None:
    """Issue 28: a command still running swaps ``src/a`` for a link to a directory of the person's after creating
    ``src/a/.claude/settings.json``; the removal must not delete the same name beneath the link's target."""
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    (home / ".claude" / "settings.json").write_text("the person's own\n")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a").symlink_to(home)
    assert revert.remove(str(tmp_path), ["src/a/.claude/settings.json"]) == []
    assert (home / ".claude" / "settings.json").read_text() == "the person's own\n"
