"""Mutation classification: ``AST_REFACTOR`` (behaviour kept) vs ``INTENT_EVOLUTION`` (behaviour changed).

Computed from the pre- and post-image, never taken on the agent's word; :func:`classify` returns the class and a
short evidence string (names of functions / node kinds, never file contents or literal values).

Python (``ast``): both sides are parsed, normalised by :mod:`orchestrator.classify.python` (docstrings, type hints,
import order, module constants, extract/inline function and variable, scope-aware consistent renames — see that
module) and compared; equal → refactor, else evolution with evidence (new/removed functions or classes, branch
count change, changed literals, or the functions whose bodies differ). New text that does not parse → evolution.

JavaScript / TypeScript: tree-sitter, :mod:`orchestrator.classify.js`. YAML / JSON / TOML: parsed and compared as
data, Markdown: rendered-content rule, both in :mod:`orchestrator.classify.data`.

Shell (tree-sitter-bash, if importable): leaf tokens outside ``comment`` nodes are compared, with quoting that
cannot change a word's value, ``$a``/``${a}``, backticks/``$()`` and ``;``/newline normalised; equal → refactor.

Anything else (generic, documented heuristic): a regex tokenizer (strings, numbers, identifiers, operators) with
comments removed for the comment syntaxes implied by the file extension; equal token streams (so whitespace,
indentation, line wrapping or comment-only changes) → refactor; anything else → evolution.
The rules, with the decisions they embody, are stated in docs/ledger.md §3.

File-level operations: create and delete are evolution; a rename with identical content is a refactor.
"""

from __future__ import annotations

import ast
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
_DATA_EXT = ("yaml", "yml", "json", "toml")


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

    ``hunks`` (from :func:`orchestrator.core.diffing.diff_hunks`) lets the classifier look only at the changed region
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
    ext = _ext(low)
    if ext in ("js", "jsx", "mjs", "cjs", "ts", "mts", "cts", "tsx"):
        from orchestrator.classify.js import classify_js
        got = classify_js(path, old, new)
        if got is not None:
            return got
    elif ext in _DATA_EXT:
        from orchestrator.classify.data import classify_data
        got = classify_data(ext, old, new)
        if got is not None:
            return got
    elif ext in ("md", "markdown"):
        from orchestrator.classify.data import classify_markdown
        return classify_markdown(old, new)
    if hunks:
        old, new = _span(old, new, hunks)
    if low.endswith(_SH_EXT) or (not _ext(low) and re.match(r"#!.*\b(ba)?sh\b", old)):
        got = _classify_bash(old, new)
        if got is not None:
            return got
    return classify_generic(path, old, new)


def _span(old: str, new: str, hunks: list) -> tuple[str, str]:
    """The old and new text of the changed region (first hunk to last hunk), for the token heuristics."""
    from orchestrator.core.diffing import split_lines
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
    from orchestrator.core.diffing import _common_prefix
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
    if cls == AST_REFACTOR:
        renamed = _renamed_keyword_params(ra, rb, fixed, outside)
        if renamed:
            cls, ev = INTENT_EVOLUTION, "python: parameter(s) renamed but passed by keyword elsewhere: " + \
                ", ".join(renamed[:5])
    first = old.count("\n", 0, s) + 1
    return cls, ev + f" [region lines {first}-{first + rb.count(chr(10)) - 1}]"


