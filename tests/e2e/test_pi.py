"""End to end with the REAL pi (npm ``@earendil-works/pi-coding-agent``, pinned; run by the pinned node 22) against a
scripted fake OpenAI Chat Completions API.

``orch install pi --trust`` writes the extension ``.pi/extensions/orchestrator.js``, the MCP server in
``.pi/mcp.json`` (``"exposure": "direct"``) and trusts the project in the throw-away HOME's
``~/.pi/agent/trust.json`` (pi loads a project's ``.pi/`` only when trusted, and ``pi -p`` skips it silently
otherwise). pi's one provider (``~/.pi/agent/models.json``, ``api: openai-completions``) is the fake API on
127.0.0.1; ``PI_OFFLINE=1``.

One ``pi -p`` session (approval channel ``deny``, as in CI) shows: a write before any intent is refused; the intent
is selected through ``mcp__orchestrator__select_active_intent``; in-scope ``write``, ``edit`` (two replacements in
one call) and ``bash`` land and are recorded; a shell redirect to README.md, an edit of README.md, an edit of
``.orchestration/active_intents.yaml`` and of the extension itself, ``rm -rf`` of a tree, a ``python3 -c`` write
outside the scope and an escape through the shell's working directory (``cd docs && …``: pi's ``bash`` has no
``workdir``) are all stopped on disk; a script the model wrote in scope runs in the Landlock sandbox (its write
outside the scope fails in the kernel); ``orch trace verify`` passes. A ``codemode`` session shows every call its
script makes governed like a direct one. A last run shows why trust matters: untrusted, ``pi -p`` loads no extension
and nothing is governed.
"""
from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from orchestrator.daemon import server as daemon
from orchestrator.state import keys
from orchestrator.adapters.managed import PI_EXTENSION
from orchestrator.sandbox import landlock
from tests.e2e.claude_cli import CLI_TIMINGS
from tests.e2e.conftest import with_node22
from tests.e2e.fake_llm import FakeChat, ccall
from tests.e2e.orch_support import NEW, REPO_ROOT, Scenario, doctor, finding, ledger, orch, ranges_by_path
from tests.e2e.test_kilo import PY_WRITE
from tests.e2e.test_opencode import EVIL, commit, make_repo

MODEL = "m1"
PROVIDER = "fake"
SELECT = "mcp__orchestrator__select_active_intent"


def pi_env(home: Path, **extra: str) -> dict[str, str]:
    """A throw-away HOME for pi, offline, node 22 first on PATH, this checkout importable by the launcher."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PI_", "ORCH_SANDBOX", "npm_"))}
    env.update(HOME=str(home), PI_OFFLINE="1", PI_SKIP_VERSION_CHECK="1", PI_TELEMETRY="0",
               PYTHONPATH=str(REPO_ROOT), ORCH_APPROVAL_CHANNEL="deny", ORCH_DAEMON_IDLE="60", NO_COLOR="1",
               # the ledger's signing key: the one `orch init` trusted in the repository (not one in the fake HOME)
               ORCH_KEY_DIR=str(keys.key_dir()), **extra)
    return with_node22(env)


def run_pi(pi_bin: Path, root: Path, home: Path, api: FakeChat, *extra: str) -> subprocess.CompletedProcess:
    """``pi --model fake/m1 -p go`` in ``root``, its one provider the fake API."""
    agent = home / ".pi" / "agent"
    agent.mkdir(parents=True, exist_ok=True)
    (agent / "models.json").write_text(json.dumps({"providers": {PROVIDER: {
        "baseUrl": f"{api.base_url}/v1", "api": "openai-completions", "apiKey": "dummy", "models": [{"id": MODEL}]}}}))
    start = time.perf_counter()
    try:
        return subprocess.run([str(pi_bin), "--model", f"{PROVIDER}/{MODEL}", *extra, "-p", "go"], cwd=root,
                              env=pi_env(home), capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
    finally:
        CLI_TIMINGS.append(("pi -p " + " ".join(extra), time.perf_counter() - start))


def install(root: Path, home: Path, *flags: str) -> str:
    """``orch install pi`` with pi's HOME (``--trust`` writes its trust.json)."""
    return orch(root, "install", "pi", *flags, env={"HOME": str(home)}).stdout


