"""Mutation classification: ``AST_REFACTOR`` (behaviour kept) vs ``INTENT_EVOLUTION`` (behaviour changed).

Computed from the pre- and post-image, never taken on the agent's word; :func:`classify` returns the class and a
short evidence string (names of functions / node kinds, never file contents or literal values).

Python (``ast``): both sides are parsed and *normalised*, then compared:
    1. docstrings are dropped (documentation, like comments; ``ast`` already drops comments and formatting);
    2. **extract/inline constant**: a module-level ``NAME = <literal>`` assigned exactly once in the module (no other
       binding, no ``global``) is inlined into its uses and its assignment removed. *Decision*: extracting a literal
       into such a constant (or inlining one) is a refactor — the value every use sees is identical; the module
       gains/loses one attribute, which we accept. Changing the literal's value is evolution;
    3. **consistent renames**: every name *bound in the module* (defs, classes, parameters, assignment / loop /
       with / except / import-as targets, and attribute or keyword uses spelled like one) is alpha-renamed to
       ``_v0, _v1, …`` in order of first appearance. Free names (builtins, imported modules' attributes) are kept,
       so ``print`` -> ``log`` is evolution while ``total`` -> ``acc`` everywhere is a refactor. Equal canonical
       trees mean a bijective renaming exists.
    Equal normalised trees → ``AST_REFACTOR``; otherwise ``INTENT_EVOLUTION`` with evidence (new/removed functions
    or classes, branch count change, changed literals, or the functions whose bodies differ). If the new text does
    not parse → evolution ("does not parse"); if neither side parses, the generic heuristic is used.

Shell (tree-sitter-bash, if importable): leaf tokens outside ``comment`` nodes are compared; equal → refactor.

Anything else (generic, documented heuristic): a regex tokenizer (strings, numbers, identifiers, operators) with
comments removed for the comment syntaxes implied by the file extension; equal token streams (so whitespace,
indentation, line wrapping or comment-only changes) → refactor; anything else → evolution. Renames are *not*
recognised outside Python (conservative: evolution).

File-level operations: create and delete are evolution; a rename with identical content is a refactor.
"""

from __future__ import annotations

import ast
import copy
import io
import pickle
import re
from collections import Counter

__all__ = ["AST_REFACTOR", "INTENT_EVOLUTION", "CLASSES", "classify", "classify_python", "classify_generic",
           "normalise_declared", "combine"]

AST_REFACTOR = "AST_REFACTOR"
INTENT_EVOLUTION = "INTENT_EVOLUTION"
CLASSES = (AST_REFACTOR, INTENT_EVOLUTION)

_PY_EXT = (".py", ".pyi", ".pyw")
_SH_EXT = (".sh", ".bash")


def normalise_declared(value: object) -> str | None:
    """Map an agent-declared class (any case, ``-``/space separators, short forms) to a canonical one, or None."""
    if not isinstance(value, str) or not value.strip():
        return None
    v = value.strip().upper().replace("-", "_").replace(" ", "_")
    if v in ("AST_REFACTOR", "REFACTOR"):
        return AST_REFACTOR
    if v in ("INTENT_EVOLUTION", "EVOLUTION", "FEATURE"):
        return INTENT_EVOLUTION
    return None


def combine(classes: list[str]) -> str:
    """Class of a whole call touching several files: evolution if any file evolved."""
    return INTENT_EVOLUTION if INTENT_EVOLUTION in classes else AST_REFACTOR


def classify(path: str, old: str | None, new: str | None, hunks: list | None = None) -> tuple[str, str]:
    """Classify one file's change; ``None`` means the file did not exist (create) / no longer exists (delete).

    ``hunks`` (from :func:`orchestrator.diffing.diff_hunks`) lets the classifier look only at the changed region
    (expanded to whole top-level statements for Python), which keeps a small edit of a big file cheap.
    """
    if old is None and new is None:
        return AST_REFACTOR, "no change"
    if old is None:
        return INTENT_EVOLUTION, "new file"
    if new is None:
        return INTENT_EVOLUTION, "file deleted"
    if old == new:
        return AST_REFACTOR, "content unchanged"
    low = path.lower()
    if low.endswith(_PY_EXT) or (not _ext(low) and old.startswith("#!") and "python" in old.split("\n", 1)[0]):
        if hunks:
            got = _classify_python_region(old, new, hunks)
            if got is not None:
                return got
        return classify_python(old, new)
    if hunks:
        old, new = _span(old, new, hunks)
    if low.endswith(_SH_EXT) or (not _ext(low) and re.match(r"#!.*\b(ba)?sh\b", old)):
        got = _classify_bash(old, new)
        if got is not None:
            return got
    return classify_generic(path, old, new)


