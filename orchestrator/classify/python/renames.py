"""Rule 7 of :mod:`orchestrator.classify.python`: consistent, scope-aware renames to canonical labels.

:class:`Canon` relabels every binding site and use of a name (module ``M<k>``, function-local ``F<depth>_<k>``,
class-body names and attributes ``A<k>``, keyword arguments as parameter positions ``P<i>``), in place; names it
cannot prove local to the module (builtins, imported attributes, attributes of foreign objects) keep their
spelling. The conditions are in the package docstring.
"""

from __future__ import annotations

import ast
from typing import cast

from orchestrator.classify.python.nodes import FUNCS, own_nodes


# ----------------------------------------------------------------------------------------------- 7. renames

class Canon:
    """Scope-aware alpha-renaming of the whole module in place (see the module docstring, rule 7)."""

    def __init__(self, tree: ast.Module, fixed: frozenset[str]) -> None:
        self.tree = tree
        self.fixed = fixed
        self.module_labels: dict[str, str] = {}
        self.attr_labels: dict[str, str] = {}
        self.renamed: dict[str, str] = {}
        self.module_bound = _bound_in(tree)
        self.classes: dict[str, ast.ClassDef] = {st.name: st for st in tree.body if isinstance(st, ast.ClassDef)}
        self.functions: dict[str, ast.AST] = {st.name: st for st in tree.body if isinstance(st, FUNCS)}
        self.methods: dict[str, list[ast.AST]] = {}
        self.attrs: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                self.attrs |= _bound_in(node)
                for m in node.body:
                    if isinstance(m, FUNCS):
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
            if isinstance(node, FUNCS):
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
            for n in own_nodes(fn):
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
            init = next((m for m in target.body if isinstance(m, FUNCS) and m.name == "__init__"), None)
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


__all__ = ["Canon"]
