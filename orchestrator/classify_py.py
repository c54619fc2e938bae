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
import copy
import io
import pickle
from collections import Counter
from typing import cast

__all__ = ["normalise", "tree_key", "strip_positions"]

_TYPING_MODULES = frozenset({"typing", "typing_extensions", "collections.abc"})
_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp,
           ast.GeneratorExp)
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


def normalise(tree: ast.Module, fixed: frozenset[str] = frozenset()) -> dict[str, list[str]]:
    """Apply every normalisation in place; returns notes per kind (names only, for the evidence)."""
    notes: dict[str, list[str]] = {}
    strip_positions(tree)
    if _strip_docstrings(tree):
        notes["docstrings"] = []
    if _strip_type_hints(tree):
        notes["type hints"] = []
    if _normalise_imports(tree):
        notes["imports"] = []
    if _normalise_expressions(tree):
        notes["expressions"] = []
    consts = _inline_constants(tree, fixed)
    if consts:
        notes["constants"] = consts
    funcs = _inline_functions(tree, fixed)
    if funcs:
        notes["functions"] = funcs
    vars_ = _inline_variables(tree)
    if vars_:
        notes["variables"] = vars_
    canon = _Canon(tree, fixed)
    canon.run()
    notes["labels"] = canon.renamed  # type: ignore[assignment]
    return notes


# --------------------------------------------------------------------------------------------- 1. docstrings

def _strip_docstrings(tree: ast.AST) -> bool:
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


def _strip_type_hints(tree: ast.Module) -> bool:
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
        if isinstance(node, _FUNCS):
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

def _normalise_imports(tree: ast.Module) -> bool:
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

def _normalise_expressions(tree: ast.Module) -> bool:
    """Spellings of the same computation: ``if (x := e):`` is ``x = e`` + ``if x:``; ``'a{}'.format(v)`` is
    ``f'a{v}'`` (positional, automatic or numbered fields; conversions and literal format specs)."""
    changed = False
    for node in list(ast.walk(tree)):
        for field in _BLOCK_FIELDS:
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


# --------------------------------------------------------------------------------------------- 4. constants

def _binding_counts(tree: ast.AST) -> Counter[str]:
    counts: Counter[str] = Counter()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            counts[node.id] += 1
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            for n in node.names:
                counts[n] += 2  # rebindable from a function: never a constant
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            counts[node.name] += 1
        elif isinstance(node, ast.arg):
            counts[node.arg] += 1
        elif isinstance(node, ast.alias):
            counts[node.asname or node.name.split(".")[0]] += 1
    return counts


def _is_literal(node: ast.expr | None) -> bool:
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        return isinstance(node.operand, ast.Constant)
    if isinstance(node, ast.Tuple):
        return all(_is_literal(e) for e in node.elts)
    return False


def _inline_constants(tree: ast.Module, fixed: frozenset[str]) -> list[str]:
    counts = _binding_counts(tree)
    loads = Counter(n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load))
    consts: dict[str, ast.expr] = {}
    keep: list[ast.stmt] = []
    for st in tree.body:
        if isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name):
            name = st.targets[0].id
            if name not in fixed and counts[name] == 1 and loads[name] and _is_literal(st.value) \
                    and name != "__all__":
                consts[name] = st.value
                continue
        keep.append(st)
    if not consts:
        return []

    class _Inline(ast.NodeTransformer):
        def visit_Name(self, node: ast.Name) -> ast.AST:
            if isinstance(node.ctx, ast.Load) and node.id in consts:
                return copy.deepcopy(consts[node.id])
            return node

    tree.body = keep or [ast.Pass()]
    _Inline().visit(tree)
    return sorted(consts)


# --------------------------------------------------------------------------------------------- 5. functions

def _simple_params(fn: ast.AST) -> list[str] | None:
    if not isinstance(fn, ast.FunctionDef) or fn.decorator_list:
        return None
    a = fn.args
    if a.vararg or a.kwarg or a.kwonlyargs or a.defaults or a.kw_defaults:
        return None
    return [x.arg for x in a.posonlyargs + a.args]


