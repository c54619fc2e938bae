"""What a person sees: read models shared by the TUI, the CLI and other consoles.

Owns the Activity view (``activity``: decisions, refusals, approvals and ledger records over time, per intent
and agent).

May import: everything below the adapters (``config``, ``state``, ``approvals``, ``ledger``, ``telemetry``);
never the TUI or the CLI, which import it.
"""
