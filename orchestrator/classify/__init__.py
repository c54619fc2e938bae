"""Mutation classification: is a change a refactor (``AST_REFACTOR``) or new behaviour (``INTENT_EVOLUTION``)?

Owns the classifier (``mutation``) and its language rules: Python through the ``ast`` module (``python/``),
JavaScript/TypeScript through tree-sitter (``js``), parsed YAML/JSON/TOML (``data``).

May import: ``core`` only. Loaded by the post-hook and the ledger, never by a pre-hook.
"""
