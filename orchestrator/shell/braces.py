"""Bash brace expansion of one command word, as bash does it before the command runs.

``touch src/{a,../X}`` is ``touch src/a ../X`` to bash, and ``cp x src/{a,b}`` is ``cp x src/a src/b`` (the last
word, the copy's destination, is ``src/b``). The shell analyzer (:mod:`orchestrator.shell.words`) expands every
word of a command with :func:`expand` before the program rules read the argument list, so scope and protection judge the
paths bash will really use, not the brace text.

Only unquoted ``{``, ``,``, ``}`` and ``..`` are syntax (``'{a,b}'``, ``"{a,b}"`` and ``\\{a,b}`` stay literal);
``${...}``, ``$(...)`` and other expansions are opaque: their text is kept, and the words they end up in are
marked dynamic (the analyzer then treats those targets as unresolved). Forms, as bash 5:

- alternatives ``pre{a,b,c}post`` (empty alternatives allowed: ``a{,.bak}``), nested ``{a,{b,c}}``;
- sequences ``{1..3}``, ``{3..1}``, ``{01..10}`` (zero-padded), ``{1..10..2}``, ``{a..e}``;
- a ``{`` without a matching ``}`` or without a top-level ``,`` (and not a sequence) is an ordinary character:
  ``{a}``, ``{}`` and ``x{`` stay as they are.

Bounded: a word that would expand to more than :data:`MAX_WORDS` words (``{1..100000}``, ``{a,b}`` repeated) is not
expanded; :func:`expand` returns it as one dynamic word, so a target the analyzer cannot enumerate stays
"unresolved" rather than silently shortened. Stdlib only, no import cost beyond this module.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["MAX_WORDS", "TooMany", "expand", "expand_marked", "marked"]

#: a word expanding to more words than this is not expanded (returned as one dynamic word)
MAX_WORDS = 256

# how a character of a word was written: plain syntax, quoted (or escaped), or produced by an expansion
_PLAIN, _QUOTED, _DYN = 0, 1, 2

Marked = list[tuple[str, int]]


class TooMany(ValueError):
    """The word expands to more than :data:`MAX_WORDS` words."""


def marked(node: Any, text: Callable[[Any], str]) -> Marked:
    """The characters of a tree-sitter-bash word node after quote removal, each tagged plain/quoted/dynamic.

    ``text(node)`` returns a node's original source text.
    """
    out: Marked = []
    _mark(node, text, out)
    return out


def _mark(node: Any, text: Callable[[Any], str], out: Marked) -> None:
    t = node.type
    raw = text(node)
    if t == "word" or (not node.is_named and t not in ("$",)):
        i, n = 0, len(raw)
        while i < n:
            c = raw[i]
            if c == "\\" and i + 1 < n:
                out.append((raw[i + 1], _QUOTED))
                i += 2
                continue
            out.append((c, _PLAIN))
            i += 1
    elif t == "raw_string":
        out.extend((c, _QUOTED) for c in raw[1:-1])
    elif t == "ansi_c_string":
        body = raw[2:-1]
        try:
            body = body.encode("latin-1", "backslashreplace").decode("unicode_escape")
        except Exception:  # noqa: BLE001 — keep the raw body, as the analyzer's own word reader does
            pass
        out.extend((c, _QUOTED) for c in body)
    elif t in ("string", "translated_string"):
        inner = node
        if t == "translated_string" and node.named_child_count:
            inner = node.named_children[0]
        for c in inner.named_children:
            if c.type == "string_content":
                body = text(c)
                j, m = 0, len(body)
                while j < m:  # inside "...", a backslash escapes only $ ` " \ and newline
                    if body[j] == "\\" and j + 1 < m and body[j + 1] in '$`"\\\n':
                        out.append((body[j + 1], _QUOTED))
                        j += 2
                        continue
                    out.append((body[j], _QUOTED))
                    j += 1
            else:
                out.extend((ch, _DYN) for ch in text(c))
    elif t == "concatenation":
        for c in node.children:
            _mark(c, text, out)
    elif t in ("brace_expression", "number"):
        out.extend((c, _PLAIN) for c in raw)
    else:  # $x, ${x}, $(...), `...`, <(...), $((...)), anything else: opaque, and its value is not known
        out.extend((c, _DYN) for c in raw)


def expand_marked(word: Marked, limit: int = MAX_WORDS) -> list[Marked]:
    """All words ``word`` brace-expands to, in bash's order. Raises :class:`TooMany` past ``limit``."""
    found = _find(word)
    if found is None:
        return [word]
    start, end, alternatives = found
    pre, post = word[:start], word[end + 1:]
    tails = expand_marked(post, limit)  # the postscript may hold further expressions: {a,b}{c,d}
    out: list[Marked] = []
    for alt in alternatives:
        for mid in expand_marked(alt, limit):
            for tail in tails:
                out.append(pre + mid + tail)
                if len(out) > limit:
                    raise TooMany(f"more than {limit} words")
    return out