def _own_nodes(fn: ast.AST):
    """Nodes of ``fn``'s body that are not inside a nested function/class/lambda."""
    stack = list(ast.iter_child_nodes(fn))
    while stack:
        n = stack.pop()
        yield n
        if not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            stack.extend(ast.iter_child_nodes(n))


def _parents(tree: ast.AST) -> dict[int, tuple[ast.AST, str, int | None]]:
    """id(child) -> (parent, field, index in list field or None)."""
    out: dict[int, tuple[ast.AST, str, int | None]] = {}
    for node in ast.walk(tree):
        for field, value in ast.iter_fields(node):
            if isinstance(value, list):
                for i, v in enumerate(value):
                    if isinstance(v, ast.AST):
                        out[id(v)] = (node, field, i)
            elif isinstance(value, ast.AST):
                out[id(value)] = (node, field, None)
    return out


class _Subst(ast.NodeTransformer):
    def __init__(self, mapping: dict[str, ast.expr]) -> None:
        self.mapping = mapping

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if node.id in self.mapping:
            rep = copy.deepcopy(self.mapping[node.id])
            if isinstance(rep, ast.Name):
                return ast.Name(id=rep.id, ctx=node.ctx)
            return rep
        return node


def _all_strings(tree: ast.Module) -> set[str]:
    out: set[str] = set()
    for st in tree.body:
        targets = st.targets if isinstance(st, ast.Assign) else [st.target] if isinstance(st, ast.AugAssign) else []
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
            out.update(n.value for n in ast.walk(st.value)  # type: ignore[attr-defined]
                       if isinstance(n, ast.Constant) and isinstance(n.value, str))
    return out


def _inline_functions(tree: ast.Module, fixed: frozenset[str]) -> list[str]:
    done: list[str] = []
    for _ in range(8):  # each pass inlines one helper (the tree changes under us); bounded
        name = _inline_one_function(tree, fixed)
        if name is None:
            break
        done.append(name)
    return done


def _index(tree: ast.AST) -> tuple[dict[int, tuple[ast.AST, str, int | None]], Counter[str], Counter[str],
                                    dict[str, list[ast.Call]], dict[str, list[ast.Call]]]:
    """One walk: parents, Name / attribute use counts, calls by plain name and by ``x.attr`` name."""
    parents: dict[int, tuple[ast.AST, str, int | None]] = {}
    names: Counter[str] = Counter()
    attrs: Counter[str] = Counter()
    by_name: dict[str, list[ast.Call]] = {}
    by_attr: dict[str, list[ast.Call]] = {}
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        t = type(node)
        if t is ast.Name:
            names[node.id] += 1  # type: ignore[attr-defined]
        elif t is ast.Attribute:
            attrs[node.attr] += 1  # type: ignore[attr-defined]
        elif t is ast.Call:
            f = node.func  # type: ignore[attr-defined]
            if type(f) is ast.Name:
                by_name.setdefault(f.id, []).append(node)  # type: ignore[arg-type]
            elif type(f) is ast.Attribute:
                by_attr.setdefault(f.attr, []).append(node)  # type: ignore[arg-type]
        for field in node._fields:
            value = getattr(node, field, None)
            if type(value) is list:
                for i, v in enumerate(value):
                    if isinstance(v, ast.AST):
                        parents[id(v)] = (node, field, i)
                        stack.append(v)
            elif isinstance(value, ast.AST):
                parents[id(value)] = (node, field, None)
                stack.append(value)
    return parents, names, attrs, by_name, by_attr


