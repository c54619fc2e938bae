"""The engine: the Governor that runs every tool call through the hooks.

Owns the tool registry (``tools``: every agent's tool names to a kind and target keys), call preparation before
any hook (``prepare``: shell analysis, canonical targets) and the ``Governor`` (``pipeline``: the pre-hook chain
and its fail-closed boundary, ``post``, intent selection).

May import: every package below it (``core`` … ``post``, ``telemetry``); never an adapter, the CLI or the TUI.
"""
