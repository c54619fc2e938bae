"""The governance files and what they say: the workspace, intents, policy, ``.intentignore``.

Owns finding the workspace root and its ``.orchestration/`` paths (``workspace``), the pydantic schema of the
governance files (``schema``: imported only when a file changed), loading and compiling ``active_intents.yaml``
(``intents``) and ``policy.yaml`` (``policy``), the compiled-config cache (``confcache``), the
``approval.allow_commands`` matcher (``allowlist``) and the compiled ``.intentignore`` (``intentignore``).

May import: ``core``, ``state``, ``vcs``, ``secrets``, ``shell`` (the allow-list matcher judges commands) and
``sandbox`` (the schema validates the sandbox's own settings with its parsers).
"""
