"""Shell words after quote removal (:class:`W`), brace expansion and GNU-style option splitting for rules."""
from __future__ import annotations

import re

from orchestrator.shell.parse import _LazyRe, _t

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only (strings at runtime): keep `typing` off the import path
    from typing import Any, Iterable


class W:
    """One shell word after quote removal. dyn: contains an expansion/substitution; glob: unquoted glob."""

    __slots__ = ("text", "dyn", "glob", "node")

    def __init__(self, text: str, dyn: bool = False, glob: bool = False, node: Any = None) -> None:
        self.text = text
        self.dyn = dyn
        self.glob = glob
        self.node = node

    def __repr__(self) -> str:
        return f"W({self.text!r}, dyn={self.dyn}, glob={self.glob})"

    @property
    def literal(self) -> bool:
        return not self.dyn and not self.glob
_GLOB_CHARS = _LazyRe(r"[*?\[]")


def _expand_braces(words: list[W]) -> list[W]:
    """The words after bash brace expansion (``src/{a,../X}`` is two words; see :mod:`orchestrator.shell.braces`)."""
    if not any("{" in w.text and w.node is not None for w in words):
        return words
    from orchestrator.shell import braces

    out: list[W] = []
    for w in words:
        many = braces.expand(w.node, _t) if "{" in w.text and w.node is not None else None
        out.extend([w] if many is None else [W(text, dyn, glob) for text, dyn, glob in many])
    return out


_ESCAPE_RE = _LazyRe(r"\\(.)", re.S)


def _word_parts(node: Any) -> tuple[str, bool, bool]:
    """(text after quote removal, has expansion, has unquoted glob) for one word-like node."""
    t = node.type
    raw = _t(node)
    if t == "word":
        glob = bool(_GLOB_CHARS.search(raw.replace("\\*", "").replace("\\?", "").replace("\\[", "")))
        brace = "{" in raw and "}" in raw and "," in raw
        return _ESCAPE_RE.sub(r"\1", raw), False, glob or brace
    if t == "number":
        return raw, False, False
    if t == "raw_string":
        return raw[1:-1], False, False
    if t == "ansi_c_string":
        body = raw[2:-1]
        try:
            body = body.encode("latin-1", "backslashreplace").decode("unicode_escape")
        except Exception:
            pass
        return body, False, False
    if t in ("string", "translated_string"):
        parts: list[str] = []
        dyn = False
        inner = node
        if t == "translated_string" and node.named_child_count:
            inner = node.named_children[0]
        for c in inner.named_children:
            if c.type == "string_content":
                parts.append(re.sub(r"\\([$`\"\\\n])", r"\1", _t(c)))
            else:
                dyn = True
                parts.append(_t(c))
        if not inner.named_children and len(raw) >= 2:
            return "", False, False
        return "".join(parts), dyn, False
    if t == "concatenation":
        out: list[str] = []
        dyn = glob = False
        for c in node.children:
            s, d, g = _word_parts(c)
            out.append(s)
            dyn |= d
            glob |= g
        return "".join(out), dyn, glob
    if t in ("simple_expansion", "expansion", "command_substitution", "process_substitution",
             "arithmetic_expansion"):
        return raw, True, False
    if t == "brace_expression":
        return raw, False, True
    if not node.is_named:
        return raw, False, bool(_GLOB_CHARS.search(raw))
    return raw, True, False


# ----------------------------------------------------------------------------------------------------------
# option parsing helpers


def _split_opt_words(args: list[W], valued: Iterable[str] = (), stop_at_first_pos: bool = False
                     ) -> tuple[dict[str, list[W]], list[W]]:
    """Split GNU-style options from positionals, keeping each option value as a word (so a value with ``$x``
    stays dynamic). ``--name=value`` is split; short clusters are split into single letters.

    ``valued`` names options taking a value ("-o", "--output"). Returns ({opt: [values]}, positionals).
    """
    valued = set(valued)
    opts: dict[str, list[W]] = {}
    pos: list[W] = []
    i = 0
    n = len(args)
    while i < n:
        a = args[i]
        s = a.text
        if s == "--" and not a.dyn:
            pos.extend(args[i + 1:])
            break
        if s.startswith("--") and len(s) > 2 and not a.dyn:
            name, eq, val = s.partition("=")
            if eq:
                opts.setdefault(name, []).append(W(val, a.dyn, a.glob))
            elif name in valued and i + 1 < n:
                i += 1
                opts.setdefault(name, []).append(args[i])
            else:
                opts.setdefault(name, []).append(W(""))
        elif s.startswith("-") and len(s) > 1 and not a.dyn:
            for j in range(1, len(s)):
                o = "-" + s[j]
                if o in valued:
                    if s[j + 1:]:
                        opts.setdefault(o, []).append(W(s[j + 1:], a.dyn, a.glob))
                    elif i + 1 < n:
                        i += 1
                        opts.setdefault(o, []).append(args[i])
                    else:
                        opts.setdefault(o, []).append(W(""))
                    break
                opts.setdefault(o, []).append(W(""))
        else:
            pos.append(a)
            if stop_at_first_pos:
                pos.extend(args[i + 1:])
                break
        i += 1
    return opts, pos


def _split_opts(args: list[W], valued: Iterable[str] = (), stop_at_first_pos: bool = False
                ) -> tuple[dict[str, list[str]], list[W]]:
    """:func:`_split_opt_words` with option values as plain text (what most rules compare)."""
    opts, pos = _split_opt_words(args, valued, stop_at_first_pos)
    return {k: [w.text for w in v] for k, v in opts.items()}, pos


def _has(opts: dict[str, list[str]], *names: str) -> bool:
    return any(n in opts for n in names)


def _prog_name(w: W) -> str:
    s = w.text
    if "/" in s:
        s = s.rstrip("/").rsplit("/", 1)[-1]
    return s


def _shq(s: str) -> str:
    import shlex
    return shlex.quote(s)