def bash(call_id: str, command: str) -> list[dict[str, Any]]:
    return [ccall(call_id, "bash", {"command": command})]


def edit(call_id: str, path: str, old: str, new: str) -> list[dict[str, Any]]:
    return [ccall(call_id, "edit", {"path": path, "edits": [{"oldText": old, "newText": new}]})]


@pytest.fixture(scope="module")
def scenario(pi_bin: Path, tmp_path_factory: pytest.TempPathFactory) -> Scenario:
    base = tmp_path_factory.mktemp("pi")
    root, home = base / "repo", base / "home"
    make_repo(root)
    install_out = install(root, home, "--trust")
    commit(root)
    # the pinned pi on PATH (doctor's pi.version), with node 22 before it
    findings = doctor(root, env=with_node22({"HOME": str(home), "PATH": f"{pi_bin.parent}{os.pathsep}"
                                                                     f"{os.environ.get('PATH', '')}"}))
    script: list[Any] = [
        [ccall("p_write_no_intent", "write", {"path": "src/new.py", "content": NEW})],
        [ccall("p_select", SELECT, {"intent_id": "INT-1"})],
        [ccall("p_write", "write", {"path": "src/new.py", "content": NEW})],
        [ccall("p_read", "read", {"path": "src/app.py"})],
        [ccall("p_edit", "edit", {"path": "src/app.py", "edits": [{"oldText": "x = 1", "newText": "x = 2\ny = 3"},
                                                                  {"oldText": "print(x)", "newText": "print(y)"}]})],
        bash("p_shell", "echo z > src/other.py"),
        bash("p_shell_out", "echo h > README.md"),
        edit("p_edit_out", "README.md", "readme", "hijack"),
        edit("p_edit_intents", ".orchestration/active_intents.yaml", "src/**", "**"),
        edit("p_governance", PI_EXTENSION, "block: true", "block: false"),
        bash("p_rm", "rm -rf docs"),
        bash("p_py", PY_WRITE),
        bash("p_cd_out", "cd docs && echo q > notes.txt"),
        [ccall("p_w_evil", "write", {"path": "src/evil.py", "content": EVIL})],
        bash("p_evil", "python3 src/evil.py"),
        "P done",
    ]
    api = FakeChat(script)
    try:
        with api:
            proc = run_pi(pi_bin, root, home, api)
    finally:
        daemon.stop(root)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    return Scenario(root, proc, api, api.outputs(), install_out, findings, home)


def test_install_trusts_the_project_and_doctor_says_the_extension_loads(scenario: Scenario) -> None:
    assert "trust.json" in scenario.install_out
    trust = json.loads((scenario.home / ".pi" / "agent" / "trust.json").read_text())
    assert trust == {os.path.realpath(scenario.root): True}
    for check in ("pi.extension", "pi.trust", "pi.hook", "pi.mcp", "pi.version", "install.launcher"):
        assert finding(scenario.doctor, check)["status"] == "ok", scenario.doctor


def test_session_ran_its_whole_script_with_the_mandate(scenario: Scenario) -> None:
    assert scenario.api.turns_used == 16, scenario.proc.stdout[-3000:]
    assert "P done" in scenario.proc.stdout
    first = scenario.api.main_requests[0]
    system = " ".join(m["content"] for m in first["messages"] if m.get("role") == "system")
    assert "governed by orchestrator" in system and SELECT in system and ".pi/" in system
    assert SELECT in scenario.api.offered_tools(first)


