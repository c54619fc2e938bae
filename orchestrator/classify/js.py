"""JavaScript / TypeScript mutation classification with tree-sitter (see docs/ledger.md §3).

Both sides are parsed (``tree-sitter-javascript`` for ``.js .jsx .mjs .cjs``, ``tree-sitter-typescript`` for
``.ts .mts .cts`` and its TSX grammar for ``.tsx``) and reduced to a normalised tree, then compared. Strings,
regexes and template literals are tokens of the grammar, so ``//`` inside a template literal is text, never a
comment. Normalisations (each a documented decision that the change keeps behaviour):

- comments, semicolons (ASI), the quote style of a string (``'a'`` vs ``"a"``), trailing commas and redundant
  parentheses (the tree already encodes precedence) are dropped;
- ``let x = v`` and ``const x = v`` are one declaration when nothing assigns ``x`` again;
- ``x => e``, ``(x) => e`` and ``(x) => { return e; }`` are one function; ``{a}`` is ``{a: a}`` (objects and
  destructuring patterns);
- TypeScript types are erased like ``tsc`` does: type annotations, type parameters / arguments, ``interface`` and
  ``type`` declarations, ``import type``, ``as`` / ``satisfies`` / ``!`` wrappers, accessibility modifiers;
- consecutive ``import`` statements are sorted, and the specifiers inside ``{ }`` too;
- **extract / inline variable**: ``const|let x = expr`` read exactly once, in the very next statement, outside any
  nested function or loop, is inlined;
- **consistent renames**: identifiers *declared in the file* (variables, functions, classes, parameters, imports,
  catch parameters) and not exported are renamed to labels in order of first appearance. Property names
  (``obj.prop``, ``{key: v}``) are interface and keep their spelling; a shorthand ``{a}`` keeps its key ``a``.

Only the top-level statements between the common leading and trailing ones (compared as text) are normalised;
names those unchanged statements mention are never renamed nor inlined. A parse with errors on the new side is
evolution; on both sides the caller falls back to the token heuristic.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["classify_js", "language_for"]

_JS = (".js", ".jsx", ".mjs", ".cjs")
_TS = (".ts", ".mts", ".cts")
_TSX = (".tsx",)

_DROP_LEAVES = frozenset({";", '"', "'", "comment", "html_comment", "hash_bang_line"})
_ERASE = frozenset({"type_annotation", "type_parameters", "type_arguments", "interface_declaration",
                    "type_alias_declaration", "accessibility_modifier", "comment", "opting_type_annotation",
                    "omitting_type_annotation", "asserts_annotation", "override_modifier", "readonly"})
_UNWRAP = frozenset({"parenthesized_expression", "as_expression", "satisfies_expression", "non_null_expression",
                     "type_assertion"})
_CLOSERS = frozenset({")", "]", "}"})
_SCOPE_BARRIERS = frozenset({"function_declaration", "function_expression", "arrow_function", "method_definition",
                             "for_statement", "for_in_statement", "while_statement", "do_statement",
                             "generator_function_declaration", "class_body"})

_PARSERS: dict[str, Any] = {}


def language_for(path: str) -> str | None:
    """``"javascript"``, ``"typescript"``, ``"tsx"`` or None."""
    low = path.lower()
    if low.endswith(_JS):
        return "javascript"
    if low.endswith(_TS):
        return "typescript"
    if low.endswith(_TSX):
        return "tsx"
    return None


def _parser(lang: str) -> Any:
    p = _PARSERS.get(lang)
    if p is None:
        import tree_sitter
        if lang == "javascript":
            import tree_sitter_javascript as g
            language = g.language()
        else:
            import tree_sitter_typescript as ts
            language = ts.language_typescript() if lang == "typescript" else ts.language_tsx()
        p = _PARSERS[lang] = tree_sitter.Parser(tree_sitter.Language(language))
    return p


def classify_js(path: str, old: str, new: str) -> tuple[str, str] | None:
    """``(class, evidence)``; None when the grammar is unavailable or neither side parses (caller falls back)."""
    lang = language_for(path)
    if lang is None:
        return None
    try:
        parser = _parser(lang)
    except Exception:  # grammar not installed / ABI mismatch: the token heuristic takes over
        return None
    t_old = parser.parse(old.encode("utf-8", "surrogateescape"))
    t_new = parser.parse(new.encode("utf-8", "surrogateescape"))
    if t_new.root_node.has_error:
        if t_old.root_node.has_error:
            return None
        return "INTENT_EVOLUTION", f"{lang} (tree-sitter): new source does not parse"
    if t_old.root_node.has_error:
        return "INTENT_EVOLUTION", f"{lang} (tree-sitter): old source did not parse, new one does"
    # Region: top-level statements identical in text at both ends are skipped (a small edit of a big file stays
    # cheap); names they mention are held fixed — neither renamed nor inlined — as for Python.
    ob, nb = old.encode("utf-8", "surrogateescape"), new.encode("utf-8", "surrogateescape")
    ka, kb = t_old.root_node.children, t_new.root_node.children
    ta = [ob[c.start_byte:c.end_byte] for c in ka]
    tb = [nb[c.start_byte:c.end_byte] for c in kb]
    i = 0
    while i < min(len(ta), len(tb)) and ta[i] == tb[i]:
        i += 1
    j = 0
    while j < min(len(ta), len(tb)) - i and ta[-1 - j] == tb[-1 - j]:
        j += 1
    outside = b"\n".join(ta[:i] + ta[len(ta) - j:])
    fixed = frozenset(w.decode("utf-8", "surrogateescape") for w in _WORD.findall(outside))
    a, notes_a = _normalise(ka[i:len(ka) - j], fixed, outside)
    b, notes_b = _normalise(kb[i:len(kb) - j], fixed, outside)
    la = {x for x in notes_a if x.startswith("labels:")}
    lb = {x for x in notes_b if x.startswith("labels:")}
    if la != lb:
        notes_a.add("consistent renames")
    if a == b:
        notes = sorted(x for x in set(notes_a) | set(notes_b) if not x.startswith("labels:"))
        return "AST_REFACTOR", f"{lang} (tree-sitter): " + (", ".join(notes) or "formatting/comments only")
    return "INTENT_EVOLUTION", f"{lang} (tree-sitter): " + _diff_evidence(a, b)


# A normalised node is a list: [type, text] for a leaf, [type, child, child, ...] otherwise (mutable, so the
# passes below can rewrite it).

def _build(node: Any, notes: set[str]) -> list | None:
    t = node.type
    if t in _ERASE:
        notes.add("types/comments")
        return None
    if t == "import_statement" and any(c.type == "type" for c in node.children):
        notes.add("types/comments")
        return None
    if node.child_count == 0:
        if t in _DROP_LEAVES:
            return None
        return [t, node.text.decode("utf-8", "surrogateescape")]
    if t in _UNWRAP:
        kids = [c for c in node.named_children if c.type not in _ERASE and c.type != "comment"]
        if kids:
            return _build(kids[0], notes)
    out: list = [t]
    children = node.children
    for i, c in enumerate(children):
        if c.type == "," and (i + 1 == len(children) or children[i + 1].type in _CLOSERS):
            continue  # trailing comma
        got = _build(c, notes)
        if got is not None:
            out.append(got)
    if t in ("string", "template_string") and len(out) == 1:
        out.append(["string_fragment", ""])  # '' and "" both become the same empty string
    if t == "arrow_function":
        _normalise_arrow(out, notes)
    return out


def _normalise_arrow(n: list, notes: set[str]) -> None:
    """``x => e``, ``(x) => e`` and ``(x) => { return e; }`` are the same function."""
    for i in range(1, len(n)):
        c = n[i]
        if c[0] == "=>":
            if i > 1 and n[i - 1][0] == "identifier":
                n[i - 1] = ["formal_parameters", ["(", "("], n[i - 1], [")", ")"]]
            break
    body = n[-1]
    if body[0] == "statement_block":
        stmts = [c for c in body[1:] if c[0] not in ("{", "}")]
        if len(stmts) == 1 and stmts[0][0] == "return_statement":
            exprs = [c for c in stmts[0][1:] if c[0] != "return"]
            if len(exprs) == 1:
                n[-1] = exprs[0]
                notes.add("arrow body")


_WORD = re.compile(rb"[A-Za-z_$][\w$]*")


def _normalise(children: list, fixed: frozenset[str], outside: bytes = b"") -> tuple[list, set[str]]:
    notes: set[str] = set()
    tree: list = ["program"]
    for c in children:
        got = _build(c, notes)
        if got is not None:
            tree.append(got)
    _let_const(tree, outside)
    # only names this region binds at top level can be what the unchanged statements refer to
    fixed = fixed & _top_level_bindings(tree)
    if _sort_imports(tree):
        notes.add("import order")
    if _inline_variables(tree, fixed):
        notes.add("extract/inline variable")
    labels = _rename(tree, fixed)
    notes.add("labels:" + repr(sorted(labels.items())))  # compared by the caller: renames only if they differ
    return tree, notes


_ASSIGN_NODES = frozenset({"assignment_expression", "augmented_assignment_expression", "update_expression"})


def _let_const(tree: list, outside: bytes) -> None:
    """``let x = v`` and ``const x = v`` are the same when nothing assigns ``x`` again (here or outside the region)."""
    assigned: set[str] = set()
    for n in _walk(tree):
        if n[0] in _ASSIGN_NODES:
            for c in n[1:]:
                if isinstance(c, list) and c[0] == "identifier" and _is_leaf(c):
                    assigned.add(c[1])
                    if n[0] != "update_expression":
                        break  # only the left-hand side of an assignment
    for n in _walk(tree):
        if n[0] != "lexical_declaration" or len(n) < 2 or n[1][0] not in ("let", "const"):
            continue
        names = [b for c in n[1:] if isinstance(c, list) and c[0] == "variable_declarator" for b in _bindings(c)]
        if not names or any(x in assigned for x in names):
            continue
        if outside and any(re.search(rb"(?<![\w$.])" + re.escape(x.encode()) + rb"\s*(?:[-+*/%&|^]|\*\*|<<|>>>?|&&|"
                                     rb"\|\||\?\?)?=(?!=)|(?:\+\+|--)\s*" + re.escape(x.encode()) + rb"(?![\w$])|"
                                     rb"(?<![\w$.])" + re.escape(x.encode()) + rb"\s*(?:\+\+|--)", outside)
                               for x in names):
            continue
        n[1] = ["binding", "let/const"]


_INNER = frozenset({"statement_block", "arrow_function", "function_expression", "class_body", "formal_parameters",
                    "method_definition"})


def _top_level_bindings(tree: list) -> set[str]:
    out: set[str] = set()
    stack = [c for c in tree[1:] if isinstance(c, list)]
    while stack:
        n = stack.pop()
        if _is_leaf(n):
            continue
        out.update(_bindings(n))
        stack.extend(c for c in n[1:] if isinstance(c, list) and not _is_leaf(c) and c[0] not in _INNER)
    return out


def _key(n: Any) -> str:
    return repr(n)


def _sort_imports(tree: list) -> bool:
    changed = False
    for n in _walk(tree):
        if n[0] == "named_imports":
            inner = [c for c in n[1:] if isinstance(c, list) and c[0] == "import_specifier"]
            srt = sorted(inner, key=_key)
            if srt != inner:
                changed = True
            n[1:] = [["{", "{"]] + [x for s in srt for x in (s, [",", ","])][:-1] + [["}", "}"]]
    body = tree[1:]
    out: list = []
    run: list = []
    for c in body:
        if isinstance(c, list) and c[0] == "import_statement":
            run.append(c)
            continue
        if run:
            srt = sorted(run, key=_key)
            changed |= srt != run
            out.extend(srt)
            run = []
        out.append(c)
    if run:
        srt = sorted(run, key=_key)
        changed |= srt != run
        out.extend(srt)
    tree[1:] = out
    return changed


def _walk(n: list):
    stack = [n]
    while stack:
        x = stack.pop()
        yield x
        if len(x) > 1 and isinstance(x[1], list):
            stack.extend(c for c in x[1:] if isinstance(c, list))


def _is_leaf(n: list) -> bool:
    return len(n) == 2 and isinstance(n[1], str)


def _identifier_counts(tree: list) -> dict[str, int]:
    out: dict[str, int] = {}
    for x in _walk(tree):
        if x[0] in ("identifier", "shorthand_property_identifier") and _is_leaf(x):
            out[x[1]] = out.get(x[1], 0) + 1
    return out


def _inline_variables(tree: list, fixed: frozenset[str]) -> bool:
    changed = False
    for _ in range(50):
        if not _inline_one(tree, _identifier_counts(tree), fixed):
            break
        changed = True
    return changed


def _inline_one(tree: list, counts: dict[str, int], fixed: frozenset[str]) -> bool:
    for block in _walk(tree):
        if block[0] not in ("statement_block", "program"):
            continue
        kids = block[1:]
        for i in range(len(kids) - 1):
            st = kids[i]
            if not (isinstance(st, list) and st[0] == "lexical_declaration"):
                continue
            decls = [c for c in st[1:] if isinstance(c, list) and c[0] == "variable_declarator"]
            if len(decls) != 1:
                continue
            d = decls[0]
            parts = [c for c in d[1:] if isinstance(c, list)]
            if len(parts) != 3 or parts[0][0] != "identifier" or parts[1][0] != "=":
                continue
            name, value = parts[0][1], parts[2]
            if counts.get(name) != 2 or name in fixed:  # the declaration and exactly one read, here only
                continue
            spot = _find_use(kids[i + 1], name)
            if spot is None:
                continue
            parent, idx = spot
            parent[idx] = value
            del block[1 + i]
            return True
    return False


def _find_use(stmt: list, name: str) -> tuple[list, int] | None:
    if stmt[0] in _SCOPE_BARRIERS:
        return None
    for idx in range(1, len(stmt)):
        c = stmt[idx]
        if not isinstance(c, list):
            continue
        if c[0] == "identifier" and _is_leaf(c) and c[1] == name:
            return stmt, idx
        if _is_leaf(c):
            continue
        got = _find_use(c, name)
        if got is not None:
            return got
    return None


def _rename(tree: list, fixed: frozenset[str] = frozenset()) -> dict[str, str]:
    declared: set[str] = set()
    exported: set[str] = set()

    def collect(n: list, exp: bool) -> None:
        for c in _bindings(n):
            (exported if exp else declared).add(c)
        for c in n[1:]:
            if isinstance(c, list) and not _is_leaf(c):
                collect(c, exp or (n[0] == "program" and c[0] == "export_statement"))

    collect(tree, False)
    declared -= exported | fixed
    labels: dict[str, str] = {}

    def lab(name: str) -> str:
        got = labels.get(name)
        if got is None:
            got = labels[name] = f"_v{len(labels)}"
        return got

    def visit(n: list) -> None:
        for i in range(1, len(n)):
            c = n[i]
            if not isinstance(c, list):
                continue
            if _is_leaf(c):
                if c[0] in ("identifier", "type_identifier") and c[1] in declared:
                    n[i] = [c[0], lab(c[1])]
                elif c[0] in ("shorthand_property_identifier", "shorthand_property_identifier_pattern"):
                    # the key keeps its spelling, the binding is renamed: `{a}` is `{a: a}`
                    n[i] = ["shorthand", c[1], lab(c[1]) if c[1] in declared else c[1]]
                continue
            if c[0] in ("pair", "pair_pattern"):
                parts = [x for x in c[1:] if x[0] != ":"]
                if len(parts) == 2 and parts[0][0] == "property_identifier" and parts[1][0] == "identifier" \
                        and _is_leaf(parts[1]):
                    v = parts[1][1]
                    n[i] = ["shorthand", parts[0][1], lab(v) if v in declared else v]
                    continue
            visit(c)

    visit(tree)
    return labels


_IDS = ("identifier", "shorthand_property_identifier_pattern", "type_identifier")


def _bindings(n: list) -> list[str]:
    """Names that node ``n`` binds directly (its name / parameter / pattern slots, not its value)."""
    t = n[0]
    ids = [c for c in n[1:] if isinstance(c, list) and _is_leaf(c) and c[0] in _IDS]
    if not ids:
        return []
    if t in ("variable_declarator", "arrow_function", "assignment_pattern", "object_assignment_pattern",
             "required_parameter", "optional_parameter", "catch_clause", "for_in_statement",
             "function_declaration", "function_expression", "generator_function_declaration",
             "class_declaration", "class", "import_clause", "namespace_import"):
        first = next(c for c in n[1:] if isinstance(c, list) and not (_is_leaf(c) and c[0] in (
            "const", "let", "var", "function", "class", "async", "(", "*", "for", "catch", "await", "import")))
        return [first[1]] if first in ids else []
    if t in ("formal_parameters", "array_pattern", "rest_pattern", "object_pattern"):
        return [c[1] for c in ids]
    if t == "pair_pattern":
        return [ids[-1][1]] if n[-1] in ids else []
    if t == "import_specifier" and len(ids) == 2:
        return [ids[1][1]]  # `{a as b}` binds b; a names the other module's export
    return []


def _diff_evidence(a: list, b: list) -> str:
    ka = {x[0] for x in _walk(a)}
    kb = {x[0] for x in _walk(b)}
    added, removed = sorted(kb - ka), sorted(ka - kb)
    parts = []
    if added:
        parts.append("new node kind(s): " + ", ".join(added[:5]))
    if removed:
        parts.append("removed node kind(s): " + ", ".join(removed[:5]))
    na = sum(1 for _ in _walk(a))
    nb = sum(1 for _ in _walk(b))
    parts.append(f"tree change ({na}->{nb} nodes)")
    return "; ".join(parts)
