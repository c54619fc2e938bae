"""Run the real GitHub Copilot CLI in prompt mode, offline, against a fake Chat Completions API (e2e helpers).

Copilot 1.0.102 runs offline with a "bring your own key" provider: ``COPILOT_OFFLINE=true``,
``COPILOT_PROVIDER_BASE_URL`` (an OpenAI Chat Completions endpoint), ``COPILOT_PROVIDER_API_KEY`` and
``COPILOT_MODEL``. ``--allow-all-tools`` is required in prompt mode; ``--trust-folder`` trusts the working directory
for this one session (repository hooks in ``.github/hooks/`` only run in a trusted folder).
"""
from __future__ import annotations

import json
import os
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.e2e.claude_cli import CLI_TIMINGS
from tests.e2e.fake_llm import CHAT_MODEL


@dataclass
class CopilotRun:
    """One finished ``copilot -p`` process: its JSONL events (``--output-format json``), raw output, wall time."""

    returncode: int
    stdout: str
    stderr: str
    seconds: float
    events: list[dict[str, Any]] = field(default_factory=list)

    @property
    def session_id(self) -> str | None:
        """The session id of the final ``result`` event."""
        return next((e.get("sessionId") for e in self.events if e.get("type") == "result"), None)


def make_copilot_runner(copilot_bin: Path, home: Path):
    """Return ``run(cwd, base_url, *extra, prompt="go", env=None, trust=True) -> CopilotRun``.

    A throw-away HOME (no user config, no saved trust, no credentials), a dummy key and no telemetry.
    """
    home.mkdir(parents=True, exist_ok=True)

    def run(cwd: Path, base_url: str, *extra: str, prompt: str = "go", env: dict[str, str] | None = None,
            trust: bool = True, timeout: float = 120) -> CopilotRun:
        full_env = {k: v for k, v in os.environ.items() if not k.startswith(("COPILOT_", "GH_", "GITHUB_"))}
        full_env.update(HOME=str(home), COPILOT_OFFLINE="true", COPILOT_PROVIDER_BASE_URL=base_url + "/v1",
                        COPILOT_PROVIDER_API_KEY="dummy", COPILOT_MODEL=CHAT_MODEL)
        full_env.update(env or {})
        cmd = [str(copilot_bin), "-p", prompt, "--allow-all-tools", "--output-format", "json",
               "--disable-client-telemetry", *(["--trust-folder"] if trust else []), *extra]
        start = time.perf_counter()
        proc = subprocess.run(cmd, cwd=cwd, env=full_env, capture_output=True, text=True, timeout=timeout)
        seconds = time.perf_counter() - start
        CLI_TIMINGS.append((" ".join(["copilot", *extra]), seconds))
        events = []
        for line in proc.stdout.splitlines():
            try:
                events.append(json.loads(line))
            except ValueError:
                continue
        return CopilotRun(proc.returncode, proc.stdout, proc.stderr, seconds, events)

    return run