def _inline_one_function(tree: ast.Module, fixed: frozenset[str]) -> str | None:
    exported = _all_strings(tree)
    # candidates: module-level functions and methods
    cands: list[tuple[ast.FunctionDef, ast.Module | ast.ClassDef, bool]] = []
    for st in tree.body:
        if isinstance(st, ast.FunctionDef):
            cands.append((st, tree, False))
        elif isinstance(st, ast.ClassDef):
            cands.extend((m, st, True) for m in st.body if isinstance(m, ast.FunctionDef))
    if not cands:
        return None
    parents, name_uses, attr_uses, calls_by_name, calls_by_attr = _index(tree)
    def_names = Counter(fn.name for fn, _, _ in cands)
    for fn, owner, is_method in cands:
        if is_method:
            if attr_uses[fn.name] != 1 or name_uses[fn.name]:
                continue
        elif name_uses[fn.name] != 1 or attr_uses[fn.name]:
            continue
        params = _simple_params(fn)
        if params is None or fn.name in fixed or fn.name in exported or def_names[fn.name] != 1:
            continue
        if fn.name.startswith("__") or any(isinstance(n, (ast.Yield, ast.YieldFrom, ast.Global, ast.Nonlocal,
                                                          ast.Await)) for n in _own_nodes(fn)):
            continue
        if is_method:
            if not params or params[0] not in ("self", "cls"):
                continue
            call = next((n for n in calls_by_attr.get(fn.name, ()) if isinstance(n.func, ast.Attribute)
                         and isinstance(n.func.value, ast.Name) and n.func.value.id == params[0]
                         and _inside(parents, n, owner)), None)
            args_params = params[1:]
        else:
            call = next(iter(calls_by_name.get(fn.name, ())), None)
            args_params = params
        if call is None or call.keywords or len(call.args) != len(args_params) or \
                any(isinstance(a, ast.Starred) for a in call.args):
            continue
        if _inside(parents, call, fn):
            continue  # recursive
        returns = [n for n in _own_nodes(fn) if isinstance(n, ast.Return)]
        final_ret = fn.body[-1] if fn.body and isinstance(fn.body[-1], ast.Return) else None
        if returns and (len(returns) != 1 or returns[0] is not final_ret):
            continue
        stored = {n.id for n in _own_nodes(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        mapping: dict[str, ast.expr] = {}
        for p, a in zip(args_params, call.args):
            if p in stored and not isinstance(a, ast.Name):
                mapping = {}
                break
            mapping[p] = a
        else:
            if is_method:
                mapping[params[0]] = ast.Name(id=params[0], ctx=ast.Load())
        if len(mapping) != len(params):
            continue
        # the helper's own locals must not clash with the caller's names
        caller = _enclosing_function(parents, call)
        helper_locals = stored - set(params)
        parent0 = parents[id(call)][0]
        same = set()  # `total = helper(..)` whose helper ends `return total`: the one name both may share
        if isinstance(parent0, ast.Assign) and len(parent0.targets) == 1 and isinstance(parent0.targets[0], ast.Name) \
                and final_ret is not None and isinstance(final_ret.value, ast.Name) \
                and final_ret.value.id == parent0.targets[0].id:
            same = {final_ret.value.id}
        if caller is not None and (helper_locals - same) & \
                {n.id for n in _own_nodes(caller) if isinstance(n, ast.Name)}:
            continue
        body = [_Subst(mapping).visit(copy.deepcopy(s)) for s in fn.body]
        parent, field, idx = parents[id(call)]
        stmt_parent = parents.get(id(parent))
        new_stmts: list[ast.stmt] | None = None
        if isinstance(parent, ast.Expr) and field == "value" and stmt_parent and stmt_parent[2] is not None:
            new_stmts = body[:-1] + [ast.Expr(value=body[-1].value)] if final_ret is not None and \
                body[-1].value is not None else (body[:-1] if final_ret is not None else body)
            target_owner, tfield, tidx = stmt_parent
        elif isinstance(parent, ast.Return) and field == "value" and stmt_parent and stmt_parent[2] is not None:
            if final_ret is None:
                continue
            new_stmts = body
            target_owner, tfield, tidx = stmt_parent
        elif isinstance(parent, ast.Assign) and field == "value" and stmt_parent and stmt_parent[2] is not None:
            if final_ret is None or body[-1].value is None:
                continue
            new_stmts = body[:-1]
            if not (same and isinstance(body[-1].value, ast.Name)):
                new_stmts.append(ast.Assign(targets=parent.targets, value=body[-1].value, type_comment=None))
            target_owner, tfield, tidx = stmt_parent
        elif len(body) == 1 and final_ret is not None and body[0].value is not None:
            if idx is None:
                setattr(parent, field, body[0].value)
            else:
                getattr(parent, field)[idx] = body[0].value
        else:
            continue
        if new_stmts is not None:
            assert tidx is not None  # each branch that sets new_stmts checked stmt_parent[2]
            lst = getattr(target_owner, tfield)
            lst[tidx:tidx + 1] = new_stmts or [ast.Pass()]
        owner_body = owner.body
        owner_body.remove(fn)
        if not owner_body:
            owner.body = [ast.Pass()]
        return fn.name
    return None


def _inside(parents: dict, node: ast.AST, anc: ast.AST) -> bool:
    cur = parents.get(id(node))
    while cur is not None:
        if cur[0] is anc:
            return True
        cur = parents.get(id(cur[0]))
    return False


def _enclosing_function(parents: dict, node: ast.AST) -> ast.AST | None:
    cur = parents.get(id(node))
    while cur is not None:
        if isinstance(cur[0], _FUNCS):
            return cur[0]
        cur = parents.get(id(cur[0]))
    return None


# --------------------------------------------------------------------------------------------- 6. variables

_BLOCK_FIELDS = ("body", "orelse", "finalbody")


def _inline_variables(tree: ast.Module) -> list[str]:
    done: list[str] = []
    for fn in [n for n in ast.walk(tree) if isinstance(n, _FUNCS)]:
        params = {a.arg for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs}
        params |= {a.arg for a in (fn.args.vararg, fn.args.kwarg) if a is not None}
        for _ in range(50):
            name = _inline_one_variable(fn, params)
            if name is None:
                break
            done.append(name)
    return done


def _inline_one_variable(fn: ast.AST, params: set[str]) -> str | None:
    every = list(ast.walk(fn))
    stores = Counter(n.id for n in every if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)))
    loads = Counter(n.id for n in every if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load))
    declared = {x for n in every if isinstance(n, (ast.Global, ast.Nonlocal)) for x in n.names}
    for block_owner in [n for n in every if not isinstance(n, (ast.Lambda,))]:
        for field in _BLOCK_FIELDS:
            stmts = getattr(block_owner, field, None)
            if not isinstance(stmts, list):
                continue
            for i in range(len(stmts) - 1):
                st = stmts[i]
                if not (isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name)):
                    continue
                name = st.targets[0].id
                if stores[name] != 1 or loads[name] != 1 or name in params or name in declared:
                    continue
                pure = _pure(st.value)
                use = _unconditional_use(stmts[i + 1], name, pure)
                if use is None:
                    continue
                if pure:  # hoisted out of a loop/branch: its inputs must not change there
                    inputs = {n.id for n in ast.walk(st.value) if isinstance(n, ast.Name)}
                    if inputs & {n.id for n in ast.walk(stmts[i + 1])
                                 if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}:
                        continue
                parent, f, idx = use
                rep = st.value
                if idx is None:
                    setattr(parent, f, rep)
                else:
                    getattr(parent, f)[idx] = rep
                del stmts[i]
                return name
    return None


