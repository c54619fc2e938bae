"""AST helpers shared by the Python normalisations: positions, structural keys, a function's own nodes."""

from __future__ import annotations

import ast
import io
import pickle
from collections.abc import Iterator

#: function definitions (a lambda is not one: it has no name and no statements)
FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)
#: the statement-list fields of a compound statement
BLOCK_FIELDS = ("body", "orelse", "finalbody")
_POS = ("lineno", "col_offset", "end_lineno", "end_col_offset")


def strip_positions(tree: ast.AST) -> None:
    """Remove position attributes in place (so equal code at other lines compares equal)."""
    for node in ast.walk(tree):
        d = node.__dict__
        if "lineno" in d:
            for k in _POS:
                d.pop(k, None)


def tree_key(tree: ast.AST) -> bytes:
    """Structural key of a position-free tree: pickled without memo (equal trees -> equal bytes, at C speed)."""
    buf = io.BytesIO()
    p = pickle.Pickler(buf, 4)
    p.fast = True
    p.dump(tree)
    return buf.getvalue()


def own_nodes(fn: ast.AST) -> Iterator[ast.AST]:
    """Nodes of ``fn``'s body that are not inside a nested function/class/lambda."""
    stack = list(ast.iter_child_nodes(fn))
    while stack:
        n = stack.pop()
        yield n
        if not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            stack.extend(ast.iter_child_nodes(n))


__all__ = ["BLOCK_FIELDS", "FUNCS", "own_nodes", "strip_positions", "tree_key"]
