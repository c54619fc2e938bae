"""What the e2e tests share: the workspace they govern and running ``orch`` from this checkout."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[2]
INTENTS = """\
active_intents:
  - id: INT-1
    name: app work
    status: IN_PROGRESS
    owned_scope: ["src/**"]
"""
APP = "x = 1\nprint(x)\n"
NEW = "def f():\n    return 1\n"


def orch(root: Path, *args: str, env: dict[str, str] | None = None, check: bool = True
         ) -> subprocess.CompletedProcess:
    """Run ``python -m orchestrator ARGS`` in ``root`` with this checkout importable; assert exit 0 if ``check``."""
    full = dict(os.environ, PYTHONPATH=str(REPO_ROOT), **(env or {}))
    proc = subprocess.run([sys.executable, "-m", "orchestrator", *args], cwd=root, env=full, capture_output=True,
                          text=True, timeout=60)
    if check:
        assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc


def governed_repo(root: Path, app: str = APP, intents: str = INTENTS) -> Path:
    """``root``: a new git repository with ``src/app.py`` and orchestrator initialised with ``intents``."""
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text(app)
    orch(root, "init")
    (root / ".orchestration" / "active_intents.yaml").write_text(intents)
    return root


def app_repo(base: Path, app: str = "x = 1\n", intents: str = INTENTS) -> Path:
    """``base/repo``: :func:`governed_repo`, installed for Claude Code."""
    root = governed_repo(base / "repo", app, intents)
    orch(root, "install", "claude-code")
    return root


def ledger(root: Path) -> list[dict]:
    """The records of ``root``'s ledger."""
    text = (root / ".orchestration" / "agent_trace.jsonl").read_text()
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def doctor(root: Path, env: dict[str, str] | None = None) -> list[dict]:
    """``orch doctor --json``'s findings."""
    return json.loads(orch(root, "doctor", "--json", env=env, check=False).stdout)


def finding(findings: list[dict], check: str) -> dict:
    """The first finding of ``check``."""
    return next(f for f in findings if f["check"] == check)


def ranges_by_path(records: list[dict], *, agent: str, model: str, intent: str = "INT-1"
                   ) -> dict[str, list[tuple[int, int]]]:
    """The recorded line ranges per file, asserting that every record names ``agent``, ``intent`` and ``model``."""
    ranges: dict[str, list[tuple[int, int]]] = {}
    for rec in records:
        meta = rec["metadata"]["dev.orchestrator"]
        assert meta["intent_id"] == intent and meta["agent"] == agent, meta
        for f in rec["files"]:
            for conv in f["conversations"]:
                assert conv["contributor"]["model_id"] == model
                ranges.setdefault(f["path"], []).extend((r["start_line"], r["end_line"]) for r in conv["ranges"])
    return ranges


@dataclass
class Scenario:
    """One scripted session of a real agent CLI in a governed repository, and what it left."""

    root: Path
    proc: subprocess.CompletedProcess
    api: Any  # the scripted fake model API (tests.e2e.fake_llm)
    outputs: dict[str, str]
    install_out: str
    doctor: list[dict]
    home: Path | None = None

    def ledger(self) -> list[dict]:
        return ledger(self.root)


def target_repo(root: Path) -> Path:
    """:func:`governed_repo` plus what the unsafe calls of the e2e scenarios aim at: ``README.md`` and a ``docs/``
    tree (outside the intent's ``src/**``)."""
    governed_repo(root)
    (root / "docs").mkdir()
    (root / "docs" / "guide.md").write_text("guide\n")
    (root / "README.md").write_text("readme\n")
    return root
