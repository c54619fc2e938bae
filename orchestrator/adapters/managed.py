"""How orchestrator recognises what it wrote into an agent's configuration (standard library only, no imports).

A leaf shared by the generic installer (:mod:`orchestrator.adapters.installer`) and the agent-specific setup
modules it calls (:mod:`~orchestrator.adapters.codex_setup`, :mod:`~orchestrator.adapters.gemini_setup`), so that
neither side imports the other to learn the marks.
"""

from __future__ import annotations

#: trails every hook command orchestrator installs (a shell comment: inert when the agent runs the command)
MARK = "# orch:managed"
#: the name of orchestrator's MCP server in every agent's configuration
SERVER = "orchestrator"
#: orchestrator's opencode plugin (opencode runs no hook commands; it names the launcher, like hook commands do)
OPENCODE_PLUGIN = ".opencode/plugin/orchestrator.js"
#: orchestrator's Cline plugin (Cline's hook files cannot refuse one call: its agent plugins can)
CLINE_PLUGIN = ".cline/plugins/orchestrator.js"
#: the agents governed by a plugin orchestrator writes instead of hook commands -> the plugin (it calls the launcher
#: when no daemon answers, and its first line carries ``orch:managed``)
PLUGINS: dict[str, str] = {"opencode": OPENCODE_PLUGIN, "cline": CLINE_PLUGIN}

__all__ = ["CLINE_PLUGIN", "MARK", "OPENCODE_PLUGIN", "PLUGINS", "SERVER"]
