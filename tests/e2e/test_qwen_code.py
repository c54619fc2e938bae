"""End to end with the REAL Qwen Code (npm ``@qwen-code/qwen-code``, pinned; node 22) against a scripted fake OpenAI
Chat Completions API, offline, in a throw-away HOME.

In a tmp git repo after ``orch init`` and ``orch install qwen-code`` (real commands, this interpreter): the hooks and
the MCP server in ``.qwen/settings.json`` through the committed launcher. One ``qwen --yolo -p`` session (approval
channel ``deny``, as in CI) shows: a write before any intent is refused; the intent is selected through MCP
(``tool_search`` then ``tool_call``: the hooks see ``mcp__orchestrator__select_active_intent``); in-scope
``write_file``, ``edit`` and a shell write (in ``directory`` src) land and are recorded with exact ranges, the session
and the model; a shell redirect to README.md, an edit of README.md, an edit of ``.orchestration/active_intents.yaml``,
``rm -rf`` of a tree, a ``python3 -c`` write outside the scope and escapes through the shell's ``directory`` are all
stopped on disk (Qwen ignores a PreToolUse ``updatedInput``: what the analyzer cannot vouch for is refused, never run
unsandboxed); ``orch trace verify`` passes.

A second, headless stream-json session without ``--yolo`` shows the way in to the sandbox: Qwen asks its
PermissionRequest hook, which hands it the sandboxed command; a script the model wrote runs in the kernel sandbox
and its write outside the scope fails there.

A repository installed only for Claude Code (what ``installer.install`` alone writes) shows why ``orch install``
covers: Qwen Code reads ``.mcp.json``, selects its intent, and nothing stops its unsafe calls; ``orch doctor`` says
so (``exposure.qwen-code``). ``orch install claude-code`` installs Qwen's guard too, doctor is content, and the same
calls are stopped.
"""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from orchestrator.daemon import server as daemon
from orchestrator.adapters import installer
from orchestrator.sandbox import landlock
from tests.e2e.cli_proc import run_cli
from tests.e2e.conftest import E2E_DIR, with_node22
from tests.e2e.fake_llm import FakeChat, ccall
from tests.e2e.orch_support import NEW, REPO_ROOT, Scenario, doctor, finding, ledger, orch, ranges_by_path, target_repo

MODEL = "scripted-1"
EVIL = "open('src/made.txt', 'w').write('made\\n')\nopen('README.md', 'w').write('hijack\\n')\n"
PY_WRITE = "python3 -c \"open('README.md', 'w').write('hijack')\""


