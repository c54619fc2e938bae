"""What the e2e tests share: the workspace they govern and running ``orch`` from this checkout."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

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
