"""Rules 4-6 of :mod:`orchestrator.classify.python`: extract / inline a constant, a function, a variable.

Each is inlined back where the module defines it once and uses it once (the conditions are in the package
docstring), so code before and after an extract or inline refactor normalises to the same tree. Each function
works in place and returns the names it inlined (the evidence).
"""

from __future__ import annotations

import ast
import copy
from collections import Counter

from orchestrator.classify.python.nodes import BLOCK_FIELDS, FUNCS, own_nodes


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


def inline_constants(tree: ast.Module, fixed: frozenset[str]) -> list[str]:
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


def inline_functions(tree: ast.Module, fixed: frozenset[str]) -> list[str]:
    done: list[str] = []
    for _ in range(8):  # each pass inlines one helper (the tree changes under us); bounded
        name = _inline_one_function(tree, fixed)
        if name is None:
            break
        done.append(name)
    return done


#: what :func:`_index` returns: parents, Name and attribute use counts, calls by plain name and by ``x.attr`` name
_Index = tuple[dict[int, tuple[ast.AST, str, int | None]], Counter[str], Counter[str], dict[str, list[ast.Call]],
               dict[str, list[ast.Call]]]


def _index(tree: ast.AST) -> _Index:
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
    """Inline one helper that the module calls exactly once (rule 5); its name, or None when none qualifies."""
    exported = _all_strings(tree)
    cands = _candidates(tree)
    if not cands:
        return None
    index = _index(tree)
    parents = index[0]
    def_names = Counter(fn.name for fn, _, _ in cands)
    for fn, owner, is_method in cands:
        found = _single_call(fn, owner, is_method, index, fixed, exported, def_names)
        if found is None:
            continue
        call, params, args_params = found
        returns = [n for n in own_nodes(fn) if isinstance(n, ast.Return)]
        final_ret = fn.body[-1] if fn.body and isinstance(fn.body[-1], ast.Return) else None
        if returns and (len(returns) != 1 or returns[0] is not final_ret):
            continue
        stored = {n.id for n in own_nodes(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        mapping = _arg_mapping(params, args_params, call, stored, is_method)
        if mapping is None:
            continue
        # the helper's own locals must not clash with the caller's names
        caller = _enclosing_function(parents, call)
        same = _shared_result(parents, call, final_ret)
        if caller is not None and (stored - set(params) - same) & \
                {n.id for n in own_nodes(caller) if isinstance(n, ast.Name)}:
            continue
        body = [_Subst(mapping).visit(copy.deepcopy(s)) for s in fn.body]
        if not _splice(parents, call, body, final_ret, same):
            continue
        owner_body = owner.body
        owner_body.remove(fn)
        if not owner_body:
            owner.body = [ast.Pass()]
        return fn.name
    return None


def _candidates(tree: ast.Module) -> list[tuple[ast.FunctionDef, ast.Module | ast.ClassDef, bool]]:
    """Module-level functions and methods: ``(function, the body that holds it, is a method)``."""
    cands: list[tuple[ast.FunctionDef, ast.Module | ast.ClassDef, bool]] = []
    for st in tree.body:
        if isinstance(st, ast.FunctionDef):
            cands.append((st, tree, False))
        elif isinstance(st, ast.ClassDef):
            cands.extend((m, st, True) for m in st.body if isinstance(m, ast.FunctionDef))
    return cands


def _single_call(fn: ast.FunctionDef, owner: ast.Module | ast.ClassDef, is_method: bool, index: _Index,
                 fixed: frozenset[str], exported: set[str],
                 def_names: Counter[str]) -> tuple[ast.Call, list[str], list[str]] | None:
    """The one plain positional call of an inlinable ``fn``, its parameters and the ones the call passes; or None
    (named elsewhere, exported, decorated, defaults, generator, recursive, keywords or ``*args`` at the call...)."""
    parents, name_uses, attr_uses, calls_by_name, calls_by_attr = index
    if is_method:
        if attr_uses[fn.name] != 1 or name_uses[fn.name]:
            return None
    elif name_uses[fn.name] != 1 or attr_uses[fn.name]:
        return None
    params = _simple_params(fn)
    if params is None or fn.name in fixed or fn.name in exported or def_names[fn.name] != 1:
        return None
    if fn.name.startswith("__") or any(isinstance(n, (ast.Yield, ast.YieldFrom, ast.Global, ast.Nonlocal,
                                                      ast.Await)) for n in own_nodes(fn)):
        return None
    if is_method:
        if not params or params[0] not in ("self", "cls"):
            return None
        call = next((n for n in calls_by_attr.get(fn.name, ()) if isinstance(n.func, ast.Attribute)
                     and isinstance(n.func.value, ast.Name) and n.func.value.id == params[0]
                     and _inside(parents, n, owner)), None)
        args_params = params[1:]
    else:
        call = next(iter(calls_by_name.get(fn.name, ())), None)
        args_params = params
    if call is None or call.keywords or len(call.args) != len(args_params) or \
            any(isinstance(a, ast.Starred) for a in call.args):
        return None
    if _inside(parents, call, fn):
        return None  # recursive
    return call, params, args_params


def _arg_mapping(params: list[str], args_params: list[str], call: ast.Call, stored: set[str],
                 is_method: bool) -> dict[str, ast.expr] | None:
    """Parameter -> argument expression, or None when a parameter the helper rebinds gets a non-name argument."""
    mapping: dict[str, ast.expr] = {}
    for p, a in zip(args_params, call.args):
        if p in stored and not isinstance(a, ast.Name):
            return None
        mapping[p] = a
    if is_method:
        mapping[params[0]] = ast.Name(id=params[0], ctx=ast.Load())
    return mapping if len(mapping) == len(params) else None


def _shared_result(parents: dict[int, tuple[ast.AST, str, int | None]], call: ast.Call,
                   final_ret: ast.Return | None) -> set[str]:
    """``total = helper(..)`` whose helper ends ``return total``: the one name caller and helper may share."""
    parent0 = parents[id(call)][0]
    if isinstance(parent0, ast.Assign) and len(parent0.targets) == 1 and isinstance(parent0.targets[0], ast.Name) \
            and final_ret is not None and isinstance(final_ret.value, ast.Name) \
            and final_ret.value.id == parent0.targets[0].id:
        return {final_ret.value.id}
    return set()


def _splice(parents: dict[int, tuple[ast.AST, str, int | None]], call: ast.Call, body: list,
            final_ret: ast.Return | None, same: set[str]) -> bool:
    """Replace ``call`` by the helper's ``body`` (statement call, ``return f(..)``, ``x = f(..)``, or any
    expression when the body is one ``return``); False, with the tree untouched, where that cannot be done."""
    parent, field, idx = parents[id(call)]
    stmt_parent = parents.get(id(parent))
    new_stmts: list[ast.stmt] | None = None
    if isinstance(parent, ast.Expr) and field == "value" and stmt_parent and stmt_parent[2] is not None:
        new_stmts = body[:-1] + [ast.Expr(value=body[-1].value)] if final_ret is not None and \
            body[-1].value is not None else (body[:-1] if final_ret is not None else body)
        target_owner, tfield, tidx = stmt_parent
    elif isinstance(parent, ast.Return) and field == "value" and stmt_parent and stmt_parent[2] is not None:
        if final_ret is None:
            return False
        new_stmts = body
        target_owner, tfield, tidx = stmt_parent
    elif isinstance(parent, ast.Assign) and field == "value" and stmt_parent and stmt_parent[2] is not None:
        if final_ret is None or body[-1].value is None:
            return False
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
        return False
    if new_stmts is not None:
        assert tidx is not None  # each branch that sets new_stmts checked stmt_parent[2]
        lst = getattr(target_owner, tfield)
        lst[tidx:tidx + 1] = new_stmts or [ast.Pass()]
    return True


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
        if isinstance(cur[0], FUNCS):
            return cur[0]
        cur = parents.get(id(cur[0]))
    return None


# --------------------------------------------------------------------------------------------- 6. variables

def inline_variables(tree: ast.Module) -> list[str]:
    done: list[str] = []
    for fn in [n for n in ast.walk(tree) if isinstance(n, FUNCS)]:
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
        for field in BLOCK_FIELDS:
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


__all__ = ["inline_constants", "inline_functions", "inline_variables"]
