"""A governed repository cloned to a second place, on a "machine" where the recorded interpreter does not exist.

Real ``git clone``, the hook command string taken from the clone's committed ``.claude/settings.json`` and run the
way Claude Code runs it (``sh -c``, ``CLAUDE_PROJECT_DIR`` set, the event on stdin), with a PATH that holds no
interpreter with orchestrator: every call must be BLOCKED (exit 2) with an actionable message, never allowed;
``orch doctor`` must report it with a fix. Then the teammate's fix (an interpreter named by ORCH_PYTHON) makes the
same committed command govern again.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from orchestrator.adapters import installer
from tests.conftest import make_workspace

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


def _git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args], cwd=cwd, check=True,
                   capture_output=True)


def _bare_path(tmp: Path) -> str:
    """A PATH with sh, git and coreutils but no Python that has orchestrator (no venv, no `orch`)."""
    bin_dir = tmp / "bin"
    bin_dir.mkdir(exist_ok=True)
    for tool in ("sh", "git", "dirname", "sed", "cut", "mkdir", "mv", "cat", "env"):
        found = shutil.which(tool)
        if found and not (bin_dir / tool).exists():
            (bin_dir / tool).symlink_to(found)
    return str(bin_dir)


@pytest.fixture
def clone(tmp_path: Path) -> Path:
    origin = make_workspace(tmp_path / "origin", git=True)
    installer.install("claude-code", origin)
    _git("add", "-A", cwd=origin)
    _git("commit", "-qm", "governed", cwd=origin)
    dest = tmp_path / "teammate" / "clone"
    dest.parent.mkdir()
    subprocess.run(["git", "clone", "-q", str(origin), str(dest)], check=True, capture_output=True)
    assert not (dest / ".orchestration" / "run").exists() or not (dest / installer.REMEMBERED).exists()
    return dest


def _pre_tool_use_command(root: Path) -> str:
    settings = json.loads((root / ".claude" / "settings.json").read_text(encoding="utf-8"))
    return settings["hooks"]["PreToolUse"][0]["hooks"][0]["command"]


def _event(root: Path, path: str) -> str:
    return json.dumps({"hook_event_name": "PreToolUse", "session_id": "teammate", "tool_name": "Write",
                       "cwd": str(root), "tool_input": {"file_path": str(root / path), "content": "x"}})


def _env(tmp_path: Path, root: Path, **extra: str) -> dict[str, str]:
    return {"PATH": _bare_path(tmp_path), "HOME": str(tmp_path / "home"), "CLAUDE_PROJECT_DIR": str(root),
            "ORCH_NO_DAEMON": "1", **extra}


def test_clone_without_the_recorded_interpreter_blocks_every_call(clone: Path, tmp_path: Path) -> None:
    command = _pre_tool_use_command(clone)
    assert sys.executable not in command  # nothing machine-specific was committed
    env = _env(tmp_path, clone)
    for path in ("src/app.py", "README.md", ".orchestration/policy.yaml"):
        proc = subprocess.run(["sh", "-c", command], input=_event(clone, path), capture_output=True, text=True,
                              cwd=clone, env=env, timeout=60)
        assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
        assert "BLOCKED" in proc.stderr and "no Python interpreter with orchestrator" in proc.stderr
        assert "ORCH_PYTHON" in proc.stderr and "orch doctor" in proc.stderr  # says how to fix it

    doctor = subprocess.run([sys.executable, "-m", "orchestrator", "doctor", "-C", str(clone), "--json"],
                            capture_output=True, text=True, env={**env, "PYTHONPATH": str(installer.package_parent())},
                            timeout=120)
    findings = {f["check"]: f for f in json.loads(doctor.stdout)}
    assert doctor.returncode == 1
    hook = findings["hooks.claude-code"]
    assert hook["status"] == "fail" and "does not govern" in hook["message"]
    assert "venv" in hook["fix"] and "ORCH_PYTHON" in hook["fix"]

    # the teammate's fix: an interpreter that has orchestrator (here: this one) - the same committed command governs
    fixed = _env(tmp_path, clone, ORCH_PYTHON=sys.executable)
    proc = subprocess.run(["sh", "-c", command], input=_event(clone, "src/app.py"), capture_output=True, text=True,
                          cwd=clone, env=fixed, timeout=60)
    assert proc.returncode == 0
    answer = json.loads(proc.stdout)["hookSpecificOutput"]
    assert answer["permissionDecision"] == "deny" and "intent-required" in answer["permissionDecisionReason"]


def test_a_missing_launcher_blocks_too(clone: Path, tmp_path: Path) -> None:
    (clone / installer.LAUNCHER).unlink()
    proc = subprocess.run(["sh", "-c", _pre_tool_use_command(clone)], input=_event(clone, "src/app.py"),
                          capture_output=True, text=True, cwd=clone, env=_env(tmp_path, clone), timeout=60)
    assert proc.returncode == 2
    assert "hook launcher .orchestration/bin/orch-hook is missing" in proc.stderr


def test_the_launcher_finds_the_project_venv(clone: Path, tmp_path: Path) -> None:
    """`.venv/bin/python` in the clone is found and remembered for the next call (no venv build: this test's venv,
    linked into the clone, stands in for the teammate's own)."""
    ours = Path(sys.prefix)
    if not (ours / "pyvenv.cfg").exists():
        pytest.skip("the tests do not run in a venv")
    venv = clone / ".venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text((ours / "pyvenv.cfg").read_text())
    (venv / "lib").symlink_to(ours / "lib")
    (venv / "bin" / "python").symlink_to(os.path.realpath(sys.executable))
    venv_bin = venv / "bin"
    env = _env(tmp_path, clone)
    proc = subprocess.run(["sh", "-c", _pre_tool_use_command(clone)], input=_event(clone, "src/app.py"),
                          capture_output=True, text=True, cwd=clone, env=env, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "intent-required" in proc.stdout
    assert (clone / installer.REMEMBERED).read_text().splitlines()[0] == str(venv_bin / "python")


def test_a_linked_worktree_uses_the_main_worktrees_interpreter(tmp_path: Path) -> None:
    """`git worktree add`: the new checkout has the committed launcher but no remembered interpreter of its own."""
    origin = make_workspace(tmp_path / "main", git=True)
    installer.install("claude-code", origin)
    _git("add", "-A", cwd=origin)
    _git("commit", "-qm", "governed", cwd=origin)
    linked = tmp_path / "linked"
    _git("worktree", "add", "-q", str(linked), "-b", "feature", cwd=origin)
    assert not (linked / installer.REMEMBERED).exists()
    proc = subprocess.run(["sh", "-c", _pre_tool_use_command(linked)], input=_event(linked, "src/app.py"),
                          capture_output=True, text=True, cwd=linked, env=_env(tmp_path, linked), timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "intent-required" in proc.stdout
    assert (linked / installer.REMEMBERED).read_text() == (origin / installer.REMEMBERED).read_text()


def test_an_interpreter_without_the_dependencies_is_not_taken(clone: Path, tmp_path: Path) -> None:
    """python3 on PATH that can import the package (PYTHONPATH) but lacks its dependencies must not be chosen:
    the call is blocked with the launcher's message rather than failing later inside the client."""
    bare = shutil.which("python3", path="/usr/bin:/bin")
    if bare is None:
        pytest.skip("no system python3")
    probe = subprocess.run([bare, "-c", "import pydantic"], capture_output=True)
    if probe.returncode == 0:
        pytest.skip("the system python3 has pydantic")
    env = _env(tmp_path, clone, PYTHONPATH=str(installer.package_parent()))
    (Path(env["PATH"]) / "python3").symlink_to(bare)
    proc = subprocess.run(["sh", "-c", _pre_tool_use_command(clone)], input=_event(clone, "src/app.py"),
                          capture_output=True, text=True, cwd=clone, env=env, timeout=60)
    assert proc.returncode == 2 and "no Python interpreter with orchestrator" in proc.stderr