def _find(word: Marked) -> tuple[int, int, list[Marked]] | None:
    """The first brace expression of ``word``: (index of ``{``, index of its ``}``, the alternatives)."""
    n = len(word)
    i = 0
    while i < n:
        if word[i] != ("{", _PLAIN) or (i > 0 and word[i - 1] == ("$", _PLAIN)):
            i += 1
            continue
        depth = 0
        commas: list[int] = []
        j = i + 1
        close = -1
        while j < n:
            c, kind = word[j]
            if kind == _PLAIN:
                if c == "{":
                    depth += 1
                elif c == "}":
                    if depth == 0:
                        close = j
                        break
                    depth -= 1
                elif c == "," and depth == 0:
                    commas.append(j)
            j += 1
        if close < 0:
            i += 1  # no matching brace: this `{` is an ordinary character; bash looks further on
            continue
        if commas:
            bounds = [i, *commas, close]
            return i, close, [word[a + 1:b] for a, b in zip(bounds, bounds[1:])]
        seq = _sequence(word[i + 1:close])
        if seq is not None:
            return i, close, [[(s, _QUOTED)] for s in seq]
        i += 1  # `{a}`, `{}`: literal; a later `{` may still start an expression
    return None


def _sequence(body: Marked) -> list[str] | None:
    """``x..y[..step]`` of integers or single letters, or None when ``body`` is not a sequence."""
    if any(kind != _PLAIN for _c, kind in body):
        return None
    parts = "".join(c for c, _k in body).split("..")
    if len(parts) not in (2, 3):
        return None
    step_text = parts[2] if len(parts) == 3 else "1"
    if not _is_int(step_text):
        return None
    step = abs(int(step_text)) or 1
    a, b = parts[0], parts[1]
    if _is_int(a) and _is_int(b):
        lo, hi = int(a), int(b)
        count = abs(hi - lo) // step + 1
        if count > MAX_WORDS:
            raise TooMany(f"sequence of {count} words")
        width = max(len(a), len(b)) if _padded(a) or _padded(b) else 0
        values = range(lo, hi + 1, step) if hi >= lo else range(lo, hi - 1, -step)
        return [str(v).zfill(width) if v >= 0 else "-" + str(-v).zfill(width - 1) for v in values]
    if len(a) == 1 and len(b) == 1 and a.isascii() and b.isascii() and a.isalpha() and b.isalpha():
        lo, hi = ord(a), ord(b)
        values = range(lo, hi + 1, step) if hi >= lo else range(lo, hi - 1, -step)
        return [chr(v) for v in values]
    return None


def _is_int(s: str) -> bool:
    body = s[1:] if s[:1] in "+-" else s
    return body.isdigit() and body.isascii()


def _padded(s: str) -> bool:
    body = s[1:] if s[:1] in "+-" else s
    return len(body) > 1 and body.startswith("0")


def expand(node: Any, text: Callable[[Any], str]) -> list[tuple[str, bool, bool]] | None:
    """The words a command-word node brace-expands to, as ``(text, dynamic, glob)``; None if it has no brace
    expression (the caller keeps its own reading of the word).

    ``dynamic``: the word holds a parameter, command or arithmetic expansion; ``glob``: an unquoted ``*``, ``?``
    or ``[`` remains (pathname expansion comes after brace expansion). A word with too many expansions comes back
    as one dynamic word.
    """
    word = marked(node, text)
    if not any(c == "{" and kind == _PLAIN for c, kind in word):
        return None
    try:
        words = expand_marked(word)
    except TooMany:
        return [("".join(c for c, _k in word), True, False)]
    if len(words) == 1 and words[0] is word:
        return None
    # an empty word left by an expansion (`{a,}`, `{,}`) is removed, as bash removes unquoted empty words
    return [("".join(c for c, _k in w), any(k == _DYN for _c, k in w),
             any(k == _PLAIN and c in "*?[" for c, k in w)) for w in words if w]
