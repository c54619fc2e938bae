"""mypy over the package (config in pyproject.toml), as part of the one test command."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _mypy() -> list[str] | None:
    beside = Path(sys.executable).with_name("mypy")
    if beside.exists():
        return [str(beside)]
    found = shutil.which("mypy")
    return [found] if found else None


def test_mypy_is_clean() -> None:
    mypy = _mypy()
    if mypy is None:
        if os.environ.get("CI"):
            pytest.fail("mypy is not installed: `pip install -e '.[dev]'` installs it")
        pytest.skip("mypy not installed (pip install -e '.[dev]')")
    # the incremental cache (.mypy_cache/, gitignored) takes a rerun from ~30 s cold to a few seconds
    proc = subprocess.run([*mypy, "--cache-dir", str(ROOT / ".mypy_cache")], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
