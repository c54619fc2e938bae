"""``orch doctor`` checks of what the governance files ask for against what this machine can do.

The sandbox sits below ``config`` (the schema validates its settings with its parsers), so the check that loads the
policy lives here and hands it to :func:`orchestrator.sandbox.doctor.findings`.
"""

from __future__ import annotations

from typing import Any


def check_sandbox(ws: Any) -> Any:
    """``orch doctor``: is the shell sandbox available here, and does the policy use it?"""
    from orchestrator.config import policy as _policy
    from orchestrator.core.findings import Finding

    try:
        pol = _policy.load(ws.policy_path)
    except Exception as exc:  # noqa: BLE001 — reported by config checks; here only what we can say
        yield Finding("sandbox", "warn", f"policy does not load ({exc}); the sandbox state is unknown",
                      "fix .orchestration/policy.yaml")
        return
    from orchestrator.sandbox.doctor import findings

    yield from findings(ws, pol)