def _span(old: str, new: str, hunks: list) -> tuple[str, str]:
    """The old and new text of the changed region (first hunk to last hunk), for the token heuristics."""
    from .diffing import split_lines
    a, b = split_lines(old), split_lines(new)
    first, last = hunks[0], hunks[-1]
    o0 = first.old_start - (1 if first.old_lines else 0)
    o1 = last.old_start + last.old_lines - (1 if last.old_lines else 0)
    n0 = first.new_start - (1 if first.new_lines else 0)
    n1 = last.new_start + last.new_lines - (1 if last.new_lines else 0)
    return "".join(a[o0:o1]), "".join(b[n0:n1])


_CONTINUATION = re.compile(r"(else|elif|except|finally)\b|[)\]}#]")


def _top_start(line: str) -> bool:
    """Heuristic: does this line start a top-level Python statement?"""
    return bool(line) and not line[0].isspace() and not _CONTINUATION.match(line)


def _classify_python_region(old: str, new: str, hunks: list) -> tuple[str, str] | None:
    """Classify by parsing only the top-level statements that contain the hunks; None = use the whole file.

    The lines before the first hunk and after the last are identical on both sides, so the module ASTs are equal
    (modulo renames) iff the changed regions' ASTs are, *provided* module-level names of the region that the rest of
    the file mentions are neither renamed nor inlined as constants: those are held fixed (found by a word search of
    the unchanged text, which can only err toward evolution).
    """
    from .diffing import _common_prefix
    # Common leading/trailing *lines* on the raw strings (C-speed), as in diffing.changed_ranges.
    p = _common_prefix(old, new)
    p = old.rfind("\n", 0, p) + 1
    q = _common_prefix(old[p:][::-1], new[p:][::-1])
    o_end, n_end = len(old) - q, len(new) - q
    while o_end < len(old) and not ((o_end == 0 or old[o_end - 1] == "\n")
                                    and (n_end == 0 or new[n_end - 1] == "\n")):
        o_end += 1
        n_end += 1
    # Grow upwards to the nearest line above that starts a top-level statement ...
    s = p
    while s > 0:
        ps = old.rfind("\n", 0, s - 1) + 1
        s = ps
        if _top_start(old[ps:old.find("\n", ps) + 1 or len(old)]):
            break
    # ... and downwards to just before the next one (the suffix is identical on both sides).
    e = o_end
    while e < len(old):
        le = old.find("\n", e)
        nxt = len(old) if le < 0 else le + 1
        if _top_start(old[e:nxt]):
            break
        e = nxt
    ne = n_end + (e - o_end)
    if (e - s) > 0.6 * len(old) and len(old) > 2000:
        return None  # most of the file changed: just parse it whole
    ra, rb = old[s:e], new[s:ne]
    try:
        names = set(_module_names(ra)) | set(_module_names(rb))
    except (SyntaxError, ValueError):
        return None  # the heuristic cut inside a construct: fall back to the whole file
    outside = old[:s] + old[e:]
    fixed = frozenset(n for n in names if _mentions(outside, n))
    cls, ev = classify_python(ra, rb, fixed=fixed)
    first = old.count("\n", 0, s) + 1
    return cls, ev + f" [region lines {first}-{first + rb.count(chr(10)) - 1}]"


def _mentions(text: str, word: str) -> bool:
    """Does ``word`` occur in ``text`` as a whole identifier? (str.find is much faster than a ``\\b`` regex.)"""
    i = text.find(word)
    n = len(word)
    while i >= 0:
        before = text[i - 1] if i else " "
        after = text[i + n] if i + n < len(text) else " "
        if not (before.isalnum() or before == "_") and not (after.isalnum() or after == "_"):
            return True
        i = text.find(word, i + 1)
    return False


def _module_names(src: str) -> list[str]:
    """Names bound at module or class level (not function locals): what other code can refer to."""
    out: list[str] = []

    def visit(body: list) -> None:
        for st in body:
            if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)):
                out.append(st.name)
            elif isinstance(st, ast.ClassDef):
                out.append(st.name)
                visit(st.body)
            else:
                for n in ast.walk(st):
                    if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                        out.append(n.id)
                    elif isinstance(n, ast.alias):
                        out.append(n.asname or n.name.split(".")[0])
    visit(ast.parse(src).body)
    return out