def _renamed_keyword_params(ra: str, rb: str, fixed: frozenset[str], outside: str) -> list[str]:
    """Parameters of region functions that other code calls, renamed in the region while the rest of the file still
    passes them by keyword (``f(size=2)``): the region alone would call that a consistent rename."""
    def params(src: str) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for node in ast.walk(ast.parse(src)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in fixed:
                a = node.args
                out[node.name] = [x.arg for x in a.posonlyargs + a.args + a.kwonlyargs]
        return out
    try:
        pa, pb = params(ra), params(rb)
    except (SyntaxError, ValueError):
        return []
    hits = []
    for fn, names in pa.items():
        new_names = pb.get(fn, [])
        for i, n in enumerate(names):
            if (i >= len(new_names) or new_names[i] != n) and re.search(rf"\b{re.escape(n)}\s*=(?!=)", outside):
                hits.append(f"{fn}({n}=)")
    return hits


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
    # Normalise in place (the trees are ours); evolution evidence comes from fresh parses.
    from orchestrator.classify import python as classify_py
    n_old = classify_py.normalise(t_old, fixed)
    n_new = classify_py.normalise(t_new, fixed)
    if classify_py.tree_key(t_old) != classify_py.tree_key(t_new):
        return INTENT_EVOLUTION, "python: " + _evolution_evidence(ast.parse(old), ast.parse(new))
    notes: list[str] = []
    for kind in ("docstrings", "type hints", "imports"):
        if kind in n_old or kind in n_new:
            notes.append(f"{kind} only")
    for kind, verb in (("constants", "constant"), ("functions", "function"), ("variables", "variable")):
        a, b = list(n_old.get(kind, ())), list(n_new.get(kind, ()))
        ext = sorted(set(b) - set(a)) if len(b) > len(a) else []
        inl = sorted(set(a) - set(b)) if len(a) > len(b) else []
        if ext:
            notes.append(f"extracted {verb}(s): " + ", ".join(ext[:5]))
        if inl:
            notes.append(f"inlined {verb}(s): " + ", ".join(inl[:5]))
    inv_new = {v: k for k, v in _label_map(n_new).items()}
    pairs = [f"{k}->{inv_new[v]}" for k, v in _label_map(n_old).items() if inv_new.get(v, k) != k]
    if pairs:
        notes.append("consistent rename(s): " + ", ".join(pairs[:5]) + (" …" if len(pairs) > 5 else ""))
    return AST_REFACTOR, "python: " + ("; ".join(notes) or "equivalent AST")


def _label_map(notes: dict) -> dict[str, str]:
    return dict(notes.get("labels", {}))


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
                t = n.type
                if t == "comment":
                    continue
                lit = _sh_literal(n, data)
                if lit is not None:
                    out.append(lit)
                elif n.child_count == 0:
                    if t in (";", "program"):
                        continue  # `a; b` and `a<newline>b` are the same list; an empty program has no tokens
                    if t in ("`", "$(") or (t == ")" and n.parent is not None
                                            and n.parent.type == "command_substitution"):
                        out.append(("subst", b""))  # `cmd` and $(cmd) are the same substitution
                    else:
                        out.append((t, data[n.start_byte:n.end_byte]))
                else:
                    stack.extend(reversed(n.children))
            return out

        if leaves(old) == leaves(new):
            return AST_REFACTOR, "bash (tree-sitter): whitespace/comment/quoting-only change"
        return INTENT_EVOLUTION, "bash (tree-sitter): token change"
    except Exception:  # a grammar/ABI mismatch must not break recording: fall back to the generic heuristic
        return None


_SH_PLAIN = re.compile(rb"[A-Za-z0-9_./:=@%+,-]+")


def _sh_literal(n, data: bytes) -> tuple[str, bytes] | None:
    """A shell word whose value does not depend on its quoting: ``a``, ``'a'``, ``"a"`` -> ("lit", b"a");
    ``$a`` / ``${a}`` -> ("var", b"a"). Anything with globbing, expansions or escapes keeps its exact tokens."""
    t = n.type
    text = data[n.start_byte:n.end_byte]
    if t in ("word", "number") and _SH_PLAIN.fullmatch(text):
        return "lit", text
    if t == "raw_string" and len(text) >= 2 and b"\\" not in text:
        return "lit", text[1:-1]
    if t == "string" and all(c.type in ('"', "string_content") for c in n.children):
        inner = text[1:-1]
        if b"\\" not in inner:
            return "lit", inner
    if t == "simple_expansion" or (t == "expansion" and n.named_child_count == 1
                                    and n.named_children[0].type == "variable_name"):
        names = [c for c in n.named_children if c.type in ("variable_name", "special_variable_name")]
        if len(names) == 1 and n.named_child_count == 1:
            return "var", data[names[0].start_byte:names[0].end_byte]
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
