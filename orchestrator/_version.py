"""The package version: the single source (pyproject.toml reads it, ``orchestrator.__version__`` re-exports it).

A module of its own with no imports, so that anything needing the version (the compiled-config cache key, the
ledger's tool stamp, the daemon's info file) reads it without importing the engine through the package
``__init__``.
"""

from __future__ import annotations

__version__ = "0.1.0"