def qwen_env(home: Path, api: FakeChat, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI", "QWEN", "ORCH_SANDBOX", "npm_"))}
    env.update(HOME=str(home), OPENAI_API_KEY="dummy",
               OPENAI_BASE_URL=f"{api.base_url}/v1", OPENAI_MODEL=MODEL, QWEN_CODE_SUPPRESS_YOLO_WARNING="1",
               PYTHONPATH=str(REPO_ROOT), ORCH_APPROVAL_CHANNEL="deny", ORCH_DAEMON_IDLE="60", NO_COLOR="1",
               # MCP servers connect before the first turn (else in the background: a stream-json session's first
               # tool_search may not find the handshake yet)
               QWEN_CODE_LEGACY_MCP_BLOCKING="1", **extra)
    return with_node22(env)


def user_settings(home: Path) -> None:
    """No memory sub-agent (it would send extra tool-bearing requests after the answer)."""
    (home / ".qwen").mkdir(parents=True, exist_ok=True)
    (home / ".qwen" / "settings.json").write_text(json.dumps({"memory": {
        "enableManagedAutoMemory": False, "enableManagedAutoDream": False}}))


def run_qwen(qwen_bin: Path, root: Path, home: Path, api: FakeChat, *, stream: bool = False
             ) -> subprocess.CompletedProcess:
    user_settings(home)
    if stream:  # headless without --yolo: Qwen asks its PermissionRequest hook where it would prompt a person
        args = ["--auth-type", "openai", "--approval-mode", "auto-edit", "--input-format", "stream-json",
                "--output-format", "stream-json"]
        stdin = json.dumps({"type": "user", "message": {"role": "user", "content": "go"}}) + "\n"
    else:
        args, stdin = ["--auth-type", "openai", "--yolo", "-p", "go"], ""
    return run_cli([str(qwen_bin), *args], cwd=root, env=qwen_env(home, api), input=stdin,
                   label="qwen " + " ".join(args[2:4]))


def shell(call_id: str, command: str, directory: Path | None = None) -> list[dict[str, Any]]:
    args: dict[str, Any] = {"command": command, "description": call_id}
    if directory is not None:
        args["directory"] = str(directory)
    return [ccall(call_id, "run_shell_command", args)]


def select_turns(prefix: str) -> list[Any]:
    """The handshake as Qwen's model makes it: MCP tools are deferred behind tool_search / tool_call."""
    name = "mcp__orchestrator__select_active_intent"
    return [[ccall(f"{prefix}_search", "tool_search", {"query": f"select:{name}"})],
            [ccall(f"{prefix}_select", "tool_call", {"name": name, "arguments": {"intent_id": "INT-1"}})]]


def unsafe_turns(root: Path, prefix: str) -> list[Any]:
    """The calls that must never land, whatever session makes them (each is checked on disk)."""
    return [
        shell(f"{prefix}_shell_out", "echo h > README.md"),
        [ccall(f"{prefix}_read_readme", "read_file", {"file_path": str(root / "README.md")})],
        [ccall(f"{prefix}_edit_out", "edit", {"file_path": str(root / "README.md"), "old_string": "readme",
                                               "new_string": "hijack"})],
        [ccall(f"{prefix}_read_intents", "read_file", {"file_path": str(root / ".orchestration/active_intents.yaml")})],
        [ccall(f"{prefix}_governance", "edit", {"file_path": str(root / ".orchestration/active_intents.yaml"),
                                                 "old_string": "IN_PROGRESS", "new_string": "COMPLETED"})],
        shell(f"{prefix}_rm", "rm -rf docs"),
        shell(f"{prefix}_py", PY_WRITE),
        shell(f"{prefix}_dir_out", "echo q > notes.txt", root / "docs"),
        shell(f"{prefix}_dir_escape", "echo q > escape.txt", root.parent),
    ]


def assert_unsafe_stopped(root: Path) -> None:
    assert (root / "README.md").read_text() == "readme\n"
    assert "IN_PROGRESS" in (root / ".orchestration" / "active_intents.yaml").read_text()
    assert (root / "docs" / "guide.md").exists()
    assert not (root / "docs" / "notes.txt").exists() and not (root.parent / "escape.txt").exists()


@pytest.fixture(scope="module")
def scenario(qwen_bin: Path, tmp_path_factory: pytest.TempPathFactory) -> Scenario:
    base = tmp_path_factory.mktemp("qwen")
    root, home = base / "repo", base / "home"
    target_repo(root)
    install_out = orch(root, "install", "qwen-code").stdout
    # the pinned qwen on PATH (doctor's qwen-code.version), with node 22 before it
    findings = doctor(root, env=with_node22({"PATH": f"{E2E_DIR / 'node_modules' / '.bin'}{os.pathsep}"
                                                      f"{os.environ.get('PATH', '')}"}))
    src = root / "src"
    script: list[Any] = [
        [ccall("q_write_no_intent", "write_file", {"file_path": str(src / "new.py"), "content": NEW})],
        *select_turns("q"),
        [ccall("q_write", "write_file", {"file_path": str(src / "new.py"), "content": NEW})],
        [ccall("q_read", "read_file", {"file_path": str(src / "app.py")})],
        [ccall("q_edit", "edit", {"file_path": str(src / "app.py"), "old_string": "x = 1",
                                  "new_string": "x = 2\ny = 3"})],
        shell("q_shell", "echo z > other.py", src),
        *unsafe_turns(root, "q"),
        "Q done",
    ]
    api = FakeChat(script)
    try:
        with api:
            proc = run_qwen(qwen_bin, root, home, api)
    finally:
        daemon.stop(root)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    return Scenario(root, proc, api, api.outputs(), install_out, findings)


def test_install_and_doctor(scenario: Scenario) -> None:
    assert "--trust" in scenario.install_out and "PermissionRequest" in scenario.install_out
    for check in ("hooks.qwen-code", "mcp", "qwen-code.trust", "qwen-code.failopen", "qwen-code.version",
                  "install.launcher"):
        assert finding(scenario.doctor, check)["status"] in ("ok", "warn" if check == "install.launcher" else "ok"), \
            scenario.doctor
    assert not any(f["check"].startswith("exposure.") and f["status"] == "fail" for f in scenario.doctor)


def test_the_session_ran_its_whole_script_with_the_mandate(scenario: Scenario) -> None:
    assert scenario.api.turns_used == 17, scenario.proc.stdout[-2000:]
    assert "Q done" in scenario.proc.stdout
    first = json.dumps(scenario.api.main_requests[0]["messages"])
    assert "governed by orchestrator" in first and "mcp__orchestrator__select_active_intent" in first


def test_write_before_intent_is_refused(scenario: Scenario) -> None:
    assert "[orchestrator:intent-required]" in scenario.outputs["q_write_no_intent"]


def test_intent_selected_through_mcp(scenario: Scenario) -> None:
    from orchestrator.engine.pipeline import Governor

    assert 'intent_context id="INT-1"' in scenario.outputs["q_select"], scenario.outputs["q_select"]
    sessions = {rec["metadata"]["dev.orchestrator"]["session_id"] for rec in scenario.ledger()}
    [session] = sessions
    assert Governor(scenario.root).sessions.get(session).get("intent_id") == "INT-1"


def test_in_scope_write_edit_and_shell_land_and_are_recorded(scenario: Scenario) -> None:
    for call in ("q_write", "q_read", "q_edit", "q_shell"):
        assert "orchestrator:" not in scenario.outputs[call], scenario.outputs[call]
    assert (scenario.root / "src/new.py").read_text() == NEW
    assert (scenario.root / "src/app.py").read_text() == "x = 2\ny = 3\nprint(x)\n"
    assert (scenario.root / "src/other.py").read_text() == "z\n"
    ranges = ranges_by_path(scenario.ledger(), agent="qwen-code", model=MODEL)
    assert ranges == {"src/new.py": [(1, 2)], "src/app.py": [(1, 2)], "src/other.py": [(1, 1)]}, ranges


def test_every_unsafe_call_is_stopped_on_disk(scenario: Scenario) -> None:
    out = scenario.outputs
    assert "[orchestrator:scope-violation]" in out["q_shell_out"]
    assert "[orchestrator:scope-violation]" in out["q_edit_out"]
    assert "[orchestrator:governance-file]" in out["q_governance"]
    assert "[orchestrator:" in out["q_rm"]
    assert "[orchestrator:approval-denied]" in out["q_py"]  # nothing could sandbox it: refused (channel deny)
    assert "[orchestrator:scope-violation]" in out["q_dir_out"]
    assert "orchestrator" in out["q_dir_escape"] or "workspace" in out["q_dir_escape"].lower()
    assert_unsafe_stopped(scenario.root)


def test_trace_verifies(scenario: Scenario) -> None:
    proc = orch(scenario.root, "trace", "verify", check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    text = (scenario.root / ".orchestration" / "agent_trace.jsonl").read_text()
    assert not list((scenario.root / ".orchestration" / "run" / "preimages").glob("*.json")), "unpaired pre-images"
    assert "orch-sandbox" not in text


@pytest.mark.skipif(landlock.abi() < 1, reason="no Landlock on this kernel: nothing can be sandboxed")
def test_without_yolo_permission_request_runs_a_script_in_the_sandbox(
        qwen_bin: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    base = tmp_path_factory.mktemp("qwen-stream")
    root, home = base / "repo", base / "home"
    target_repo(root)
    # outside --yolo Qwen starts a project's MCP server only once approved: --trust approves orchestrator's
    said = orch(root, "install", "qwen-code", "--trust", env={"HOME": str(home)}).stdout
    assert "approved orchestrator's MCP server" in said
    api = FakeChat([
        *select_turns("s"),
        [ccall("s_write", "write_file", {"file_path": str(root / "src" / "evil.py"), "content": EVIL})],
        shell("s_run", "python3 src/evil.py"),
        "S done",
    ])
    try:
        with api:
            proc = run_qwen(qwen_bin, root, home, api, stream=True)
    finally:
        daemon.stop(root)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    out = api.outputs()
    assert api.turns_used == 5, out
    assert "Permission denied" in out["s_run"] and "README.md" in out["s_run"], out["s_run"]
    assert (root / "README.md").read_text() == "readme\n"  # held by the kernel
    assert (root / "src" / "made.txt").read_text() == "made\n"
    records = ledger(root)
    paths = {f["path"] for rec in records for f in rec["files"]}
    assert paths == {"src/evil.py", "src/made.txt"}
    assert "orch-sandbox" not in json.dumps(records)  # the command recorded as the model asked for it
    assert orch(root, "trace", "verify", check=False).returncode == 0


def _exposed_session(qwen_bin: Path, root: Path, home: Path, prefix: str) -> dict[str, str]:
    api = FakeChat([*select_turns(prefix), *unsafe_turns(root, prefix), f"{prefix} done"])
    try:
        with api:
            proc = run_qwen(qwen_bin, root, home, api)
    finally:
        daemon.stop(root)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return api.outputs()


def test_a_repository_installed_only_for_claude_code_is_covered_by_orch_install(
        qwen_bin: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    """Qwen Code reads the .mcp.json written for Claude Code but not its hooks: without Qwen's own guard the agent
    selects an intent and then nothing stops it. ``orch doctor`` says so; ``orch install claude-code`` covers it."""
    base = tmp_path_factory.mktemp("qwen-claude")
    root, home = base / "repo", base / "home"
    target_repo(root)
    installer.install("claude-code", root)  # the files alone (an older orchestrator, or the library call)
    subprocess.run(["git", "-C", str(root), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init"],
                   check=True)
    assert finding(doctor(root), "exposure.qwen-code")["status"] == "fail"
    out = _exposed_session(qwen_bin, root, home, "x")
    assert "selected" in out["x_select"].lower() or "INT-1" in out["x_select"]  # it got the handshake...
    assert (root / "README.md").read_text() != "readme\n" and not (root / "docs").exists()  # ...and no guard
    subprocess.run(["git", "-C", str(root), "checkout", "-q", "--", "."], check=True)
    subprocess.run(["git", "-C", str(root), "clean", "-qfd", "-e", ".orchestration"], check=True)
    (root.parent / "escape.txt").unlink(missing_ok=True)

    said = orch(root, "install", "claude-code").stdout
    assert "also installed qwen-code" in said
    findings = doctor(root)
    assert not any(f["check"].startswith("exposure.") and f["status"] == "fail" for f in findings), findings
    assert finding(findings, "exposure")["status"] == "ok"
    out = _exposed_session(qwen_bin, root, home, "y")
    for call in ("y_shell_out", "y_edit_out", "y_governance", "y_rm", "y_py", "y_dir_out"):
        assert "[orchestrator:" in out[call], (call, out[call])
    assert_unsafe_stopped(root)


@pytest.mark.parametrize("broken", ["exit 1", "kill -9 $$"])
def test_a_failing_hook_blocks_in_the_real_qwen(
        qwen_bin: Path, tmp_path_factory: pytest.TempPathFactory, broken: str) -> None:
    """Qwen Code lets a call RUN when its PreToolUse hook exits 1 or is killed: the installed command turns both into
    exit 2 with a reason, which Qwen treats as a refusal the model reads. (The launcher fails for PreToolUse only;
    a launcher failing for every event blocks the prompt itself at UserPromptSubmit: no model request at all.)"""
    base = tmp_path_factory.mktemp("qwen-broken")
    root, home = base / "repo", base / "home"
    target_repo(root)
    orch(root, "install", "qwen-code")
    launcher = root / installer.LAUNCHER
    launcher.rename(launcher.with_name("orch-hook.real"))
    launcher.write_text(f"""#!/bin/sh
[ "$1" = mcp ] && exec "$0.real" "$@"
event=$(cat)
case $event in *'"PreToolUse"'*) {broken} ;; esac
printf '%s' "$event" | exec "$0.real" "$@"
""")
    launcher.chmod(0o755)
    api = FakeChat([*select_turns("b"),
                    [ccall("b_write", "write_file", {"file_path": str(root / "src" / "x.py"), "content": "x\n"})],
                    shell("b_shell", "echo h > src/y.txt"), "B done"])
    try:
        with api:
            proc = run_qwen(qwen_bin, root, home, api)
    finally:
        daemon.stop(root)
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = api.outputs()
    for call in ("b_write", "b_shell"):
        assert "the hook launcher .orchestration/bin/orch-hook is missing or failed" in out[call], out[call]
    assert not (root / "src" / "x.py").exists() and not (root / "src" / "y.txt").exists()


def test_a_launcher_failing_for_every_event_blocks_the_prompt(
        qwen_bin: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    base = tmp_path_factory.mktemp("qwen-dead")
    root, home = base / "repo", base / "home"
    target_repo(root)
    orch(root, "install", "qwen-code")
    (root / installer.LAUNCHER).write_text("#!/bin/sh\nexit 1\n")
    api = FakeChat([[ccall("d_write", "write_file", {"file_path": str(root / "README.md"), "content": "x\n"})]])
    with api:
        proc = run_qwen(qwen_bin, root, home, api)
    assert proc.returncode == 0 and api.turns_used == 0  # UserPromptSubmit's exit 2: the prompt never went out
    assert (root / "README.md").read_text() == "readme\n"
