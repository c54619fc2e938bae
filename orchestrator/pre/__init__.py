"""Pre-hooks. Each module exposes ``NAME`` and ``check(ctx) -> Verdict | None`` (None = pass).

The order lives in :data:`orchestrator.pipeline.HOOKS`, with the reasons for it.
"""
