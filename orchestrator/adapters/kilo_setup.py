"""``orch install kilo`` / ``orch uninstall kilo`` and the ``orch doctor`` check of the Kilo CLI install.

Kilo CLI (verified with 7.7.7, tests/e2e/test_kilo.py) is an opencode fork: it loads JS plugins from
``.kilo/plugin(s)/`` and ``.kilocode/plugin(s)/`` (not ``.opencode/plugin/``), and MCP servers from ``kilo.json(c)``
and ``opencode.json(c)`` (and the same names under ``.kilo/``, ``.kilocode/``), in every directory from where it is
started up to the project root. Install writes, through :mod:`orchestrator.adapters.opencode_setup` with
:data:`~orchestrator.adapters.opencode_setup.KILO`:

- ``.kilo/plugin/orchestrator.js``: opencode's plugin, rendered for agent ``kilo``;
- the ``orchestrator`` MCP server in the ``mcp`` section of ``kilo.json`` — Kilo's own file, which opencode does not
  read: a repository installed for Kilo alone gives opencode no MCP server without its plugin;
- the committed launcher.

No trust step. What keeps the plugin from running: ``kilo --pure`` (``KILO_PURE``) and ``KILO_DISABLE_PROJECT_CONFIG``
(which drops the project's MCP servers too): the doctor check names both.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Iterable, Mapping

from orchestrator.adapters import opencode_setup
from orchestrator.adapters.opencode_setup import KILO

AGENT = "kilo"
CONFIG_FILE = KILO.config_file


def plugin_text() -> str:
    """The plugin as this version writes it for Kilo."""
    return opencode_setup.plugin_text(KILO)


def install(root: str | os.PathLike[str], *, python: str | None = None, mcp: bool = True,
            scope: str = "shared") -> list[Path]:
    """Write the plugin, the launcher and (``mcp``) the MCP server in ``kilo.json``; returns the files written."""
    return opencode_setup.install(root, python=python, mcp=mcp, scope=scope, host=KILO)


def uninstall(root: str | os.PathLike[str]) -> list[Path]:
    """Remove what :func:`install` added — the plugin only when no ``opencode.json`` of ours still needs it (Kilo
    reads that one too)."""
    return opencode_setup.uninstall(root, host=KILO)


def notes(root: Path) -> list[str]:
    """What `orch install kilo` tells the user."""
    return opencode_setup.notes(root, KILO)


def check_kilo(ws: Any, env: Mapping[str, str] | None = None) -> Iterable[Any]:
    """``orch doctor``: Kilo's plugin in place and answered, its MCP server, and will Kilo load the plugin? Also when
    only opencode was installed: Kilo reads that ``opencode.json``."""
    return opencode_setup.check_host(ws, KILO, env)
