"""Property tests of the whole pre-hook pipeline: it never raises, and whatever it allows is allowed for a reason.

Invariant: an allowed mutating call only targets paths that are inside the workspace, inside the selected intent's
scope, not governance files and not protected by .intentignore; a shell command the analyzer could not judge is
never allowed under the `deny` channel.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from orchestrator.core.models import Kind
from orchestrator.engine.pipeline import Governor
from orchestrator.pre import selfguard
from orchestrator.engine.tools import REGISTRY, to_call

SEGMENTS = ["src", "docs", "..", ".", "", "~", ".orchestration", ".git", "AGENTS.md", "app.py", "x\x00y", "a\nb",
            "link", "secret.pem", ".claude", "settings.json", "tests", "t.py", "/etc", "*", "$HOME", "ü"]
TOOLS = sorted(REGISTRY) + ["mcp__x__write", "Frobnicate", ""]
COMMANDS = ["ls", "rm -rf src", "echo x > docs/a.md", "cat src/app.py | grep x", "bash -c 'rm -rf /'", "python -c 'x'",
            "sed -i s/a/b/ src/app.py", "git push --force", "find . -delete", "echo hi > .orchestration/policy.yaml",
            "cp src/app.py .git/hooks/pre-commit", "tee AGENTS.md < /dev/null", "$(curl x | sh)", "", "((("]


def path_strategy() -> st.SearchStrategy[str]:
    anywhere = st.lists(st.sampled_from(SEGMENTS), min_size=1, max_size=5).map("/".join)
    # half the paths start inside the scope, so that allowed mutations (the interesting case) are common
    return st.one_of(anywhere, anywhere.map(lambda p: "src/" + p), st.sampled_from(["src/new.py", "src/app.py"]))


@pytest.fixture(scope="module")
def fuzz_ws(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests.conftest import make_workspace

    root = make_workspace(tmp_path_factory.mktemp("fuzz") / "repo")
    (root / ".orchestration" / ".intentignore").write_text("*.pem\nsrc/generated/\n")
    os.symlink(root.parent, root / "src" / "link")  # a symlink inside scope pointing outside the workspace
    return root


WRITERS = ["Write", "Edit", "write_file", "edit_file", "apply_patch", "Bash", "run_command", "replace"]


@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(tool=st.one_of(st.sampled_from(TOOLS), st.sampled_from(WRITERS)), path=path_strategy(),
       command=st.one_of(st.sampled_from(COMMANDS), path_strategy().map(lambda p: f"echo x > {p}")),
       extra=st.dictionaries(st.sampled_from(["file_path", "path", "content", "command", "notebook_path"]),
                             st.one_of(st.none(), st.integers(), st.text(max_size=20), st.lists(st.text(max_size=5))),
                             max_size=3),
       select=st.booleans())
def test_pipeline_never_raises_and_allows_only_safe_targets(fuzz_ws: Path, tool: str, path: str, command: str,
                                                            extra: dict, select: bool,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ORCH_APPROVAL_CHANNEL", "deny")
    gov = Governor(fuzz_ws)
    session = "fuzz-selected" if select else "fuzz-none"
    if select:
        gov.select_intent("INT-001", session)
    tool_input = {"file_path": path, "path": path, "command": command, **extra}
    call = to_call(tool, tool_input, session_id=session, cwd=str(fuzz_ws))
    verdict = gov.pre(call)
    assert verdict.decision in ("allow", "deny", "ask")
    if verdict.decision != "allow":
        assert verdict.error and {"type", "hook", "message", "hint"} <= set(verdict.error)
        return
    if not gov.is_mutating(call, gov.policy):
        return
    assert select, "a mutation was allowed without an intent"
    event("allowed mutation")
    if call.kind is Kind.EXEC:
        assert call.shell is not None and call.shell.kind != "unknown"
    intent = gov.intents().get("INT-001")
    for target in call.resolved:
        assert intent.owns(target), target
        assert selfguard.protected_by(target) is None, target
        assert not target.endswith(".pem"), target
        real = os.path.realpath(os.path.join(fuzz_ws, target))
        assert real.startswith(str(fuzz_ws.resolve()) + os.sep), target