def test_write_before_intent_is_refused_and_the_intent_selected_through_mcp(scenario: Scenario) -> None:
    from orchestrator.engine.pipeline import Governor

    assert "[orchestrator:intent-required]" in scenario.outputs["p_write_no_intent"]
    assert 'intent_context id="INT-1"' in scenario.outputs["p_select"], scenario.outputs["p_select"]
    sessions = {rec["metadata"]["dev.orchestrator"]["session_id"] for rec in scenario.ledger()}
    assert len(sessions) == 1
    assert Governor(scenario.root).sessions.get(next(iter(sessions))).get("intent_id") == "INT-1"


def test_in_scope_write_edits_and_shell_land(scenario: Scenario) -> None:
    for call in ("p_write", "p_read", "p_edit", "p_shell", "p_w_evil"):
        assert "orchestrator:" not in scenario.outputs[call], scenario.outputs[call]
    assert (scenario.root / "src/new.py").read_text() == NEW
    assert (scenario.root / "src/app.py").read_text() == "x = 2\ny = 3\nprint(y)\n"
    assert (scenario.root / "src/other.py").read_text() == "z\n"


def test_unsafe_calls_are_stopped_on_disk(scenario: Scenario) -> None:
    out = scenario.outputs
    assert "[orchestrator:scope-violation]" in out["p_shell_out"]
    assert "[orchestrator:scope-violation]" in out["p_edit_out"]
    assert "[orchestrator:governance-file]" in out["p_edit_intents"]
    assert "[orchestrator:governance-file]" in out["p_governance"]
    assert "[orchestrator:" in out["p_rm"]
    assert "[orchestrator:" in out["p_cd_out"] and "docs/notes.txt" in out["p_cd_out"], out["p_cd_out"]
    if landlock.abi() >= 1:
        assert "[orchestrator:" in out["p_py"] or "Permission denied" in out["p_py"], out["p_py"]
    root = scenario.root
    assert (root / "README.md").read_text() == "readme\n"
    assert "src/**" in (root / ".orchestration" / "active_intents.yaml").read_text()
    assert "block: true" in (root / PI_EXTENSION).read_text()
    assert (root / "docs" / "guide.md").read_text() == "guide\n" and not (root / "docs" / "notes.txt").exists()


def test_script_runs_sandboxed_and_the_kernel_keeps_readme(scenario: Scenario) -> None:
    if landlock.abi() < 1:
        assert "not sandboxed" in scenario.outputs["p_evil"]
        return
    out = scenario.outputs["p_evil"]
    assert "[orchestrator:" not in out and "Permission denied" in out and "README.md" in out, out
    assert (scenario.root / "src" / "made.txt").read_text() == "made\n"


def test_ledger_records_exact_ranges_and_trace_verify_passes(scenario: Scenario) -> None:
    ranges = ranges_by_path(scenario.ledger(), agent="pi", model=f"{PROVIDER}/{MODEL}")
    expected = {"src/new.py": [(1, 2)], "src/app.py": [(1, 3)], "src/other.py": [(1, 1)], "src/evil.py": [(1, 2)]}
    if landlock.abi() >= 1:
        expected["src/made.txt"] = [(1, 1)]
    assert ranges == expected, ranges
    text = (scenario.root / ".orchestration" / "agent_trace.jsonl").read_text()
    assert "--orch-sandbox" not in text and "landlock.py" not in text
    verify = orch(scenario.root, "trace", "verify", check=False)
    assert verify.returncode == 0, verify.stdout + verify.stderr


#: a codemode script: the handshake, then calls that must land or be stopped, each reported on its own line
CODEMODE = """const out = []
const calls = [
  ["select", () => tools.mcp__orchestrator__select_active_intent({intent_id: "INT-1"})],
  ["in_scope", () => tools.write({path: "src/cm.py", content: "c = 1\\n"})],
  ["readme", () => tools.write({path: "README.md", content: "cm\\n"})],
  ["edit_readme", () => tools.edit({path: "README.md", edits: [{oldText: "readme", newText: "cm"}]})],
  ["shell", () => tools.bash({command: "echo cm > docs/cm.txt"})],
  ["py", () => tools.bash({command: %s})],
]
for (const [name, call] of calls) {
  try { out.push(name + " OK " + JSON.stringify(await call()).slice(0, 400)) }
  catch (e) { out.push(name + " ERR " + e.message.slice(0, 200)) }
}
return out.join("\\n")
""" % json.dumps(PY_WRITE)


