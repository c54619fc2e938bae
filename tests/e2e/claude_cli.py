"""Run the real Claude Code CLI in print mode, offline, against a fake Anthropic API (helpers for the e2e tests)."""
from __future__ import annotations

import json
import os
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: (what, seconds) of every CLI launch in this test session, printed in the terminal summary
CLI_TIMINGS: list[tuple[str, float]] = []


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
