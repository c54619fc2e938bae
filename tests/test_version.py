"""One version: orchestrator/_version.py, read by pyproject.toml (setuptools dynamic) and re-exported."""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys

import orchestrator
from orchestrator._version import __version__


def test_one_version_everywhere() -> None:
    assert orchestrator.__version__ == __version__ == importlib.metadata.version("orchestrator")
    out = subprocess.run([sys.executable, "-m", "orchestrator", "--version"], capture_output=True, text=True,
                         timeout=60)
    assert out.stdout.strip() == f"orch {__version__}"
