"""Structural classification of data files (YAML / JSON / TOML) and documented rules for Markdown.

Data files (see docs/ledger.md §3): both sides are *parsed* and the values compared — mappings as unordered
dictionaries, sequences in order. So reordering keys inside a mapping, re-indenting, switching between flow and
block style, quoting style and comments are a refactor (the value every reader sees is identical), while moving a
key into another mapping, changing a value or the order of a list is evolution. YAML anchors/aliases are expanded
(``yaml.safe_load_all``: every document of a multi-document file); JSON via ``json``; TOML via ``tomllib``
(Python >= 3.11). A new side that does not parse is evolution; if neither parses, or a parser is missing, the caller
falls back to the token heuristic.

Markdown (a documented rule: what the *rendered* document says is its behaviour): HTML comments, re-wrapping a
paragraph, trailing whitespace, the bullet character (``*`` / ``+`` / ``-``), ordered-list numbering, emphasis
markers (``_a_`` vs ``*a*``), setext vs ATX headings (``Title`` + ``===`` vs ``# Title``), the fence style of a
code block and the padding of table cells are a refactor; any change of words, link targets, heading levels, list
nesting or code-block content is evolution.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["classify_data", "classify_markdown", "DATA_EXT", "MD_EXT"]

DATA_EXT = ("yaml", "yml", "json", "toml")
MD_EXT = ("md", "markdown")
#: Above this size (either side) a data file is not parsed whole: the token heuristic on the region is used.
MAX_PARSE = 1 << 20

_MISSING = object()


def _load(ext: str, text: str) -> Any:
    """Parsed value, ``_MISSING`` when no parser is available; raises ValueError when the text does not parse."""
    if ext in ("yaml", "yml"):
        import yaml
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        try:
            return list(yaml.load_all(text, Loader=loader))
        except yaml.YAMLError as e:
            raise ValueError(str(e)) from None
    if ext == "json":
        return json.loads(text)
    if ext == "toml":
        try:
            import tomllib
        except ImportError:  # Python 3.10
            return _MISSING
        try:
            return tomllib.loads(text)
        except tomllib.TOMLDecodeError as e:
            raise ValueError(str(e)) from None
    return _MISSING


def classify_data(ext: str, old: str, new: str) -> tuple[str, str] | None:
    """Structural comparison for YAML / JSON / TOML; None = use the token heuristic."""
    if len(old) > MAX_PARSE or len(new) > MAX_PARSE:
        return None
    try:
        a = _load(ext, old)
    except ValueError:
        a = None
        a_bad = True
    else:
        a_bad = False
    try:
        b = _load(ext, new)
    except ValueError:
        if a_bad:
            return None
        return "INTENT_EVOLUTION", f"{ext}: new content does not parse"
    if a is _MISSING or b is _MISSING:
        return None
    if a_bad:
        return "INTENT_EVOLUTION", f"{ext}: old content did not parse, new content does"
    if _same(a, b):
        return "AST_REFACTOR", f"{ext} (parsed): same data (key order, formatting, comments only)"
    return "INTENT_EVOLUTION", f"{ext} (parsed): " + _where(a, b)


def _same(a: Any, b: Any) -> bool:
    # bool is an int in Python (True == 1): compare types too, so `on: 1` -> `on: true` is a change
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b


def _where(a: Any, b: Any, path: str = "") -> str:
    """Where the first difference is (a key path, never a value)."""
    if isinstance(a, dict) and isinstance(b, dict):
        added = [k for k in b if k not in a]
        removed = [k for k in a if k not in b]
        if added or removed:
            bits = []
            if added:
                bits.append("added key(s) " + ", ".join(str(k) for k in added[:5]))
            if removed:
                bits.append("removed key(s) " + ", ".join(str(k) for k in removed[:5]))
            return f"at {path or '/'}: " + "; ".join(bits)
        for k in a:
            if not _same(a[k], b[k]):
                return _where(a[k], b[k], f"{path}/{k}")
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b)):
            if not _same(x, y):
                return _where(x, y, f"{path}[{i}]")
    return f"value changed at {path or '/'}"


# ---------------------------------------------------------------------------------------------------- Markdown

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)\s*$")
_BULLET = re.compile(r"^(\s*)[*+-](\s+)")
_ORDERED = re.compile(r"^(\s*)\d+[.)](\s+)")
_ATX = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")


def _md_blocks(text: str) -> list[tuple[str, str]]:
    """Normalised blocks: ("code", info + raw content) or ("text", whitespace-collapsed normalised text)."""
    text = re.sub(r"<!--.*?-->", "", text, flags=re.S)
    lines = text.split("\n")
    blocks: list[tuple[str, str]] = []
    para: list[str] = []

    def flush() -> None:
        if para:
            items: list[str] = []
            for ln in para:
                m = _BULLET.match(ln) or _ORDERED.match(ln)
                if m:
                    marker = "-" if _BULLET.match(ln) else "1."
                    depth = len(m.group(1).expandtabs(4)) // 2
                    items.append(f"\n{'  ' * depth}{marker} " + ln[m.end():].strip())
                elif ln.lstrip().startswith("|"):  # a table row: cell padding is formatting
                    row = re.sub(r"\s*\|\s*", "|", ln.strip())
                    if re.fullmatch(r"[|:\- ]+", row):
                        row = re.sub(r"-+", "-", row)
                    items.append("\n" + row)
                else:
                    items.append(" " + ln.strip())
            body = re.sub(r"[ \t]+", " ", "".join(items)).strip()
            body = re.sub(r"__(.+?)__", r"**\1**", body)
            body = re.sub(r"(?<![\w*])_(\S(?:.*?\S)?)_(?![\w*])", r"*\1*", body)
            blocks.append(("text", body))
            para.clear()

    i = 0
    while i < len(lines):
        ln = lines[i]
        m = _FENCE.match(ln)
        if m:
            flush()
            fence = m.group(1)
            info = ln.strip()[len(fence):].strip()
            j = i + 1
            body = []
            while j < len(lines) and not lines[j].strip().startswith(fence[0] * len(fence)):
                body.append(lines[j])
                j += 1
            blocks.append(("code", info + "\n" + "\n".join(body)))
            i = j + 1
            continue
        if not ln.strip():
            flush()
            i += 1
            continue
        h = _ATX.match(ln)
        if h:
            flush()
            blocks.append(("h" + str(len(h.group(1))), re.sub(r"\s+", " ", h.group(2))))
            i += 1
            continue
        if para and _SETEXT.match(ln) and not _BULLET.match(ln):
            level = "h1" if ln.strip()[0] == "=" else "h2"
            title = re.sub(r"\s+", " ", " ".join(p.strip() for p in para))
            para.clear()
            blocks.append((level, title))
            i += 1
            continue
        para.append(ln.rstrip())
        i += 1
    flush()
    return blocks


def classify_markdown(old: str, new: str) -> tuple[str, str]:
    """The Markdown rule of the module docstring."""
    a, b = _md_blocks(old), _md_blocks(new)
    if a == b:
        return "AST_REFACTOR", "markdown: same rendered content (wrapping, markers, comments only)"
    kinds = sorted({k for k, _ in a} ^ {k for k, _ in b}) or sorted({k for (k, v) in a if (k, v) not in b})
    return "INTENT_EVOLUTION", f"markdown: content changed ({', '.join(kinds[:3]) or 'text'} block(s))"
