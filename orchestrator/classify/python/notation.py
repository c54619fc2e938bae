"""Rules 1-3 of :mod:`orchestrator.classify.python`: what only changes how the code is written down.

Docstrings, type hints, import order and grouping, and equivalent spellings of one computation (``:=`` in a
condition, ``str.format`` vs an f-string). Each function works in place and says whether it changed anything.
"""

from __future__ import annotations

import ast
import copy
from typing import cast

from orchestrator.classify.python.nodes import BLOCK_FIELDS, FUNCS, tree_key

_TYPING_MODULES = frozenset({"typing", "typing_extensions", "collections.abc"})


# --------------------------------------------------------------------------------------------- 1. docstrings

def strip_docstrings(tree: ast.AST) -> bool:
    found = False
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                    and isinstance(body[0].value.value, str):
                node.body = body[1:] or [ast.Pass()]
                found = True
    return found


# -------------------------------------------------------------------------------------------- 2. type hints

def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or \
        (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def strip_type_hints(tree: ast.Module) -> bool:
    changed = False

    def body_of(stmts: list[ast.stmt], in_class: bool) -> list[ast.stmt]:
        nonlocal changed
        out: list[ast.stmt] = []
        for st in stmts:
            if isinstance(st, ast.If) and _is_type_checking(st.test):
                changed = True
                if st.orelse:
                    out.extend(body_of(st.orelse, in_class))
                continue
            if isinstance(st, ast.ImportFrom) and st.module == "__future__":
                names = [a for a in st.names if a.name != "annotations"]
                if len(names) != len(st.names):
                    changed = True
                    if not names:
                        continue
                    st.names = names
            if isinstance(st, ast.AnnAssign):
                if st.value is not None and st.simple:
                    changed = True
                    st = ast.Assign(targets=[st.target], value=st.value, type_comment=None)
                elif st.value is None and not in_class:
                    changed = True
                    continue
            out.append(st)
        return out

    for node in ast.walk(tree):
        if isinstance(node, FUNCS):
            if node.returns is not None:
                node.returns, changed = None, True
        elif isinstance(node, ast.arg) and node.annotation is not None:
            node.annotation, changed = None, True
        for field in ("body", "orelse", "finalbody"):
            stmts = getattr(node, field, None)
            if isinstance(stmts, list) and stmts and isinstance(stmts[0], ast.stmt):
                new = body_of(stmts, isinstance(node, ast.ClassDef) and field == "body")
                setattr(node, field, new or [ast.Pass()])
    if changed:  # typing imports that only served the hints
        used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} | \
               {n.value.id for n in ast.walk(tree) if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)}
        keep: list[ast.stmt] = []
        for st in tree.body:
            if isinstance(st, ast.ImportFrom) and st.module in _TYPING_MODULES:
                st.names = [a for a in st.names if (a.asname or a.name) in used]
                if not st.names:
                    continue
            elif isinstance(st, ast.Import):
                st.names = [a for a in st.names
                            if a.name not in _TYPING_MODULES or (a.asname or a.name.split(".")[0]) in used]
                if not st.names:
                    continue
            keep.append(st)
        tree.body = keep or [ast.Pass()]
    return changed


# ----------------------------------------------------------------------------------------------- 3. imports

def normalise_imports(tree: ast.Module) -> bool:
    before = tree_key(tree)
    out: list[ast.stmt] = []
    run: list[ast.stmt] = []

    def flush() -> None:
        run.sort(key=tree_key)
        out.extend(run)
        run.clear()

    for st in tree.body:
        if isinstance(st, ast.Import):
            for a in st.names:
                run.append(ast.Import(names=[a]))
        elif isinstance(st, ast.ImportFrom):
            st.names = sorted(st.names, key=lambda a: (a.name, a.asname or ""))
            run.append(st)
        else:
            flush()
            out.append(st)
    flush()
    tree.body = out
    return tree_key(tree) != before


# ----------------------------------------------------------------------------------- 3b. equivalent spellings

def normalise_expressions(tree: ast.Module) -> bool:
    """Spellings of the same computation: ``if (x := e):`` is ``x = e`` + ``if x:``; ``'a{}'.format(v)`` is
    ``f'a{v}'`` (positional, automatic or numbered fields; conversions and literal format specs)."""
    changed = False
    for node in list(ast.walk(tree)):
        for field in BLOCK_FIELDS:
            stmts = getattr(node, field, None)
            if not isinstance(stmts, list):
                continue
            i = 0
            while i < len(stmts):
                st = stmts[i]
                if isinstance(st, ast.If) and isinstance(st.test, ast.NamedExpr) \
                        and isinstance(st.test.target, ast.Name):
                    name = st.test.target.id
                    stmts[i:i + 1] = [ast.Assign(targets=[ast.Name(id=name, ctx=ast.Store())], value=st.test.value,
                                                 type_comment=None), st]
                    st.test = ast.Name(id=name, ctx=ast.Load())
                    changed = True
                    i += 1
                i += 1

    class _Fmt(ast.NodeTransformer):
        def visit_Call(self, node: ast.Call) -> ast.AST:
            nonlocal changed
            self.generic_visit(node)
            f = node.func
            if isinstance(f, ast.Attribute) and f.attr == "format" and isinstance(f.value, ast.Constant) \
                    and isinstance(f.value.value, str) and not node.keywords \
                    and not any(isinstance(a, ast.Starred) for a in node.args):
                js = _format_to_fstring(f.value.value, node.args)
                if js is not None:
                    changed = True
                    return js
            return node

    _Fmt().visit(tree)
    return changed


def _format_to_fstring(fmt: str, args: list[ast.expr]) -> ast.JoinedStr | None:
    import string
    try:
        parsed = list(string.Formatter().parse(fmt))
    except ValueError:
        return None
    values: list[ast.expr] = []
    auto = 0
    used = 0
    for literal, field, spec, conv in parsed:
        if literal:
            values.append(ast.Constant(value=literal, kind=None))
        if field is None:
            continue
        if field == "":
            idx = auto
            auto += 1
        elif field.isdigit():
            idx = int(field)
        else:
            return None  # attribute / item / keyword fields: leave the call alone
        if idx >= len(args) or (spec and "{" in spec):
            return None
        used = max(used, idx + 1)
        values.append(ast.FormattedValue(value=copy.deepcopy(args[idx]), conversion=ord(conv) if conv else -1,
                                         format_spec=ast.JoinedStr(values=[ast.Constant(value=spec, kind=None)]) if spec
                                         else None))
    if used != len(args):
        return None  # an unused argument is still evaluated by .format
    merged: list[ast.expr] = []
    for v in values:  # adjacent literals, as the parser of an f-string produces them
        if merged and isinstance(v, ast.Constant) and isinstance(merged[-1], ast.Constant):
            # both are the format string's literal pieces, so str
            merged[-1] = ast.Constant(value=cast(str, merged[-1].value) + cast(str, v.value), kind=None)
        else:
            merged.append(v)
    return ast.JoinedStr(values=merged)


__all__ = ["normalise_expressions", "normalise_imports", "strip_docstrings", "strip_type_hints"]