def _ext(path: str) -> str:
    base = path.rsplit("/", 1)[-1]
    return base.rsplit(".", 1)[-1] if "." in base else ""


# ------------------------------------------------------------------------------------------------------ Python

def classify_python(old: str, new: str, fixed: frozenset[str] = frozenset()) -> tuple[str, str]:
    """Python rules (see the module docstring). ``fixed``: names never renamed nor inlined."""
    try:
        t_old = ast.parse(old)
    except (SyntaxError, ValueError):
        t_old = None
    try:
        t_new = ast.parse(new)
    except (SyntaxError, ValueError):
        t_new = None
    if t_new is None:
        if t_old is None:
            cls, ev = classify_generic("x.py", old, new)
            return cls, "python (neither side parses): " + ev
        return INTENT_EVOLUTION, "python: new source does not parse"
    if t_old is None:
        return INTENT_EVOLUTION, "python: old source did not parse, new one does"
    if _key(t_old) == _key(t_new):
        return AST_REFACTOR, "python: AST identical (formatting/comments only)"
    # Normalise in place (the trees are ours): docstrings, literal constants, then alpha-renaming. Notes for the
    # evidence are computed only on the refactor path; evolution evidence comes from fresh parses.
    doc_old, doc_new = _strip_docstrings(t_old), _strip_docstrings(t_new)
    c_old, c_new = _inline_constants(t_old, fixed), _inline_constants(t_new, fixed)
    d_old, m_old = _canonical(t_old, fixed)
    d_new, m_new = _canonical(t_new, fixed)
    if d_old != d_new:
        return INTENT_EVOLUTION, "python: " + _evolution_evidence(ast.parse(old), ast.parse(new))
    notes: list[str] = []
    if doc_old != doc_new:
        notes.append("docstring change")
    extracted = sorted(set(c_new) - set(c_old))
    inlined = sorted(set(c_old) - set(c_new))
    if extracted:
        notes.append("extracted constant(s): " + ", ".join(extracted[:5]))
    if inlined:
        notes.append("inlined constant(s): " + ", ".join(inlined[:5]))
    inv_new = {v: k for k, v in m_new.items()}
    pairs = [f"{k}->{inv_new[v]}" for k, v in m_old.items() if inv_new.get(v, k) != k]
    if pairs:
        notes.append("consistent rename(s): " + ", ".join(pairs[:5]) + (" …" if len(pairs) > 5 else ""))
    return AST_REFACTOR, "python: " + ("; ".join(notes) or "equivalent AST")


def _strip_docstrings(tree: ast.AST) -> list[str]:
    """Remove docstrings in place; returns them (to tell whether they changed)."""
    docs: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                    and isinstance(body[0].value.value, str):
                docs.append(body[0].value.value)
                node.body = body[1:] or [ast.Pass()]
    return docs


def _bound_names(tree: ast.AST) -> list[str]:
    """Names bound anywhere in the module, in order of appearance."""
    out: dict[str, None] = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out[node.name] = None
        elif isinstance(node, ast.arg):
            out[node.arg] = None
        elif isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            out[node.id] = None
        elif isinstance(node, ast.alias):
            out[node.asname or node.name.split(".")[0]] = None
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            out.update(dict.fromkeys(node.names))
        elif isinstance(node, ast.ExceptHandler) and node.name:
            out[node.name] = None
        elif isinstance(node, ast.MatchAs) and node.name:
            out[node.name] = None
        elif isinstance(node, ast.MatchStar) and node.name:
            out[node.name] = None
    return list(out)