_PURE_NODES = (ast.Name, ast.Constant, ast.Attribute, ast.BinOp, ast.UnaryOp, ast.Compare, ast.BoolOp, ast.Tuple,
               ast.List, ast.Subscript, ast.Slice, ast.IfExp, ast.Load, ast.operator, ast.unaryop, ast.cmpop,
               ast.boolop, ast.JoinedStr, ast.FormattedValue)


def _pure(expr: ast.expr) -> bool:
    """No calls, awaits, yields or walrus: evaluating it once, many times or never is the same."""
    return all(isinstance(n, _PURE_NODES) for n in ast.walk(expr))


def _unconditional_use(stmt: ast.stmt, name: str, pure: bool = False) -> tuple[ast.AST, str, int | None] | None:
    """Where ``stmt`` reads ``name`` on a path evaluated exactly once whenever ``stmt`` runs, else None.

    A ``pure`` value may also be read inside loops, branches and comprehensions (evaluation count does not matter).
    """
    def walk(node: ast.AST) -> tuple[ast.AST, str, int | None] | None:
        for field, value in ast.iter_fields(node):
            if not pure and not _unconditional_field(node, field):
                continue
            items = value if isinstance(value, list) else [value]
            for i, v in enumerate(items):
                if not isinstance(v, ast.AST):
                    continue
                if isinstance(node, ast.BoolOp) and i > 0 and not pure:
                    continue
                if isinstance(v, ast.Name) and v.id == name and isinstance(v.ctx, ast.Load):
                    return node, field, (i if isinstance(value, list) else None)
                if isinstance(v, (ast.Lambda, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) or (
                        not pure and isinstance(v, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp))):
                    continue
                got = walk(v)
                if got is not None:
                    return got
        return None
    return walk(stmt)


