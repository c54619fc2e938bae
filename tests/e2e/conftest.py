"""Fixtures for end-to-end tests that drive the real Claude Code CLI against a fake Anthropic API.

The CLI is pinned in ``tests/e2e/package.json`` (+ lock). If ``node_modules/.bin/claude`` is missing, the
``claude_bin`` fixture runs ``npm ci`` here once, so a plain ``pytest`` on a fresh machine runs these tests. Without
npm the tests are skipped locally, but fail when ``CI=true`` (CI must never silently skip the end-to-end proof).
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

E2E_DIR = Path(__file__).resolve().parent

CLAUDE_VERSION = json.loads((E2E_DIR / "package.json").read_text())["dependencies"]["@anthropic-ai/claude-code"]


def _unavailable(reason: str) -> None:
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"Claude Code CLI unavailable in CI: {reason}")
    pytest.skip(f"Claude Code CLI unavailable: {reason}")


@pytest.fixture(scope="session")
def claude_bin() -> Path:
    """Path to the pinned ``claude`` binary, installing it with npm on first use."""
    binary = E2E_DIR / "node_modules" / ".bin" / "claude"
    if not binary.exists():
        npm = shutil.which("npm")
        if npm is None:
            _unavailable("npm not found on PATH (install Node.js, then run `npm ci` in tests/e2e)")
        cmd = [npm, "ci" if (E2E_DIR / "package-lock.json").exists() else "install", "--no-audit", "--no-fund"]
        proc = subprocess.run(cmd, cwd=E2E_DIR, capture_output=True, text=True, timeout=600)
        if proc.returncode != 0 or not binary.exists():
            _unavailable(f"`{' '.join(cmd[1:])}` failed in tests/e2e: {proc.stderr.strip()[-800:]}")
    try:
        version = subprocess.run([str(binary), "--version"], capture_output=True, text=True, timeout=60).stdout
    except OSError as exc:
        _unavailable(f"{binary} does not run: {exc}")
    if CLAUDE_VERSION not in version:
        _unavailable(f"expected Claude Code {CLAUDE_VERSION}, found {version.strip()!r}")
    return binary


@pytest.fixture
def run_claude(claude_bin: Path, tmp_path: Path):
    """A print-mode runner with its own throw-away HOME (see :func:`make_runner`)."""
    return make_runner(claude_bin, tmp_path / "home")


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Print the wall time of each CLI launch, to keep the e2e budget (< 3 min in CI) visible."""
    if CLI_TIMINGS:
        terminalreporter.write_line(
            "claude CLI runs: " + ", ".join(f"{s:.2f}s" for _, s in CLI_TIMINGS)
            + f" (total {sum(s for _, s in CLI_TIMINGS):.1f}s)")
