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
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

E2E_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(E2E_DIR))  # fake_anthropic is a helper module next to this file, not a package

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


@dataclass
class CliRun:
    """One finished ``claude -p`` process: its parsed JSON result, raw output and wall time."""

    returncode: int
    stdout: str
    stderr: str
    seconds: float
    result: dict[str, Any] = field(default_factory=dict)

    @property
    def denied_ids(self) -> set[str]:
        """tool_use_ids the hooks refused, from the result's ``permission_denials``."""
        return {d.get("tool_use_id") for d in self.result.get("permission_denials", [])}


CLI_TIMINGS: list[tuple[str, float]] = []


def make_runner(claude_bin: Path, home: Path):
    """Return ``run(cwd, base_url, *extra_args, prompt="go", env=None) -> CliRun`` for offline print-mode runs.

    Uses a throw-away HOME (no user config, no credentials), a dummy API key and no telemetry.
    """
    home.mkdir(parents=True, exist_ok=True)

    def run(cwd: Path, base_url: str, *extra: str, prompt: str = "go", env: dict[str, str] | None = None,
            tools: str = "Bash Write Edit Read Glob Grep", timeout: float = 120) -> CliRun:
        full_env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "CLAUDE"))}
        full_env.update(HOME=str(home), ANTHROPIC_BASE_URL=base_url, ANTHROPIC_API_KEY="dummy",
                        DISABLE_TELEMETRY="1", CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
                        DISABLE_AUTOUPDATER="1")
        full_env.update(env or {})
        cmd = [str(claude_bin), "-p", prompt, "--allowedTools", tools, "--output-format", "json", *extra]
        start = time.perf_counter()
        proc = subprocess.run(cmd, cwd=cwd, env=full_env, capture_output=True, text=True, timeout=timeout)
        seconds = time.perf_counter() - start
        CLI_TIMINGS.append((" ".join(extra) or "claude -p", seconds))
        try:
            result = json.loads(proc.stdout)
        except ValueError:
            result = {}
        return CliRun(proc.returncode, proc.stdout, proc.stderr, seconds, result)

    return run


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
