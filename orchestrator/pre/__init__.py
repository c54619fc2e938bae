"""Pre-hooks, and the contract they are written against.

Owns the hook contract (``context``: :class:`Context`, what a hook sees) and one module per pre-hook, each with
``NAME`` and ``check(ctx) -> Verdict | None`` (None = pass): ``selfguard``, ``gatekeeper``, ``scope``,
``intentignore``, ``approval``, ``lease``, ``stale``, plus ``secrets`` (run before them on every call). The order
lives in :data:`orchestrator.engine.pipeline.HOOKS`, with the reasons for it.

May import: everything below it (``core`` … ``telemetry``: the config, the sandbox, the approval broker); never the
engine, an adapter, the CLI or the TUI.
"""
