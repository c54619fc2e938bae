"""Post-hooks: the trace (changed ranges → ledger) and lessons (AGENTS.md)."""
