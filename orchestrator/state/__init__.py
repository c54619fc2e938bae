"""On-disk runtime state: what orchestrator remembers between calls and processes.

Owns the per-session state in ``.orchestration/run/sessions/`` (``sessions``: the selected intent, read-stamps),
write leases in the shared run directory (``leases``), the refusal log (``refusals``) and the per-machine ledger
signing key and trusted keys (``keys``, outside the workspace).

May import: ``core`` only.
"""
