"""The core: the vocabulary every other package shares, all leaves.

Owns the per-call classes (``models``: ``ToolCall``, ``Verdict``, ``ToolResult``, ``Kind``), the error classes
(``errors``), canonical paths (``paths``), scope globs (``globs``), atomic writes, locks and the freshness rule of
long-lived memos (``fsutil``), YAML loading with line numbers (``yamlio``), changed ranges and line hashes
(``diffing``), the ``orch doctor`` check contract (``findings``), the CLI's output sink (``output``), the hard-coded
governance paths (``governance``) and orchestrator's own Python inside a workspace (``own_python``).

May import: the standard library only (and ``orchestrator._version``); every module here is cheap to import and
safe on the hook's hot path.
"""
