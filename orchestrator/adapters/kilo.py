"""Kilo CLI adapter: the events of orchestrator's plugin in ``.kilo/plugin/orchestrator.js``, answered as opencode's.

Kilo CLI (``@kilocode/cli``, verified with 7.7.7 in tests/e2e/test_kilo.py) is a fork of opencode: it loads the same
kind of JS plugin, from ``.kilo/plugin(s)/`` and ``.kilocode/plugin(s)/`` (not ``.opencode/plugin/``), with the same
hooks and the same inputs (captured in tests/data/kilo/; opencode's in tests/data/opencode/). So the plugin is
opencode's (one template, ``orchestrator/data/templates/opencode-plugin.js``, rendered with the agent name ``kilo``)
and this adapter is :mod:`orchestrator.adapters.opencode` with Kilo as its
:class:`~orchestrator.adapters.opencode.Host`: calls are governed and recorded as agent ``kilo``, and the mandate names Kilo's configuration as read-only.

What Kilo adds over opencode 1.18.33: ``background_process {action, command, workdir, …}`` — ``start`` runs a
tracked process that outlives the call: its command is governed like ``bash`` (rewritten into the Landlock sandbox,
``workdir`` as its cwd); ``list``/``status``/``logs``/``stop``/``restart`` run nothing new — and tools that touch no
file (``board_post``, ``board_read``, ``schedule_wakeup``, ``cancel_wakeup``, ``kilo_local_recall``, the MCP resource
tools). Kilo reads MCP servers from ``kilo.json(c)`` and ``opencode.json(c)``, and ``.kilo/`` / ``.kilocode/``, from
the directory it is started in up to the project root.
"""
from __future__ import annotations

from typing import Any

from orchestrator.adapters.base import HookResult
from orchestrator.adapters.opencode import Host, handle as _handle

AGENT = "kilo"
KILO = Host(AGENT, ".kilo/, .kilocode/, kilo.json, opencode.json")


def handle(event: dict[str, Any], governor: Any, *, sandbox: bool = True) -> HookResult:
    """Answer one event of orchestrator's Kilo plugin (:func:`orchestrator.adapters.opencode.handle`)."""
    return _handle(event, governor, sandbox=sandbox, host=KILO)
