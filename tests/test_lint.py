"""ruff over the package, the tests and the benchmarks (config in pyproject.toml), as part of the one test command."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _ruff() -> list[str] | None:
    beside = Path(sys.executable).with_name("ruff")
    if beside.exists():
        return [str(beside)]
    found = shutil.which("ruff")
    return [found] if found else None


def test_ruff_is_clean() -> None:
    ruff = _ruff()
    if ruff is None:
        if os.environ.get("CI"):
            pytest.fail("ruff is not installed: `pip install -e '.[dev]'` installs it")
        pytest.skip("ruff not installed (pip install -e '.[dev]')")
    proc = subprocess.run([*ruff, "check", "--no-cache", "--output-format", "concise", "orchestrator", "tests",
                           "bench"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