def _unconditional_field(node: ast.AST, field: str) -> bool:
    if isinstance(node, (ast.If, ast.While)):
        return field == "test" and isinstance(node, ast.If)
    if isinstance(node, (ast.For, ast.AsyncFor)):
        return field == "iter"
    if isinstance(node, ast.IfExp):
        return field == "test"
    if isinstance(node, ast.Try):
        return False
    if isinstance(node, (ast.With, ast.AsyncWith)):
        return field == "items"
    return True


# ----------------------------------------------------------------------------------------------- 7. renames

class _Canon:
    """Scope-aware alpha-renaming of the whole module in place (see the module docstring, rule 7)."""

    def __init__(self, tree: ast.Module, fixed: frozenset[str]) -> None:
        self.tree = tree
        self.fixed = fixed
        self.module_labels: dict[str, str] = {}
        self.attr_labels: dict[str, str] = {}
        self.renamed: dict[str, str] = {}
        self.module_bound = _bound_in(tree)
        self.classes: dict[str, ast.ClassDef] = {st.name: st for st in tree.body if isinstance(st, ast.ClassDef)}
        self.functions: dict[str, ast.AST] = {st.name: st for st in tree.body if isinstance(st, _FUNCS)}
        self.methods: dict[str, list[ast.AST]] = {}
        self.attrs: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                self.attrs |= _bound_in(node)
                for m in node.body:
                    if isinstance(m, _FUNCS):
                        self.methods.setdefault(m.name, []).append(m)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) and self._own_receiver(node.value):
                self.attrs.add(node.attr)
        self.attrs -= fixed
        self.scope_locals: dict[int, set[str]] = {}
        self.scope_decl: dict[int, tuple[set[str], set[str]]] = {}
        self.class_bound: dict[int, set[str]] = {}
        # original parameter names of every function, before any renaming: keyword arguments map to positions
        self.orig_params: dict[int, dict[str, int]] = {}
        for node in ast.walk(tree):
            if isinstance(node, _FUNCS):
                a = node.args
                self.orig_params[id(node)] = {x.arg: i for i, x in enumerate(a.posonlyargs + a.args + a.kwonlyargs)}

    # -- analysis
    def _own_receiver(self, v: ast.expr) -> bool:
        if isinstance(v, ast.Name):
            return v.id in ("self", "cls") or v.id in self.classes
        return isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id in self.classes

    def _locals(self, fn: ast.AST) -> tuple[set[str], set[str], set[str]]:
        key = id(fn)
        if key not in self.scope_locals:
            loc = _bound_in(fn)
            glob: set[str] = set()
            nonl: set[str] = set()
            for n in _own_nodes(fn):
                if isinstance(n, ast.Global):
                    glob.update(n.names)
                elif isinstance(n, ast.Nonlocal):
                    nonl.update(n.names)
            self.scope_locals[key] = loc - glob - nonl
            self.scope_decl[key] = (glob, nonl)
        return self.scope_locals[key], *self.scope_decl[key]

    # -- labels
    def _module(self, name: str) -> str:
        if name in self.fixed or name not in self.module_bound:
            return name
        lab = self.module_labels.get(name)
        if lab is None:
            lab = self.module_labels[name] = f"M{len(self.module_labels)}"
            self.renamed[name] = lab
        return lab

    def _attr(self, name: str) -> str:
        if name not in self.attrs:
            return name
        lab = self.attr_labels.get(name)
        if lab is None:
            lab = self.attr_labels[name] = f"A{len(self.attr_labels)}"
            self.renamed.setdefault(name, lab)
        return lab

    def _resolve(self, name: str, scopes: list[tuple[ast.AST, dict[str, str], int]]) -> str:
        """Label of ``name`` read or bound in the innermost scope of ``scopes``."""
        for i in range(len(scopes) - 1, -1, -1):
            node, labels, depth = scopes[i]
            if isinstance(node, ast.Module):
                return self._module(name)
            if isinstance(node, ast.ClassDef):
                cb = self.class_bound.get(id(node))
                if cb is None:
                    cb = self.class_bound[id(node)] = _bound_in(node)
                if i == len(scopes) - 1 and name in cb:
                    return self._attr(name) if name in self.attrs else name
                continue  # class bodies are not enclosing scopes for functions
            loc, glob, nonl = self._locals(node)
            if name in glob:
                return self._module(name)
            if name in loc:
                lab = labels.get(name)
                if lab is None:
                    lab = labels[name] = f"F{depth}_{len(labels)}"
                return lab
        return self._module(name)

    # -- rewriting
    def run(self) -> list[str]:
        self._visit(self.tree, [(self.tree, {}, 0)])
        return [k for k in self.renamed]

    def _visit(self, node: ast.AST, scopes: list) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            for d in node.decorator_list:
                self._visit(d, scopes)
            if isinstance(node, ast.ClassDef):
                for b in node.bases:
                    self._visit(b, scopes)
                for k in node.keywords:
                    self._visit(k, scopes)
            else:
                self._visit_defaults(node.args, scopes)
                if node.returns is not None:
                    self._visit(node.returns, scopes)
            node.name = self._resolve(node.name, scopes)
            inner = scopes + [(node, {}, scopes[-1][2] + (0 if isinstance(node, ast.ClassDef) else 1))]
            if not isinstance(node, ast.ClassDef):
                self._visit_args(node.args, inner)
            for st in node.body:
                self._visit(st, inner)
            return
        if isinstance(node, ast.Lambda):
            self._visit_defaults(node.args, scopes)
            inner = scopes + [(node, {}, scopes[-1][2] + 1)]
            self._visit_args(node.args, inner)
            self._visit(node.body, inner)
            return
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            # the first iterable is evaluated in the enclosing scope
            self._visit(node.generators[0].iter, scopes)
            inner = scopes + [(node, {}, scopes[-1][2] + 1)]
            for i, g in enumerate(node.generators):
                self._visit(g.target, inner)
                if i:
                    self._visit(g.iter, inner)
                for c in g.ifs:
                    self._visit(c, inner)
            for f in ("elt", "key", "value"):
                v = getattr(node, f, None)
                if v is not None:
                    self._visit(v, inner)
            return
        if isinstance(node, ast.Name):
            node.id = self._resolve(node.id, scopes)
            return
        if isinstance(node, ast.alias):
            bound = node.asname or node.name.split(".")[0]
            if node.name != "*":
                node.asname = self._resolve(bound, scopes)
            return
        if isinstance(node, (ast.Global, ast.Nonlocal)):
            node.names = [self._module(n) if isinstance(node, ast.Global) else n for n in node.names]
            if isinstance(node, ast.Nonlocal):
                node.names = [self._resolve(n, scopes[:-1]) for n in node.names]
            return
        if isinstance(node, ast.ExceptHandler) and node.name:
            node.name = self._resolve(node.name, scopes)
        if isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
            node.name = self._resolve(node.name, scopes)
        if isinstance(node, ast.MatchMapping) and node.rest:
            node.rest = self._resolve(node.rest, scopes)
        if isinstance(node, ast.Attribute):
            own = self._own_receiver(node.value)  # decided on the original spelling, before renaming
            self._visit(node.value, scopes)
            if own:
                node.attr = self._attr(node.attr)
            return
        if isinstance(node, ast.Call):
            params = self._callee_params(node)
            self._visit(node.func, scopes)
            for a in node.args:
                self._visit(a, scopes)
            for k in node.keywords:
                if k.arg is not None and params is not None:
                    if k.arg in params:
                        k.arg = params[k.arg]
                self._visit(k.value, scopes)
            return
        for child in ast.iter_child_nodes(node):
            self._visit(child, scopes)

    def _visit_defaults(self, args: ast.arguments, scopes: list) -> None:
        for d in args.defaults + [d for d in args.kw_defaults if d is not None]:
            self._visit(d, scopes)
        for a in args.posonlyargs + args.args + args.kwonlyargs + [x for x in (args.vararg, args.kwarg) if x]:
            if a.annotation is not None:
                self._visit(a.annotation, scopes)

    def _visit_args(self, args: ast.arguments, scopes: list) -> None:
        allargs = args.posonlyargs + args.args + args.kwonlyargs + [x for x in (args.vararg, args.kwarg) if x]
        for a in allargs:
            a.arg = self._resolve(a.arg, scopes)

    def _callee_params(self, call: ast.Call) -> dict[str, str] | None:
        """{keyword: canonical} for a call of this module's function / class / method (original names), else None."""
        f = call.func
        target: ast.AST | None = None
        if isinstance(f, ast.Name):
            target = self.functions.get(f.id) or self.classes.get(f.id)
        elif isinstance(f, ast.Attribute) and self._own_receiver(f.value):
            ms = self.methods.get(f.attr) or []
            target = ms[0] if len(ms) == 1 else None
        if target is None:
            return None
        if isinstance(target, ast.ClassDef):
            init = next((m for m in target.body if isinstance(m, _FUNCS) and m.name == "__init__"), None)
            if init is None:  # dataclass-like: keywords name the class-body fields
                return {n: self._attr(n) for n in _bound_in(target)}
            target = init
        return {k: f"P{i}" for k, i in self.orig_params.get(id(target), {}).items()}


