"""``orch serve``: the resident hook daemon, one per worktree.

Owns the server (``server``): it keeps the compiled state warm and answers the stdlib-only hook client
(``orchestrator/hookclient.py``, which stays at the top level because installed hook commands run it by path).

May import: everything up to ``adapters`` (it answers hook events with the agents' adapters).
"""