def test_codemode_nested_calls_are_governed_like_direct_ones(pi_bin: Path,
                                                               tmp_path_factory: pytest.TempPathFactory) -> None:
    """Each ``tools.<name>(args)`` of a codemode script reaches the extension's ``tool_call`` with the script's call
    as ``parentToolCallId``: the handshake selects the intent, the in-scope write lands and is recorded, the writes
    out of the scope (the file tools and the shell) are refused — the script's ``await`` rejects with the reason."""
    base = tmp_path_factory.mktemp("pi-codemode")
    root, home = base / "repo", base / "home"
    make_repo(root)
    install(root, home, "--trust")
    api = FakeChat([[ccall("m1", "codemode", {"code": CODEMODE})], "CM done"])
    try:
        with api:
            proc = run_pi(pi_bin, root, home, api, "--tools", "+codemode")
    finally:
        daemon.stop(root)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "codemode" in api.offered_tools(api.main_requests[0])
    lines = dict(line.split(" ", 1) for line in api.outputs()["m1"].splitlines() if line.split(" ", 1)[0] in (
        "select", "in_scope", "readme", "edit_readme", "shell", "py"))
    assert lines["select"].startswith("OK") and lines["in_scope"].startswith("OK"), lines
    for name in ("readme", "edit_readme", "shell"):
        assert lines[name].startswith("ERR [orchestrator:scope-violation]"), (name, lines[name])
    assert lines["py"].startswith("ERR [orchestrator:") or "Permission denied" in lines["py"], lines["py"]
    assert (root / "README.md").read_text() == "readme\n" and not (root / "docs" / "cm.txt").exists()
    assert (root / "src" / "cm.py").read_text() == "c = 1\n"
    [rec] = ledger(root)
    meta = rec["metadata"]["dev.orchestrator"]
    assert rec["files"][0]["path"] == "src/cm.py" and meta["agent"] == "pi" and meta["intent_id"] == "INT-1"
    assert meta["tool_name"] == "write" and meta["tool_use_id"].endswith("/m1/2"), meta


def test_untrusted_pi_loads_no_extension(pi_bin: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    """Why install and doctor insist on trust: untrusted, ``pi -p`` skips .pi/ without a word and runs ungoverned."""
    base = tmp_path_factory.mktemp("pi-untrusted")
    root, home = base / "repo", base / "home"
    make_repo(root)
    said = install(root, home)
    assert "SILENTLY" in said and "orch install pi --trust" in said
    # the pinned pi alone on PATH before the machine's node 20: it would not even start
    alone = base / "bin"
    alone.mkdir()
    (alone / "pi").symlink_to(pi_bin)
    findings = doctor(root, env={"HOME": str(home), "PATH": f"{alone}{os.pathsep}{os.environ.get('PATH', '')}"})
    assert finding(findings, "pi.trust")["status"] == "warn"
    version = finding(findings, "pi.version")
    if version["status"] == "warn":  # the machine's node is older than 22.19 (CI's and this one's: node 20)
        assert "does not start" in version["message"] and "22.19" in version["message"], version
        assert "node on PATH is missing" not in version["message"]  # it names the machine's node version
    api = FakeChat([[ccall("w", "write", {"path": "README.md", "content": "untrusted\n"})], "done"])
    with api:
        proc = run_pi(pi_bin, root, home, api)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert SELECT not in api.offered_tools(api.main_requests[0])  # .pi/mcp.json skipped too
    assert (root / "README.md").read_text() == "untrusted\n"  # out of scope, no intent: written all the same
    assert not (root / ".orchestration" / "agent_trace.jsonl").read_text().strip()