def _bound_in(scope: ast.AST) -> set[str]:
    """Names bound directly in ``scope`` (a Module, ClassDef or function-like), not in nested scopes."""
    out: set[str] = set()
    if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        a = scope.args
        out.update(x.arg for x in a.posonlyargs + a.args + a.kwonlyargs)
        out.update(x.arg for x in (a.vararg, a.kwarg) if x is not None)
    if isinstance(scope, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
        for g in scope.generators:
            out.update(n.id for n in ast.walk(g.target) if isinstance(n, ast.Name))
        return out
    children = scope.body if isinstance(scope, (ast.Module, ast.ClassDef, ast.FunctionDef,
                                                ast.AsyncFunctionDef)) else [cast(ast.Lambda, scope).body]
    stack: list[ast.AST] = list(children)
    while stack:
        n = stack.pop()
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(n.name)
            stack.extend(n.decorator_list)
            continue
        if isinstance(n, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            continue
        if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
            out.add(n.id)
        elif isinstance(n, ast.alias) and n.name != "*":
            out.add(n.asname or n.name.split(".")[0])
        elif isinstance(n, ast.ExceptHandler) and n.name:
            out.add(n.name)
        elif isinstance(n, (ast.MatchAs, ast.MatchStar)) and n.name:
            out.add(n.name)
        elif isinstance(n, ast.MatchMapping) and n.rest:
            out.add(n.rest)
        elif isinstance(n, ast.Global):
            out.update(n.names)
        stack.extend(ast.iter_child_nodes(n))
    return out
