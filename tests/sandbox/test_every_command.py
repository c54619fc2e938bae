"""Issue 21 part A: on a host that wraps commands, EVERY shell command runs in the kernel sandbox.

Real workspaces, the real pipeline, the real launcher under the real kernel: the analyzer's verdict adds a person at
most, it never removes the kernel. Read-only commands and commands run without an intent get the read plan (no
workspace write), secrets are unreadable for every command, secret-looking environment variables are not
inherited, and a command that cannot be wrapped is refused, never run bare.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from orchestrator.config.checks import check_sandbox
from orchestrator import sandbox
from orchestrator.engine.pipeline import Governor
from orchestrator.sandbox import landlock
from orchestrator.shell import analyze
from orchestrator.engine.tools import to_call
from tests.sandbox.conftest import Host, needs_landlock


def _run(gov: Governor, ws: Path, command: str, *, env: dict[str, str] | None = None
         ) -> tuple[object, subprocess.CompletedProcess[str] | None]:
    call = to_call("Bash", {"command": command}, session_id="s", agent="claude-code", cwd=str(ws))
    verdict = gov.pre(call, sandbox=True)
    if not verdict.allowed:
        return verdict, None
    proc = subprocess.run(["/bin/bash", "-c", verdict.command or command], cwd=ws, capture_output=True, text=True,
                          timeout=120, env={**os.environ, **(env or {})})
    gov.post(call)
    return verdict, proc


@needs_landlock
@pytest.mark.parametrize("command", ["ls -la", "cat src/app.py", "grep -rn x .", "git diff --stat",
                                     "git status --short", "find . -name '*.py'", "cd src && ls"])
def test_read_only_commands_are_wrapped_with_the_read_plan(sws: Path, command: str) -> None:
    (sws / "src").mkdir(exist_ok=True)
    (sws / "src" / "app.py").write_text("x = 1\n")
    proc = Host(sws).run(command)
    assert proc.returncode == 0, proc.stderr
    line = proc.verdict.command.removeprefix("cd src && ")  # a leading cd runs in the host's shell (cwd.py)
    assert line.startswith(str(sws / ".orchestration" / "run" / "sandbox" / "orch-sandbox"))
    assert proc.verdict.sandbox["workspace"] == "none"
    assert not any(w.startswith(str(sws)) for w in proc.verdict.sandbox["writable"])


@needs_landlock
@pytest.mark.parametrize("command, victim", [
    ("git rev-list --all --output=src/app.py", "src/app.py"),  # in scope, but the analyzer called it read-only
    ("git rev-list --all --output=README.md", "README.md"),
    ("sqlite3 :memory: \"select writefile('README.md','x')\"", "README.md"),
])
def test_a_write_hidden_in_a_read_only_command_is_refused_by_the_kernel(sws: Path, command: str, victim: str
                                                                        ) -> None:
    (sws / "src").mkdir(exist_ok=True)
    (sws / "src" / "app.py").write_text("x = 1\n")
    subprocess.run(["git", "add", "-A"], cwd=sws, check=True)
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "i"], cwd=sws, check=True)
    before = (sws / victim).read_bytes() if (sws / victim).exists() else None
    assert analyze(command).kind == "read_only"
    proc = Host(sws).run(command)
    after = (sws / victim).read_bytes() if (sws / victim).exists() else None
    assert after == before, proc.stderr


@needs_landlock
def test_without_an_intent_a_command_reads_and_tests_but_writes_nothing_in_the_workspace(sws: Path) -> None:
    gov = Governor(sws, approval_channel="deny")  # no intent selected for session "s"
    (sws / "src").mkdir(exist_ok=True)
    (sws / "src" / "app.py").write_text("x = 1\n")
    verdict, proc = _run(gov, sws, "python3 -c \"print(open('src/app.py').read().strip())\"")
    assert proc is not None and proc.returncode == 0 and proc.stdout.strip() == "x = 1", verdict
    assert verdict.sandbox["workspace"] == "none"  # type: ignore[attr-defined]
    verdict, proc = _run(gov, sws, "python3 -c \"open('src/app.py', 'w').write('pwned')\"")
    assert proc is not None and proc.returncode != 0 and "Permission denied" in proc.stderr
    assert (sws / "src" / "app.py").read_text() == "x = 1\n"
    # scratch space still works; a target the command names in the workspace needs an intent (a clear refusal)
    _v, proc = _run(gov, sws, "echo hi > \"$TMPDIR/x\" && cat \"$TMPDIR/x\"")
    assert proc is not None and proc.stdout.strip() == "hi"
    verdict, proc = _run(gov, sws, "echo x > src/new.py")
    assert proc is None and verdict.error["type"] == "intent-required"  # type: ignore[attr-defined]
    # nothing was recorded: with the read plan the workspace cannot change, so nothing is scanned or traced
    assert not (sws / ".orchestration" / "agent_trace.jsonl").exists() or \
        (sws / ".orchestration" / "agent_trace.jsonl").read_text().strip() == ""


@needs_landlock
def test_secrets_are_unreadable_for_every_command_and_the_plan_names_the_pattern(sws: Path) -> None:
    (sws / ".env").write_text("TOKEN=sk-live-abc\n")
    (sws / "src").mkdir(exist_ok=True)
    (sws / "src" / "ok.txt").write_text("sk-live is a prefix\n")
    proc = Host(sws).run("grep -r sk-live .")  # read-only: it ran unwrapped before issue 21
    assert "sk-live-abc" not in proc.stdout
    assert "src/ok.txt" in proc.stdout and ".env: Permission denied" in proc.stderr
    assert proc.verdict.sandbox["secret_patterns"][str(sws / ".env")] == ".env"


@needs_landlock
def test_secret_environment_variables_are_not_inherited(sws: Path) -> None:
    env = {"MY_API_KEY": "val-k1x", "GITHUB_TOKEN": "val-t2x", "AWS_SECRET_ACCESS_KEY": "val-s3x", "DB_PASSWORD": "val-p4x",
           "ORCH_NOT_LISTED": "val-n6x", "AWS_ACCESS_KEY_ID": "val-i5x", "PIP_INDEX_URL": "https://pypi.example/simple"}
    proc = Host(sws).run("env", env=env)
    assert proc.returncode == 0
    for value in ("val-k1x", "val-t2x", "val-s3x", "val-p4x", "val-i5x", "val-n6x"):  # only the allow-list passes
        assert value not in proc.stdout
    assert "PIP_INDEX_URL=https://pypi.example/simple" in proc.stdout and "PATH=" in proc.stdout


@needs_landlock
def test_policy_keep_list_and_own_patterns(sws: Path) -> None:
    (sws / ".orchestration" / "policy.yaml").write_text(
        "version: 1\nsandbox:\n  writable: ['{tmp}']\n  env_scrub: ['*_TOKEN', 'MY_*']\n  env_keep: [NPM_TOKEN]\n")
    proc = Host(sws).run("env", env={"NPM_TOKEN": "npm-1", "GH_TOKEN": "gh-2", "MY_THING": "m-3",
                                     "OTHER_API_KEY": "o-4", "CARGO_HOME_X_API_KEY": "c-5"})
    assert "NPM_TOKEN=npm-1" in proc.stdout  # kept by name
    assert "CARGO_HOME_X_API_KEY=c-5" in proc.stdout  # on the allow-list (CARGO_*), not in the policy's patterns
    assert "gh-2" not in proc.stdout and "m-3" not in proc.stdout and "o-4" not in proc.stdout


def test_scrub_matcher() -> None:
    from orchestrator.sandbox.envpolicy import dropped, glob_match

    env = {"ANTHROPIC_API_KEY": "", "OPENAI_API_KEY": "", "GH_TOKEN": "", "HF_TOKEN": "", "NODE_AUTH_TOKEN": "",
           "PATH": "", "HOME": "", "TOKENIZERS_PARALLELISM": "", "KEYBOARD": "", "SSH_AUTH_SOCK": "",
           "AZURE_CLIENT_SECRET": "", "GOOGLE_APPLICATION_CREDENTIALS": "", "PGPASSWORD": "", "aws_session_token": ""}
    # every name kept (env_keep: ['*']): the name patterns alone decide
    assert sorted(dropped(env, ["*"])) == sorted(["ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GH_TOKEN", "HF_TOKEN",
                                                  "NODE_AUTH_TOKEN", "AZURE_CLIENT_SECRET",
                                                  "GOOGLE_APPLICATION_CREDENTIALS", "PGPASSWORD", "aws_session_token"])
    assert dropped({"A_TOKEN": ""}, ["a_token"], ["*_TOKEN"]) == {}
    assert glob_match("A*B*C", "AxxBxxC") and not glob_match("A*B*C", "AC")


@pytest.mark.parametrize("command, why", [
    ("cd src", "cwd"), ("pushd src", "cwd"), ("cd ..", "cwd"),
    ("git commit -qm wip", None), ("git add -A && git commit -m x", None), ("cd src && git add .", None),
    ("git push --force origin main", None), ("git log", None), ("git rev-list --all --output=README.md", None),
    ("git -c core.pager=x log", None), ("cd \"$HOME\"", None), ("cd src; ls", None), ("ls", None),
    ("x='a[$(touch README.md)]'; (( x ))", None), ("git stash pop", None),
])
def test_the_only_exemption_is_a_bare_cd(command: str, why: str | None) -> None:
    assert sandbox.exempt(analyze(command), command) == why


@pytest.mark.parametrize("command, writes", [("git commit -qm x", True), ("git add -A && git commit -m x", True),
                                             ("git log", False), ("git status", False), ("pytest", False)])
def test_commands_that_write_git_history_need_an_intent(command: str, writes: bool) -> None:
    assert sandbox.writes_git(analyze(command)) == writes


@needs_landlock
def test_git_porcelain_commits_inside_the_sandbox_and_nothing_it_plants_survives(sws: Path) -> None:
    (sws / "src").mkdir(exist_ok=True)
    subprocess.run(["git", "config", "user.name", "t"], cwd=sws, check=True)
    subprocess.run(["git", "config", "user.email", "t@t"], cwd=sws, check=True)
    proc = Host(sws).run("echo 'x = 1' > src/app.py && git add src/app.py && git commit -qm wip")
    assert proc.returncode == 0, proc.stderr
    assert proc.verdict.command is not None and proc.verdict.sandbox.get("git")  # wrapped, git-dir mode
    proc = Host(sws).run("git -c user.name=u commit --allow-empty -qm wip2 && "
                         "python3 -c \"open('.git/hooks/post-commit', 'w').write('echo pwned')\"")
    log = subprocess.run(["git", "log", "--oneline"], cwd=sws, capture_output=True, text=True).stdout
    assert "wip" in log and "wip2" in log
    assert not (sws / ".git" / "hooks" / "post-commit").exists()  # restored after the command (gitdir.py)
    # without an intent, a command that writes git history is refused early (a read plan keeps .git read-only)
    verdict = Governor(sws, approval_channel="deny").pre(
        to_call("Bash", {"command": "git commit --allow-empty -qm x"}, session_id="other", cwd=str(sws)), sandbox=True)
    assert verdict.decision == "deny" and verdict.error["type"] == "intent-required"


@pytest.mark.parametrize("command, kind", [("echo a\0b", "NUL"), ("echo " + "x" * 100_001, "bytes long")])
def test_a_command_that_cannot_be_wrapped_is_refused_not_run_bare(sws: Path, command: str, kind: str) -> None:
    verdict = Host(sws).pre(command, sandbox=True)
    assert verdict.decision == "deny" and verdict.error["type"] == "command-unwrappable"
    assert kind in verdict.error["message"] and verdict.command is None


@needs_landlock
def test_an_ask_carries_the_wrapped_command_so_a_yes_still_runs_in_the_kernel(sws: Path) -> None:
    from orchestrator.adapters import claude_code

    verdict = Host(sws, channel="agent-ask").pre("echo 'unterminated", sandbox=True)
    assert verdict.decision == "ask" and verdict.command is not None
    out = claude_code.decision(verdict, tool_input={"command": "echo 'unterminated", "description": "d"})
    answer = json.loads(out.stdout)["hookSpecificOutput"]
    assert answer["permissionDecision"] == "ask"
    assert answer["updatedInput"] == {"command": verdict.command, "description": "d"}


@needs_landlock
def test_launcher_stub_fails_closed_on_a_bad_spec_id(sws: Path) -> None:
    verdict = Host(sws).pre("ls", sandbox=True)
    stub = verdict.command.split(" ")[0]
    for bad in ("../../etc/passwd", "0123456789abcdef0"):
        proc = subprocess.run([stub, bad, "--", "echo ran"], capture_output=True, text=True)
        assert proc.returncode == landlock.EXIT_SETUP and "ran" not in proc.stdout


@needs_landlock
def test_explain_shows_the_read_plan_secrets_and_the_environment_not_inherited(tmp_path: Path) -> None:
    import sys

    def orch(*args: str, **extra: str) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2]), **extra}
        env.pop("ORCH_APPROVAL_CHANNEL", None)
        return subprocess.run([sys.executable, "-m", "orchestrator", *args], cwd=tmp_path, capture_output=True,
                              text=True, env=env, timeout=120)

    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    assert orch("init").returncode == 0
    (tmp_path / ".env").write_text("K=v\n")
    r = orch("explain", "grep -r x .", MY_SERVICE_TOKEN="v", PLAIN_VAR="v")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "writes nothing in the workspace (read plan)" in r.stdout
    assert "unreadable: " in r.stdout and f"{tmp_path / '.env'} (.env)" in r.stdout
    env = r.stdout[r.stdout.index("environment not inherited"):]
    assert "MY_SERVICE_TOKEN" in env and "PLAIN_VAR" in env  # not on the allow-list, either of them
    r = orch("explain", "git add -A")
    assert "intent-required" in r.stdout  # git porcelain is exempt from the kernel: it still needs an intent


def test_doctor_says_what_cursor_costs(tmp_path: Path) -> None:
    from orchestrator.core.findings import Finding
    from orchestrator.config.workspace import Workspace
    from tests.conftest import make_workspace

    ws = make_workspace(tmp_path / "repo", "active_intents: []\n")
    (ws / ".cursor").mkdir()
    (ws / ".cursor" / "hooks.json").write_text('{"version": 1, "hooks": {"preToolUse": [{"command": "orch hook '
                                               'cursor"}]}}')
    findings: list[Finding] = list(check_sandbox(Workspace(ws)))
    cursor = [f for f in findings if f.check == "sandbox-cursor"]
    if landlock.abi() >= 1:
        assert cursor and cursor[0].status == "warn" and "WITHOUT the kernel sandbox" in cursor[0].message
