"""Post-hooks: what happens after a governed tool ran.

Owns the pre-image capture (``preimage``: the only module a pre-hook loads), the trace (``trace``: changed ranges,
content hashes and classification into a ledger record), what a shell command changed (``changes``), the
symlink-swap check of a file tool's write (``swap``), the removal of governance files a command created inside the
scope (``revert``) and lessons appended to AGENTS.md (``lessons``).

May import: everything below ``pre`` (``core`` … ``telemetry``: the ledger, the classifier, git); never the pre-hooks,
the engine or an adapter.
"""