def _inline_constants(tree: ast.Module, fixed: frozenset[str] = frozenset()) -> dict[str, object]:
    """Inline module-level single-assignment literal constants in place; returns {name: value}."""
    counts: Counter[str] = Counter()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            counts[node.id] += 1
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            for n in node.names:
                counts[n] += 2  # rebindable from a function: not a constant
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            counts[node.name] += 1
        elif isinstance(node, ast.arg):
            counts[node.arg] += 1
        elif isinstance(node, ast.alias):
            counts[node.asname or node.name.split(".")[0]] += 1
    consts: dict[str, ast.expr] = {}
    keep: list[ast.stmt] = []
    for stmt in tree.body:
        target = value = None
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            target, value = stmt.targets[0].id, stmt.value
        elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value is not None:
            target, value = stmt.target.id, stmt.value
        if target and target not in fixed and counts[target] == 1 and _is_literal(value):
            consts[target] = value
            continue
        keep.append(stmt)
    if not consts:
        return {}

    class _Inline(ast.NodeTransformer):
        def visit_Name(self, node: ast.Name) -> ast.AST:
            if isinstance(node.ctx, ast.Load) and node.id in consts:
                return copy.deepcopy(consts[node.id])
            return node

    tree.body = keep or [ast.Pass()]
    _Inline().visit(tree)
    return {k: _key(copy.deepcopy(v)) for k, v in consts.items()}


def _is_literal(node: ast.expr | None) -> bool:
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        return isinstance(node.operand, ast.Constant)
    if isinstance(node, ast.Tuple):
        return all(_is_literal(e) for e in node.elts)
    return False


def _canonical(tree: ast.AST, fixed: frozenset[str] = frozenset()) -> tuple[bytes, dict[str, str]]:
    """Alpha-rename bound names in place; returns (comparison key, {original name: canonical name})."""
    bound = set(_bound_names(tree)) - fixed
    mapping: dict[str, str] = {}

    def canon(name: str) -> str:
        if name not in bound:
            return name
        c = mapping.get(name)
        if c is None:
            c = mapping[name] = f"_v{len(mapping)}"
        return c

    # ast.walk is breadth-first: not source order, but deterministic and the same for equal trees.
    for node in ast.walk(tree):
        d = node.__dict__
        for attr in ("name", "id", "arg", "attr", "asname"):
            v = d.get(attr)
            if type(v) is str:
                if attr == "name" and isinstance(node, ast.alias):
                    continue  # the imported module/object name itself is not ours to rename
                d[attr] = canon(v)
        if isinstance(node, (ast.Global, ast.Nonlocal)):
            node.names = [canon(n) for n in node.names]
        elif isinstance(node, ast.alias) and node.asname is None:
            # `import x` binds x; canonicalise the binding via a synthetic asname so uses match.
            node.asname = canon(node.name.split(".")[0])
    return _key(tree, strip=False), mapping  # positions were stripped by the first _key()


_POS = ("lineno", "col_offset", "end_lineno", "end_col_offset")


def _key(tree: ast.AST, strip: bool = True) -> bytes:
    """Position-free structural key of a tree (pickled without memo: C speed, unlike ``ast.dump``).

    Strips positions in place. Memoisation is off so that shared vs. equal sub-objects pickle identically.
    """
    if strip:
        for node in ast.walk(tree):
            d = node.__dict__
            if "lineno" in d:
                for k in _POS:
                    d.pop(k, None)
    buf = io.BytesIO()
    p = pickle.Pickler(buf, 4)
    p.fast = True  # no memo: equal trees give equal bytes whatever object sharing the parser did
    p.dump(tree)
    return buf.getvalue()


_BRANCH_NODES = (ast.If, ast.IfExp, ast.For, ast.AsyncFor, ast.While, ast.Try, ast.With, ast.AsyncWith,
                 ast.Match, ast.BoolOp, ast.comprehension)


def _facts(tree: ast.AST) -> tuple[dict[str, ast.AST], int, Counter[str]]:
    """One pass: qualified defs, number of branch/loop nodes, multiset of literal values (as repr)."""
    defs: dict[str, ast.AST] = {}
    consts: Counter[str] = Counter()
    branches = 0
    stack: list[tuple[ast.AST, str]] = [(tree, "")]
    while stack:
        node, prefix = stack.pop()
        if isinstance(node, _BRANCH_NODES):
            branches += 1
        elif type(node) is ast.Constant:
            consts[repr(node.value)] += 1
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node is not tree:
            prefix = prefix + node.name
            defs[prefix] = node
            prefix += "."
        for child in ast.iter_child_nodes(node):
            stack.append((child, prefix))
    return defs, branches, consts


