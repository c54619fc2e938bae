"""Python mutation classification: normalise both module ASTs, then compare them (see docs/ledger.md §3).

Normalisations, applied to both sides in this order (each one is a documented *decision* about what a reviewer
calls a refactor — behaviour kept):

1. **docstrings** are dropped (documentation, like comments and formatting, which ``ast`` already drops);
2. **type hints** are dropped: parameter and return annotations, the annotation of ``x: T = v``, bare
   ``x: T`` outside class bodies, ``if TYPE_CHECKING:`` blocks, ``from __future__ import annotations`` and imports
   from ``typing`` / ``typing_extensions`` / ``collections.abc`` that nothing uses any more. Bare ``x: T`` *in a
   class body* is kept with its annotation: it declares a dataclass / NamedTuple / pydantic field, whose type can be
   behaviour;
3. **imports**: ``import a, b`` is split, ``from m import b, a`` sorted, and each run of consecutive module-level
   imports sorted — import reordering is a refactor; **equivalent spellings**: ``if (x := e):`` is ``x = e`` then
   ``if x:``, and ``'a{}'.format(v)`` is ``f'a{v}'`` (positional fields, conversions, literal format specs);
4. **module constants**: a module-level ``NAME = <literal>`` bound once is inlined into its uses and dropped *if the
   module uses it* (extract / inline constant = refactor, a changed value = evolution); an unused one is kept, so
   ``DEBUG = False`` -> ``True`` in a settings module is evolution;
5. **extract / inline function**: a plain function or method (no decorators, defaults, ``*args``, generators) that
   the module calls exactly once, positionally, and names nowhere else, is inlined at its call site (statement call,
   ``return f(..)``, ``x = f(..)``, or any expression when its body is one ``return``);
6. **extract / inline variable**: a function local assigned once by ``name = expr`` and read exactly once, in the
   next statement, where that read is evaluated unconditionally (not in a loop, branch body, lambda, comprehension,
   or right operand of ``and``/``or``), is inlined; a *pure* value (no call, await, yield or walrus) may also be
   read inside a loop, branch or comprehension, provided that statement does not rebind its inputs (hoisting a
   computation out of a loop is a refactor);
7. **consistent renames**, scope-aware: every binding site and use of a name is renamed to a canonical label —
   module names ``M<k>``, function locals and parameters ``F<depth>_<k>`` (per function, so ``i`` in two functions
   are two names), class-body names and attributes ``A<k>``. An attribute is renamed only if the module defines it
   (class body, or a store on ``self`` / ``cls`` / a module class) *and* it is read on ``self``, ``cls``, a module
   class or an instance just created from one; any other ``obj.attr`` keeps its spelling (it may be defined
   elsewhere). A keyword argument is renamed only when the callee is a function / class / method of this module with
   that parameter (it becomes the parameter's position); ``open(p, mode=mode)`` -> ``open(p, m=m)`` keeps ``mode`` vs
   ``m`` and is evolution. Builtins and imported attributes are never renamed.

Equal normalised trees -> refactor. Known limits: callers in *other* files (a renamed public function or parameter,
an inlined public helper) are not seen; evaluation order inside one statement after inlining a variable is ignored.
"""

from __future__ import annotations

import ast

from orchestrator.classify.python.inline import inline_constants, inline_functions, inline_variables
from orchestrator.classify.python.nodes import strip_positions, tree_key
from orchestrator.classify.python.notation import (normalise_expressions, normalise_imports, strip_docstrings, strip_type_hints)
from orchestrator.classify.python.renames import Canon

__all__ = ["normalise", "tree_key", "strip_positions"]


def normalise(tree: ast.Module, fixed: frozenset[str] = frozenset()) -> dict[str, list[str]]:
    """Apply every normalisation in place; returns notes per kind (names only, for the evidence)."""
    notes: dict[str, list[str]] = {}
    strip_positions(tree)
    if strip_docstrings(tree):
        notes["docstrings"] = []
    if strip_type_hints(tree):
        notes["type hints"] = []
    if normalise_imports(tree):
        notes["imports"] = []
    if normalise_expressions(tree):
        notes["expressions"] = []
    consts = inline_constants(tree, fixed)
    if consts:
        notes["constants"] = consts
    funcs = inline_functions(tree, fixed)
    if funcs:
        notes["functions"] = funcs
    vars_ = inline_variables(tree)
    if vars_:
        notes["variables"] = vars_
    canon = Canon(tree, fixed)
    canon.run()
    notes["labels"] = canon.renamed  # type: ignore[assignment]
    return notes
