"""``approval.allow_commands``: shell commands that never ask a person (``"pytest:*"``, ``"make test"``).

The matcher the approval pre-hook (:mod:`orchestrator.pre.approval`) consults, and the validator the policy schema
(:mod:`orchestrator.config.schema`) runs on each entry: both split words with the shell analyzer (one parser for the
project), imported only when an entry or command is actually matched. Documented in docs/configuration.md.
"""

from __future__ import annotations


def allowlisted(command: str | None, entries: list[str] | tuple[str, ...]) -> str | None:
    """The ``approval.allow_commands`` entry that ``command`` matches, or None.

    Matching (like Claude Code's ``Bash(pytest:*)``, but on words, not characters): the command must be ONE simple
    command of literal words — no ``;`` ``&&`` ``|`` redirections, substitutions, variables, globs or leading
    ``VAR=value`` — split like the shell splits it. ``"X:*"`` matches when the command's words start with the words
    of ``X`` (``pytest:*`` matches ``pytest``, ``pytest -x tests/``, not ``pytest-foo``); ``"X"`` matches when the
    words are exactly those of ``X``.
    """
    if not command or not entries:
        return None
    words = _literal_words(command)
    if words is None:
        return None
    for entry in entries:
        prefix = entry.endswith(":*")
        want = entry_words(entry[:-2] if prefix else entry)
        if want and (words[:len(want)] == want if prefix else words == want):
            return entry
    return None


#: characters that make a command line more than one simple command of literal words (outside single quotes)
_SHELL_META = frozenset(";&|<>()$`*?[]{}~!#\\\n\"")


def _literal_words(command: str) -> tuple[str, ...] | None:
    """The words of ``command`` if it is one simple command of literal words, else None.

    The documented character rule (docs/configuration.md) first, then the shell analyzer's words: one parser
    for the project (``ShellAnalysis.argv`` is None unless the line is a single simple command of literal words).
    """
    import re

    # single-quoted text is literal to the shell (`pytest -k 'a or b'`); anything else must hold no metacharacter
    if any(c in _SHELL_META for c in re.sub(r"'[^']*'", "", command)):
        return None
    from orchestrator.shell import analyze

    return analyze(command).argv


def entry_words(entry: str) -> tuple[str, ...] | None:
    """The words of an ``allow_commands`` entry (without its ``:*``), split by the shell analyzer like a command;
    None when the entry is not one simple command of literal words (it could never match)."""
    from orchestrator.shell import analyze

    return analyze(entry).argv if entry.strip() else None


def entry_error(entry: str) -> str | None:
    """Why an ``allow_commands`` entry is invalid (it could never match), or None when it is valid."""
    words = entry[:-2] if entry.endswith(":*") else entry
    if not words.strip():
        return f"allow_commands entry {entry!r} names no command"
    if entry_words(words) is None:
        # split by the shell analyzer, like the commands it is matched against
        return f"allow_commands entry {entry!r} is not one simple command of literal words (it could never match)"
    return None


__all__ = ["allowlisted", "entry_error", "entry_words"]
