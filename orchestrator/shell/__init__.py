"""Static analysis of a Bash command line: is it read-only, which paths does it write or delete?

The analyzer parses the command with tree-sitter-bash (a real parser, not regexes) and walks every simple
command it will execute: list members (``;`` ``&&`` ``||``), pipeline stages, subshells, ``$(...)`` and
backticks (also inside double quotes and unquoted heredocs), process substitutions, ``if``/``for``/``while``
bodies and function bodies. For each simple command it strips wrappers (``sudo``, ``env``, ``timeout``,
``xargs``...), recurses into code strings (``bash -c``, ``eval``, ``find -exec``), and looks the program up
in per-program rules. Anything it cannot vouch for is ``unknown`` -- the pipeline asks, never allows.

Public API (``__all__``; the package map is in docs/architecture.md): :func:`analyze`, :class:`ShellAnalysis` (its ``entries`` are
:class:`ShellEntry` records) and :data:`RISKS`.

``cd`` handling (documented choice): a literal ``cd DIR`` (or ``pushd DIR``) earlier in the same list changes
the directory used for later *relative* targets, so ``cd sub && rm x`` reports ``sub/x``. A ``cd`` whose
target is not literal (``cd "$D"``, ``cd -``, bare ``cd``, ``popd``) makes later relative targets
unresolved (``unresolved=True``) and they are reported as written. A ``cd`` inside ``( ... )`` does not leak
out of the subshell.

Layout (docs/architecture.md), lowest first: :mod:`.parse` (tree-sitter, ASCII shadow), :mod:`.words` (quote
removal, brace expansion, option splitting), :mod:`.programs` (shared program and subcommand tables),
:mod:`.analysis` (the result), :mod:`.run` (what a rule sees), :mod:`.rules` (one table per program family),
:mod:`.dispatch` (a simple command to its rule), :mod:`.walker` (nodes that execute, redirections, heredocs),
:mod:`.api` (:func:`analyze`). A module imports only modules before it, also inside functions: rules hand inner
code back through the walker and the accumulator they are given (``run._Run.sub/code/isolated/verdict``), not by
importing the walker, dispatcher or api (tests/test_import_graph.py). The package imports only the standard
library at import time; tree-sitter is imported on first use, and :mod:`.rules.git_writes` and :mod:`.braces`
only when a command needs them.

May import: ``core`` and ``secrets`` (the secret-file patterns its rules check); inside, modules import only
downwards (see docs/architecture.md).
"""
from __future__ import annotations

from orchestrator.shell.analysis import RISKS, ShellAnalysis, ShellEntry
from orchestrator.shell.api import analyze

__all__ = ["RISKS", "ShellAnalysis", "ShellEntry", "analyze"]
