"""End to end with the REAL Claude Code CLI: what a Bash command actually changed is traced (issue 12, item 4).

One print-mode session against the scripted fake Anthropic API, hooks installed by ``orch install claude-code``
(no daemon: each hook event is its own process, so the change snapshot travels from the PreToolUse process to the
PostToolUse process on disk). The agent selects its intent, writes a script inside its scope and runs it with
Bash; the script changes a file inside the scope and one outside it. The analyzer cannot see into a script
(``sh src/gen.sh`` is ``unknown``; channel ``allow`` stands for "a person approved it" without one to click), so
the scan after the command is what finds both changes: the ledger holds one Bash record with exact ranges, the
out-of-scope file flagged, and the model was told in the PostToolUse answer.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.e2e.claude_cli import make_runner
from tests.e2e.fake_anthropic import FakeAnthropic, ToolUse

REPO_ROOT = Path(__file__).resolve().parents[2]
INTENTS = """\
active_intents:
  - id: INT-1
    name: app work
    status: IN_PROGRESS
    owned_scope: ["src/**"]
"""
SCRIPT = "#!/bin/sh\nprintf 'x = 1\\nprint(x)\\ny = 2\\n' > src/app.py\nprintf '# Project\\nhijacked\\n' > README.md\n"


def _orch(root: Path, *args: str) -> None:
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT))
    proc = subprocess.run([sys.executable, "-m", "orchestrator", *args], cwd=root, env=env, capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr


def test_a_script_run_through_bash_is_traced_and_its_out_of_scope_change_reported(claude_bin: Path,
                                                                                   tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text("x = 1\nprint(x)\n")
    (root / "README.md").write_text("# Project\n")
    _orch(root, "init")
    (root / ".orchestration" / "active_intents.yaml").write_text(INTENTS)
    _orch(root, "install", "claude-code")
    subprocess.run(["git", "-C", str(root), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init"],
                   check=True)
    api = FakeAnthropic([
        [ToolUse("mcp__orchestrator__select_active_intent", {"intent_id": "INT-1"}, id="select")],
        [ToolUse("Write", {"file_path": str(root / "src/gen.sh"), "content": SCRIPT}, id="write_script")],
        [ToolUse("Bash", {"command": "sh src/gen.sh", "description": "generate"}, id="run_script")],
        "done",
    ])
    # the fallback (ORCH_SANDBOX=off): the script runs unsandboxed; with the sandbox its README write fails on disk
    # (tests/e2e/test_claude_code_sandbox.py)
    env = {"PYTHONPATH": str(REPO_ROOT), "ORCH_APPROVAL_CHANNEL": "allow", "ORCH_NO_DAEMON": "1", "ORCH_SANDBOX": "off"}
    with api:
        run = make_runner(claude_bin, tmp_path / "home")(root, api.base_url, "--mcp-config", ".mcp.json", env=env,
                                                          tools="Bash Write Edit Read mcp__orchestrator")
    assert run.returncode == 0, run.stderr
    assert "hijacked" in (root / "README.md").read_text()  # no sandbox here: the script did run
    records = [json.loads(line) for line in (root / ".orchestration/agent_trace.jsonl").read_text().splitlines()]
    bash = [r for r in records if r["metadata"]["dev.orchestrator"]["tool_name"] == "Bash"]
    assert len(bash) == 1, records
    ns = bash[0]["metadata"]["dev.orchestrator"]
    assert ns["out_of_scope"] == ["README.md"] and ns["intent_id"] == "INT-1"
    ranges = {f["path"]: [(r["start_line"], r["end_line"]) for c in f["conversations"] for r in c["ranges"]]
              for f in bash[0]["files"]}
    assert ranges == {"src/app.py": [(3, 3)], "README.md": [(2, 2)]}  # exact: the index blobs were the before
    # the PostToolUse answer reached the model (Claude Code passes additionalContext on with the next request)
    seen = json.dumps(api.requests)
    assert "out-of-scope-change" in seen and "README.md" in seen
