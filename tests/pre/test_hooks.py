"""Every pre-hook's allow and refuse paths, through the real Governor on real files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from orchestrator.core.models import Verdict
from orchestrator.engine.pipeline import Governor
from orchestrator.engine.tools import to_call


def pre(gov: Governor, tool: str, session: str = "s1", **tool_input: object) -> Verdict:
    return gov.pre(to_call(tool, tool_input, session_id=session))


# --- selfguard ---------------------------------------------------------------------------------
@pytest.mark.parametrize("path", [".orchestration/active_intents.yaml", ".orchestration/agent_trace.jsonl",
                                  ".claude/settings.json", ".claude/settings.local.json", ".mcp.json",
                                  ".codex/hooks.json", ".gemini/settings.json", ".cursor/hooks.json",
                                  "AGENTS.md", ".git/hooks/pre-commit", ".gitattributes",
                                  # a host's configuration at any depth: a host started from src/ would load it
                                  "src/.claude/settings.json", "pkg/a/.claude/settings.local.json", "src/.mcp.json",
                                  "src/.codex/config.toml", "src/.gemini/settings.json", "src/.cursor/hooks.json",
                                  "src/.github/hooks/h.json", "src/.github/mcp.json", "src/.opencode/plugin/p.js",
                                  "src/opencode.json", "src/opencode.jsonc",
                                  # Qwen Code (hooks, MCP, .qwen/.env) and Cline (plugins, hook files)
                                  ".qwen/settings.json", ".qwen/.env", "src/.qwen/settings.json",
                                  ".cline/plugins/x.js", ".clinerules/hooks/PreToolUse", "src/.cline/plugins/x.js"])
def test_selfguard_refuses_governance_files_even_in_scope(ws: Path, path: str) -> None:
    (ws / ".orchestration" / "active_intents.yaml").write_text(
        "active_intents:\n  - id: ALL\n    name: everything\n    status: IN_PROGRESS\n    owned_scope: ['**']\n")
    gov = Governor(ws)
    gov.select_intent("ALL", "s1")
    v = pre(gov, "Write", file_path=path, content="x")
    assert v.decision == "deny" and v.error["type"] == "governance-file" and v.error["hook"] == "selfguard"
    assert v.error["path"] == path


@pytest.mark.parametrize("path, refused", [
    (".venv/lib/python3.11/site-packages/zz.pth", True),  # would run inside every later hook call, unsandboxed
    (".venv/lib/python3.11/site-packages/json/__init__.py", True),
    (".venv/bin/python", True),
    (".venv", True),  # replacing the environment as a whole
    ("src/app.py", False),
    (".venvs/other.txt", False),
])
def test_selfguard_refuses_orchestrators_own_python_environment_in_the_workspace(
        ws: Path, monkeypatch: pytest.MonkeyPatch, path: str, refused: bool) -> None:
    """orchestrator installed in the project's own ``.venv`` (redteam2): with scope ``**`` the Write tool could drop
    a ``.pth`` into the environment the hook runs from. The sandbox never grants it (sandbox/guard.py); the file
    tools are refused too."""
    site = ws / ".venv" / "lib" / "python3.11" / "site-packages"
    site.mkdir(parents=True)
    monkeypatch.setattr("sys.prefix", str(ws / ".venv"))
    monkeypatch.setattr("sys.exec_prefix", str(ws / ".venv"))
    monkeypatch.setattr("sys.path", [*__import__("sys").path, str(site)])
    (ws / ".orchestration" / "active_intents.yaml").write_text(
        "active_intents:\n  - id: ALL\n    name: everything\n    status: IN_PROGRESS\n    owned_scope: ['**']\n")
    gov = Governor(ws)
    gov.select_intent("ALL", "s1")
    v = pre(gov, "Write", file_path=path, content="x")
    if refused:
        assert v.decision == "deny" and v.error["type"] == "governance-file" and v.error["hook"] == "selfguard"
        assert v.error["pattern"] == "orchestrator's own Python: .venv/**"
    else:
        assert v.decision == "allow", v.error


@pytest.mark.parametrize("path", ["src/.claude/agents/a.md", "src/.github/workflows/ci.yml",
                                  "src/.cursor/rules/r.mdc", "src/notes/opencode.md"])
def test_selfguard_leaves_nested_names_that_are_not_host_configuration(ws: Path, path: str) -> None:
    """Only what a host loads as configuration (hooks, MCP servers, settings) is governance at any depth."""
    (ws / ".orchestration" / "active_intents.yaml").write_text(
        "active_intents:\n  - id: ALL\n    name: everything\n    status: IN_PROGRESS\n    owned_scope: ['**']\n")
    gov = Governor(ws)
    gov.select_intent("ALL", "s1")
    v = pre(gov, "Write", file_path=path, content="x")
    assert v.decision == "allow", v.error


@pytest.mark.parametrize("tool", ["Write", "Edit"])
def test_selfguard_refuses_a_hard_link_to_a_governance_file(gov: Governor, ws: Path, tool: str) -> None:
    # `ln .orchestration/active_intents.yaml src/x.yaml` (allowed: it only adds a name in scope), then a write
    gov.select_intent("INT-001", "s1")
    os.link(ws / ".orchestration" / "active_intents.yaml", ws / "src" / "x.yaml")
    v = pre(gov, tool, file_path="src/x.yaml")
    assert v.error["type"] == "hard-linked-file" and v.error["hook"] == "selfguard" and v.error["links"] == 2
    v = pre(gov, "Bash", command="echo 'active_intents: []' > src/x.yaml")
    assert v.error["type"] == "hard-linked-file"
    assert pre(gov, "Bash", command="rm src/x.yaml").error["type"] == "approval-denied"  # not hard-linked-file
    (ws / "src" / "x.yaml").unlink()
    assert pre(gov, tool, file_path="src/x.yaml").allowed  # a fresh file is fine


def test_selfguard_allows_an_ordinary_file_and_a_symlink_inside_scope(gov: Governor, ws: Path) -> None:
    gov.select_intent("INT-001", "s1")
    os.symlink("app.py", ws / "src" / "alias.py")
    assert pre(gov, "Edit", file_path="src/app.py").allowed
    assert pre(gov, "Edit", file_path="src/alias.py").allowed


def test_one_command_writing_through_a_link_it_creates_is_not_allowed(gov: Governor, ws: Path) -> None:
    # the link does not exist when the pipeline checks the paths: it cannot know where the write lands
    gov.select_intent("INT-001", "s1")
    for command in ("ln -s ../.orchestration/active_intents.yaml src/x && echo hi > src/x",
                    "ln .orchestration/policy.yaml src/p.yaml; printf x >> src/p.yaml",
                    "cd src && ln -s ../.orchestration d && echo x > d/policy.yaml"):
        v = pre(gov, "Bash", command=command)
        assert not v.allowed and v.error["type"] == "approval-denied", command
        assert "link" in " ".join(v.error["reasons"])
    assert not (ws / "src" / "x").exists()


def test_selfguard_runs_before_gatekeeper(gov: Governor) -> None:
    v = pre(gov, "Edit", file_path=".orchestration/policy.yaml")
    assert v.error["type"] == "governance-file"


# --- gatekeeper --------------------------------------------------------------------------------
def test_gatekeeper_requires_selected_intent(gov: Governor) -> None:
    v = pre(gov, "Write", file_path="src/new.py", content="x")
    assert v.decision == "deny" and v.error["type"] == "intent-required"
    assert v.error["available"] == ["INT-001", "INT-003"]
    assert "select_active_intent" in v.error["hint"]


def test_gatekeeper_allows_after_selection(gov: Governor) -> None:
    gov.select_intent("INT-001", "s1")
    assert pre(gov, "Write", file_path="src/new.py", content="x").allowed


def test_gatekeeper_reads_and_meta_need_no_intent(gov: Governor) -> None:
    assert pre(gov, "Read", file_path="src/app.py").allowed
    assert pre(gov, "Grep", pattern="x").allowed
    assert pre(gov, "Read", file_path="/etc/hostname").allowed  # reading outside is not a mutation


def test_gatekeeper_intent_no_longer_in_progress(gov: Governor, ws: Path) -> None:
    gov.select_intent("INT-001", "s1")
    f = ws / ".orchestration" / "active_intents.yaml"
    f.write_text(f.read_text().replace("status: IN_PROGRESS", "status: COMPLETED"))
    st = f.stat()
    os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns + 10_000_000))
    v = pre(gov, "Write", file_path="src/new.py", content="x")
    assert v.error["type"] == "intent-required" and v.error["status"] == "COMPLETED"


def test_gatekeeper_declared_intent_mismatch(gov: Governor) -> None:
    gov.select_intent("INT-001", "s1")
    call = to_call("write_file", {"path": "src/a.py"}, session_id="s1", intent_id="INT-003")
    v = gov.pre(call)
    assert v.error["type"] == "intent-mismatch"


def test_gatekeeper_declared_intent_without_selection(gov: Governor) -> None:
    ok = gov.pre(to_call("write_file", {"path": "src/a.py"}, session_id="s9", intent_id="INT-001"))
    assert ok.allowed
    pending = gov.pre(to_call("write_file", {"path": "docs/a.md"}, session_id="s9", intent_id="INT-002"))
    assert pending.error["type"] == "intent-required" and pending.error["status"] == "PENDING"


# --- scope -------------------------------------------------------------------------------------
def test_scope_violation_names_path_intent_and_patterns(gov: Governor) -> None:
    gov.select_intent("INT-001", "s1")
    v = pre(gov, "Write", file_path="docs/x.md", content="x")
    assert v.error == {
        "type": "scope-violation", "hook": "scope",
        "message": "docs/x.md is outside the scope of intent INT-001 (Build the API)",
        "path": "docs/x.md", "intent": "INT-001", "patterns": ["src/**", "tests/*.py"],
        "hint": v.error["hint"],
    }


def test_scope_symlink_inside_scope_pointing_elsewhere(gov: Governor, ws: Path) -> None:
    gov.select_intent("INT-001", "s1")
    os.symlink(ws / "docs", ws / "src" / "docs-link")
    v = pre(gov, "Write", file_path="src/docs-link/x.md", content="x")
    assert v.error["type"] == "scope-violation" and v.error["path"] == "docs/x.md"


def test_scope_symlink_out_of_workspace(gov: Governor, ws: Path, tmp_path: Path) -> None:
    gov.select_intent("INT-001", "s1")
    (tmp_path / "outside").mkdir()
    os.symlink(tmp_path / "outside", ws / "src" / "out")
    v = pre(gov, "Write", file_path=str(ws / "src" / "out" / "x.py"), content="x")
    assert v.error["type"] == "path-outside-workspace" and v.error["hook"] == "paths"


@pytest.mark.parametrize("path", ["../escape.py", "src/../../escape.py", "/tmp/escape.py"])
def test_scope_paths_outside_workspace(gov: Governor, path: str) -> None:
    gov.select_intent("INT-001", "s1")
    assert pre(gov, "Write", file_path=path, content="x").error["type"] == "path-outside-workspace"


def test_scope_dotdot_back_into_scope_is_fine(gov: Governor) -> None:
    gov.select_intent("INT-001", "s1")
    assert pre(gov, "Write", file_path="docs/../src/x.py", content="x").allowed


# --- intentignore ------------------------------------------------------------------------------
def test_intentignore_protects_with_pattern_named(gov: Governor, ws: Path) -> None:
    gov.select_intent("INT-001", "s1")
    (ws / ".orchestration" / ".intentignore").write_text("src/generated/\n*.secret\n!src/ok.secret\n")
    v = pre(gov, "Write", file_path="src/generated/x.py", content="x")
    assert v.error["type"] == "protected-path" and v.error["pattern"] == "src/generated/"
    v = pre(gov, "Edit", file_path="src/a.secret")
    assert v.error["pattern"] == "*.secret"
    assert pre(gov, "Edit", file_path="src/ok.secret").allowed
    assert pre(gov, "Write", file_path="src/fine.py").allowed


# --- approval ----------------------------------------------------------------------------------
def test_approval_channels(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    gov = Governor(ws)
    gov.select_intent("INT-001", "s1")
    call = lambda: to_call("delete_file", {"path": "src/app.py"}, session_id="s1")  # noqa: E731
    v = gov.pre(call())  # policy default: agent-ask
    assert v.decision == "ask" and v.error["type"] == "approval-required" and v.error["reasons"] == ["deletes a file"]
    monkeypatch.setenv("ORCH_APPROVAL_CHANNEL", "deny")
    v = gov.pre(call())
    assert v.decision == "deny" and v.error["type"] == "approval-denied"
    monkeypatch.setenv("ORCH_APPROVAL_CHANNEL", "allow")
    assert gov.pre(call()).allowed
    monkeypatch.setenv("ORCH_APPROVAL_CHANNEL", "bogus")  # fail closed
    assert gov.pre(call()).decision == "deny"


def test_waived_names_what_channel_allow_let_through_unsandboxed(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """approval.waived: on a host that cannot sandbox, what `allow` waived (Qwen Code asks instead)."""
    from orchestrator.pre import approval

    gov = Governor(ws)
    gov.select_intent("INT-001", "s1")
    script, vouched = (to_call("Bash", {"command": c}, session_id="s1") for c in ("python3 x.py", "echo z > src/z"))
    assert gov.pre(vouched).allowed
    monkeypatch.setenv("ORCH_APPROVAL_CHANNEL", "allow")
    assert gov.pre(script).allowed and approval.waived(script, gov.policy)
    assert approval.waived(vouched, gov.policy) == []  # the analyzer vouched for it: nothing waived
    monkeypatch.setenv("ORCH_APPROVAL_CHANNEL", "deny")
    assert approval.waived(script, gov.policy) == []  # another channel decided itself
    monkeypatch.setenv("ORCH_APPROVAL_CHANNEL", "allow")
    (ws / ".orchestration" / "policy.yaml").write_text("approval:\n  allow_commands: ['python3 x.py']\n")
    assert approval.waived(script, Governor(ws).policy) == []  # a person listed it


def test_approval_from_policy_file(ws: Path) -> None:
    pol = ws / ".orchestration" / "policy.yaml"
    pol.write_text("approval:\n  channel: deny\n")
    gov = Governor(ws)
    gov.select_intent("INT-001", "s1")
    assert gov.pre(to_call("delete_file", {"path": "src/app.py"}, session_id="s1")).error["type"] == "approval-denied"


def test_unknown_command_is_asked_never_allowed(ws: Path) -> None:
    gov = Governor(ws)  # agent-ask
    gov.select_intent("INT-001", "s1")
    v = gov.pre(to_call("Bash", {"command": "frobnicate --all"}, session_id="s1"))
    assert v.decision == "ask"


def test_read_only_command_needs_nothing(ws: Path) -> None:
    assert Governor(ws).pre(to_call("Bash", {"command": "ls -la"}, session_id="new")).allowed


def test_unknown_tool_policy(ws: Path) -> None:
    gov = Governor(ws)
    gov.select_intent("INT-001", "s1")
    call = lambda: to_call("mcp__x__do", {"path": "src/a.py"}, session_id="s1")  # noqa: E731
    assert gov.pre(call()).decision == "ask"
    (ws / ".orchestration" / "policy.yaml").write_text("unknown_tools: deny\n")
    assert gov.pre(call()).error["type"] == "unknown-tool"
    (ws / ".orchestration" / "policy.yaml").write_text("unknown_tools: mutating\ntools: {mcp__x__do: read}\n")
    assert gov.pre(call()).allowed


# --- stale -------------------------------------------------------------------------------------
def test_stale_after_other_session_changes_file(gov: Governor, ws: Path) -> None:
    gov.select_intent("INT-001", "a")
    gov.select_intent("INT-001", "b")
    read = to_call("Read", {"file_path": "src/app.py"}, session_id="a")
    assert gov.pre(read).allowed
    gov.post(read)
    # session b edits the file
    edit_b = to_call("Edit", {"file_path": "src/app.py"}, session_id="b")
    assert gov.pre(edit_b).allowed
    (ws / "src" / "app.py").write_text("x = 2\nprint(x)\n")
    gov.post(edit_b)
    # a's next edit is stale, naming both hashes
    v = gov.pre(to_call("Edit", {"file_path": "src/app.py"}, session_id="a"))
    assert v.error["type"] == "stale-file" and v.error["expected_hash"] != v.error["actual_hash"]
    assert v.error["actual_hash"].startswith("sha256:")
    # after re-reading, a may edit again
    read2 = to_call("Read", {"file_path": "src/app.py"}, session_id="a")
    gov.post(read2)
    assert gov.pre(to_call("Edit", {"file_path": "src/app.py"}, session_id="a")).allowed


def test_stale_expected_hash(gov: Governor) -> None:
    gov.select_intent("INT-001", "s1")
    call = to_call("edit_file", {"path": "src/app.py"}, session_id="s1", expected_hash="sha256:" + "0" * 64)
    assert gov.pre(call).error["type"] == "stale-file"


def test_stale_own_write_refreshes_stamp(gov: Governor, ws: Path) -> None:
    gov.select_intent("INT-001", "s1")
    gov.post(to_call("Read", {"file_path": "src/app.py"}, session_id="s1"))
    w = to_call("Write", {"file_path": "src/app.py"}, session_id="s1")
    assert gov.pre(w).allowed
    (ws / "src" / "app.py").write_text("new\n")
    gov.post(w)
    assert gov.pre(to_call("Write", {"file_path": "src/app.py"}, session_id="s1")).allowed


def test_stale_can_be_disabled(gov: Governor, ws: Path) -> None:
    (ws / ".orchestration" / "policy.yaml").write_text("stale_check: false\n")
    gov.select_intent("INT-001", "s1")
    call = to_call("edit_file", {"path": "src/app.py"}, session_id="s1", expected_hash="sha256:bad")
    assert gov.pre(call).allowed
