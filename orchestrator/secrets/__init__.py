"""Secret files: which paths hold secrets, where they are, and which ones git tracks.

Owns the secret-file patterns and their matcher (``patterns``; the analyzer's rules for reading or sending them
are ``shell/rules/secrets.py``), the scan that finds a tree's secret files for the sandbox's deny list
(``scan``) and the secret files the repository tracks in its index and ``HEAD`` (``tracked``).

May import: ``core``, ``state``, ``vcs``.
"""
