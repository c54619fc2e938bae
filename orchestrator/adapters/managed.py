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
#: the same plugin where Kilo CLI (an opencode fork) loads it: Kilo reads no .opencode/plugin/
KILO_PLUGIN = ".kilo/plugin/orchestrator.js"
#: orchestrator's pi extension (loaded only in a trusted project, started in its root)
PI_EXTENSION = ".pi/extensions/orchestrator.js"
#: orchestrator's Cline plugin (Cline's hook files cannot refuse one call: its agent plugins can)
CLINE_PLUGIN = ".cline/plugins/orchestrator.js"
#: every plugin file orchestrator writes, by agent: each calls the launcher when no daemon answers
PLUGINS = {"opencode": OPENCODE_PLUGIN, "kilo": KILO_PLUGIN, "pi": PI_EXTENSION, "cline": CLINE_PLUGIN}

__all__ = ["CLINE_PLUGIN", "KILO_PLUGIN", "MARK", "OPENCODE_PLUGIN", "PI_EXTENSION", "PLUGINS", "SERVER"]
