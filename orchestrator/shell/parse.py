"""The tree-sitter-bash parser (lazy, one per process, behind a lock) and the text of parsed nodes.

tree-sitter is imported on first use, not at import time. The tree is parsed from an ASCII shadow of the
source (see :func:`orchestrator.shell.walker._analyze_into`); :func:`_t` reads every node's text from the
original bytes of the source being walked, kept per thread in ``_TLS.src``.
"""
from __future__ import annotations

import re


TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only (strings at runtime): keep `typing` off the import path
    from typing import Any


class _LazyRe:
    """A regex compiled on first use: keeps module import cheap (the hook process imports us every call)."""

    __slots__ = ("_args", "_rx")

    def __init__(self, *args: Any) -> None:
        self._args = args
        self._rx = None

    def __getattr__(self, name: str) -> Any:
        if self._rx is None:
            object.__setattr__(self, "_rx", re.compile(*self._args))
        return getattr(self._rx, name)
_MAX_DEPTH = 8          # nesting of bash -c / eval / find -exec recursion
_MAX_LEN = 100_000      # longer inputs are refused (unknown) rather than parsed


# ----------------------------------------------------------------------------------------------------------
# parser (lazy, module-level cache)

_PARSER: Any = None
_LOCK: Any = None  # a tree-sitter Parser is not safe to share between threads (MCP server, TUI)
_TLS: Any = None   # per-thread stack top: the original bytes of the source being walked (see _t)


def _parser() -> Any:
    global _PARSER, _LOCK, _TLS
    if _PARSER is None:
        import threading

        import tree_sitter_bash
        from tree_sitter import Language, Parser

        _LOCK = threading.Lock()
        _TLS = threading.local()
        _PARSER = Parser(Language(tree_sitter_bash.language()))
    return _PARSER


def _t(node: Any) -> str:
    """The original text of a node (the tree was parsed from the ASCII shadow of the same length)."""
    return _TLS.src[node.start_byte:node.end_byte].decode("utf-8", "replace")
