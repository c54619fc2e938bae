"""Git, read and run the way orchestrator needs it.

Owns the one wrapper that runs the ``git`` program (``cli``: never on the hook path), the ``core.hooksPath``
directories inside a workspace (``hooks``), the revision a record names (``revision``: ``HEAD`` read with the
standard library) and the worktrees of a repository with their shared run directory (``worktrees``).

May import: ``core`` and ``state``.
"""