def _evolution_evidence(t_old: ast.AST, t_new: ast.AST) -> str:
    parts: list[str] = []
    d_old, b_old, k_old = _facts(t_old)
    d_new, b_new, k_new = _facts(t_new)
    added = [k for k in d_new if k not in d_old]
    removed = [k for k in d_old if k not in d_new]
    if added:
        parts.append("new def(s): " + ", ".join(sorted(added)[:5]))
    if removed:
        parts.append("removed def(s): " + ", ".join(sorted(removed)[:5]))
    if b_old != b_new:
        parts.append(f"branches/loops {b_old}->{b_new}")
    if k_old != k_new:
        parts.append(f"changed literal(s) ({sum((k_old - k_new).values())} removed, "
                     f"{sum((k_new - k_old).values())} added)")
    # Innermost changed defs only: a changed method also changes its class.
    changed = sorted(k for k in d_new if k in d_old and _key(d_old[k]) != _key(d_new[k]))
    changed = [k for k in changed if not any(o.startswith(k + ".") for o in changed)]
    if changed:
        parts.append("changed body: " + ", ".join(changed[:5]))
    return "; ".join(parts) or "behavioural AST change (module level)"


# ------------------------------------------------------------------------------------------------- bash (t-s)

def _classify_bash(old: str, new: str) -> tuple[str, str] | None:
    try:
        import tree_sitter
        import tree_sitter_bash
    except ImportError:
        return None
    try:
        parser = tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))

        def leaves(src: str) -> list[tuple[str, bytes]]:
            data = src.encode("utf-8", "surrogateescape")
            tree = parser.parse(data)
            out: list[tuple[str, bytes]] = []
            stack = [tree.root_node]
            while stack:
                n = stack.pop()
                if n.type == "comment":
                    continue
                if n.child_count == 0:
                    out.append((n.type, data[n.start_byte:n.end_byte]))
                else:
                    stack.extend(reversed(n.children))
            return out

        if leaves(old) == leaves(new):
            return AST_REFACTOR, "bash (tree-sitter): whitespace/comment-only change"
        return INTENT_EVOLUTION, "bash (tree-sitter): token change"
    except Exception:  # a grammar/ABI mismatch must not break recording: fall back to the generic heuristic
        return None


# ---------------------------------------------------------------------------------------------------- generic

_HASH_COMMENT = ("py", "sh", "bash", "zsh", "rb", "pl", "r", "yaml", "yml", "toml", "cfg", "ini", "conf",
                 "mk", "cmake", "dockerfile", "tf", "nix", "ps1", "jl", "ex", "exs")
_SLASH_COMMENT = ("c", "h", "cc", "cpp", "hpp", "cxx", "js", "jsx", "ts", "tsx", "mjs", "cjs", "java", "kt",
                  "kts", "go", "rs", "swift", "cs", "scala", "dart", "php", "css", "scss", "less", "groovy",
                  "proto", "zig", "sol")
_DASH_COMMENT = ("sql", "lua", "hs", "elm", "ada")
_XML_COMMENT = ("html", "htm", "xml", "svg", "vue", "md", "markdown")

_TOKEN = re.compile(r'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'|`[^`]*`|\w+|[^\w\s]')


def _strip_comments(ext: str, text: str) -> str:
    if ext in _SLASH_COMMENT:
        text = re.sub(r'("(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\')|/\*.*?\*/|//[^\n]*',
                      lambda m: m.group(1) or " ", text, flags=re.S)
    elif ext in _HASH_COMMENT or ext == "":
        text = re.sub(r'("(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\')|#[^\n]*',
                      lambda m: m.group(1) or " ", text)
    elif ext in _DASH_COMMENT:
        text = re.sub(r'("(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\')|--[^\n]*',
                      lambda m: m.group(1) or " ", text)
    elif ext in _XML_COMMENT:
        text = re.sub(r"<!--.*?-->", " ", text, flags=re.S)
    return text


def classify_generic(path: str, old: str, new: str) -> tuple[str, str]:
    """Token heuristic for languages without a parser here (see the module docstring)."""
    ext = _ext(path.lower())
    if path.lower().rsplit("/", 1)[-1] in ("makefile", "dockerfile"):
        ext = "mk"
    a = _TOKEN.findall(_strip_comments(ext, old))
    b = _TOKEN.findall(_strip_comments(ext, new))
    if a == b:
        return AST_REFACTOR, f"tokens identical (whitespace/comment-only change; heuristic for .{ext or 'noext'})"
    return INTENT_EVOLUTION, f"token change ({len(a)}->{len(b)} tokens; heuristic for .{ext or 'noext'})"
