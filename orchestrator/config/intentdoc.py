"""Edit the text of an intents file (``active_intents.yaml``, ``archived_intents.yaml``) the way a person would.

People write these files by hand: comments, quoting, flow lists wrapped over lines, key order. A YAML dump would
throw all of that away, so edits are *splices* into the original text, located through the node marks of
``yaml.compose`` (the same parser the loader uses): a changed value replaces exactly the characters of the old
value, a new key is one new line after the item's last key, a new intent is appended after the last one in the
sequence's own indentation, a removed intent takes its lines (and the comment block directly above it, at its
indentation) with it. Everything else stays byte for byte as it was.

Every edit is checked: the edited text is parsed again and must give exactly the data the edit meant (the other
intents untouched, the changed fields equal to the new values). Where a splice cannot give that (an item written
as one flow mapping, an odd layout), the one intent is rendered again in block style — its own comments are lost,
nobody else's — and checked the same way; if even that fails, :class:`EditError` is raised and nothing is written.

Scalars are written in the style the file already uses for its intents' values (double-quoted, single-quoted or
plain where a plain scalar reads back as the same string), lists in the style of the list they replace (flow lists
wrap at :data:`WIDTH` columns, aligned after the ``[``), new lists as block lists.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable
from typing import Any

from orchestrator.core.errors import OrchestratorError

#: a flow list is wrapped before this column
WIDTH = 118
#: the order of keys in a new intent (other keys follow in the order given)
KEY_ORDER = ("id", "name", "status", "owner", "description", "owned_scope", "constraints", "acceptance_criteria")


class EditError(OrchestratorError):
    """An edit of an intents file could not be made safely (nothing was written)."""

    type = "intents-edit"


def _yaml() -> Any:
    import yaml

    return yaml


def _loader() -> Any:
    yaml = _yaml()
    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _parse(text: str) -> tuple[Any, Any]:
    """The node tree and the data of ``text`` from one parse (the data is constructed from the nodes)."""
    loader = _loader()(text)
    try:
        node = loader.get_single_node()
        return node, loader.construct_document(node) if node is not None else None
    finally:
        loader.dispose()


def _content_end(node: Any) -> int:
    """Index just after the last character of ``node``'s own text (a block collection's end mark runs on to the
    next token, over blank lines and comments: those belong to whatever follows)."""
    yaml = _yaml()
    if isinstance(node, yaml.ScalarNode) or getattr(node, "flow_style", False):
        return int(node.end_mark.index)
    if isinstance(node, yaml.MappingNode):
        return _content_end(node.value[-1][1]) if node.value else int(node.end_mark.index)
    if isinstance(node, yaml.SequenceNode):
        return _content_end(node.value[-1]) if node.value else int(node.end_mark.index)
    return int(node.end_mark.index)


def _line_start(text: str, index: int) -> int:
    return text.rfind("\n", 0, index) + 1


def _line_end(text: str, index: int) -> int:
    """Index just after the newline ending the line that holds ``index`` (or the end of the text)."""
    nl = text.find("\n", index)
    return len(text) if nl < 0 else nl + 1


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


class IntentsDoc:
    """One intents file's text and its parse; each edit returns a new :class:`IntentsDoc`.

    ``key`` is the top-level key holding the list (``active_intents`` or ``archived_intents``).
    """

    def __init__(self, text: str, key: str = "active_intents") -> None:
        self.text = text
        self.key = key
        yaml = _yaml()
        self.root: Any = None
        self.data: Any = None
        try:
            if text.strip():
                self.root, self.data = _parse(text)
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f" (line {mark.line + 1})" if mark is not None else ""
            raise EditError(f"the file is not valid YAML{where}: fix it by hand first",
                            hint="`orch validate` shows the error") from None
        if self.root is not None and not isinstance(self.root, yaml.MappingNode):
            raise EditError(f"the file's top level is not a mapping with `{key}:`", hint="`orch validate`")

    # ------------------------------------------------------------------ reading
    def _seq(self) -> tuple[Any, Any]:
        """(key node, value node) of the top-level list; (None, None) when the key is absent."""
        if self.root is None:
            return None, None
        for k, v in self.root.value:
            if getattr(k, "value", None) == self.key:
                return k, v
        return None, None

    def items(self) -> list[Any]:
        """The intents' mapping nodes (non-mappings are left to the validator)."""
        yaml = _yaml()
        _, seq = self._seq()
        if not isinstance(seq, yaml.SequenceNode):
            return []
        return list(seq.value)

    def intents(self) -> list[dict[str, Any]]:
        """The parsed intents (raw YAML data, as the file holds them)."""
        raw = (self.data or {}).get(self.key) if isinstance(self.data, dict) else None
        return [i for i in raw if isinstance(i, dict)] if isinstance(raw, list) else []

    def ids(self) -> list[str]:
        return [str(i.get("id")) for i in self.intents() if i.get("id") is not None]

    def _find(self, intent_id: str) -> tuple[int, Any]:
        raw = (self.data or {}).get(self.key) if isinstance(self.data, dict) else None
        for n, node in enumerate(self.items()):
            item = raw[n] if isinstance(raw, list) and n < len(raw) else None
            if isinstance(item, dict) and item.get("id") is not None and str(item.get("id")) == intent_id:
                return n, node
        raise EditError(f"no intent {intent_id!r} in {self.key}", hint="`orch intents` lists them")

    # ------------------------------------------------------------------ style
    def _scalar_style(self) -> str:
        """The quoting the file's intents use most: '"', "'" or '' (plain)."""
        yaml = _yaml()
        styles: Counter[str] = Counter()
        for node in self.items():
            if isinstance(node, yaml.MappingNode):
                for _, v in node.value:
                    for s in (v.value if isinstance(v, yaml.SequenceNode) else [v]):
                        if isinstance(s, yaml.ScalarNode):
                            styles[s.style or ""] += 1
        return styles.most_common(1)[0][0] if styles else '"'

    def _block_lists(self) -> bool:
        """Whether the file writes its lists as block lists (the default for a new list)."""
        yaml = _yaml()
        block = flow = 0
        for node in self.items():
            if isinstance(node, yaml.MappingNode):
                for _, v in node.value:
                    if isinstance(v, yaml.SequenceNode) and v.value:
                        flow, block = (flow + 1, block) if v.flow_style else (flow, block + 1)
        return block >= flow

    def scalar(self, value: Any, style: str | None = None) -> str:
        """``value`` as a YAML scalar in the file's style (always one line)."""
        if value is None:
            return "null"
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, (int, float)):
            return json.dumps(value)
        text = str(value)
        style = self._scalar_style() if style is None else style
        one_line = text.isprintable()
        if style == "" and one_line and _plain_ok(text):
            return text
        if style == "'" and one_line:
            return "'" + text.replace("'", "''") + "'"
        return json.dumps(text, ensure_ascii=False)

    def _flow(self, values: Iterable[Any], column: int) -> str:
        """A flow list starting at ``column``, wrapped at :data:`WIDTH` with continuation lines after the ``[``."""
        parts = [self.scalar(v) for v in values]
        if not parts:
            return "[]"
        lines, cur, base = [], "[" + parts[0], column
        for p in parts[1:]:
            if base + len(cur) + 2 + len(p) + 1 > WIDTH:
                lines.append(cur + ",")
                cur, base = " " * (column + 1) + p, 0  # a continuation line holds its own indentation
            else:
                cur += ", " + p
        lines.append(cur + "]")
        return "\n".join(lines)

    def _block(self, values: list[Any], indent: int) -> str:
        """A block list whose ``-`` stand at ``indent`` (the first line without its indentation)."""
        if not values:
            return "[]"
        return ("\n" + " " * indent).join("- " + self.scalar(v) for v in values)

    def value_text(self, value: Any, *, column: int, indent: int, block: bool) -> str:
        """``value`` as the text after ``key: `` at ``column``; a block list goes on the next lines at ``indent``."""
        if isinstance(value, (list, tuple)):
            if block and value:
                return "\n" + " " * indent + self._block(list(value), indent)
            return self._flow(value, column)
        return self.scalar(value)

    # ------------------------------------------------------------------ edits
    def add(self, fields: dict[str, Any]) -> IntentsDoc:
        """Append a new intent (keys in :data:`KEY_ORDER`, then the rest)."""
        yaml = _yaml()
        ordered = _ordered(fields)
        key_node, seq = self._seq()
        text = self.text
        if isinstance(seq, yaml.SequenceNode) and seq.value and not seq.flow_style:
            last = seq.value[-1]
            dash = self._dash_column(last)
            body = self._render_item(ordered, dash, dash + 2)
            at = _line_end(text, _content_end(seq))
            prefix = "" if text[:at].endswith("\n") or not text else "\n"
            return self._checked(text[:at] + prefix + body + "\n" + text[at:], self.intents() + [fields])
        body = self._render_item(ordered, 2, 4)
        if key_node is None:
            sep = "" if not text or text.endswith("\n") else "\n"
            new = text + sep + f"{self.key}:\n" + body + "\n"
        elif isinstance(seq, yaml.SequenceNode) and seq.value:
            # a flow list of intents: written again as a block list (rare; its inner comments cannot exist)
            new = self._replace_value(key_node, seq, "\n" + self._render_items(self.intents() + [fields], 2))
            return self._checked(new, self.intents() + [fields])
        elif seq is None:
            new = text + f"{self.key}:\n" + body + "\n"
        else:
            # `key:` with nothing (null) or `key: []`
            new = self._replace_value(key_node, seq, "\n" + body)
        return self._checked(new, self.intents() + [fields])

    def update(self, intent_id: str, changes: dict[str, Any]) -> IntentsDoc:
        """Set fields of one intent (a value of None removes the key)."""
        index, node = self._find(intent_id)
        expected = [dict(i) for i in self.intents()]
        target = expected[index]
        for k, v in changes.items():
            if v is None:
                target.pop(k, None)
            else:
                target[k] = list(v) if isinstance(v, tuple) else v
        try:
            return self._checked(self._splice_update(node, changes), expected)
        except EditError:
            # the splice did not give the intended data: render this one intent again (block style)
            return self._checked(self._rerender(index, node, target), expected)

    def remove(self, intent_id: str) -> tuple[IntentsDoc, str, int]:
        """Remove one intent; returns the new document, the intent's text (its lines, with the comments above it
        at its indentation and those below it indented deeper) and the column of its ``-``."""
        index, node = self._find(intent_id)
        start, end, dash = self._item_span(node)
        expected = [i for n, i in enumerate(self.intents()) if n != index]
        removed = self.text[start:end]
        new = self.text[:start] + self.text[end:]
        if not expected:
            # `key:` left with nothing would read as null: an empty list says what it is
            key_node, _ = self._seq()
            line_end = _line_end(new, key_node.start_mark.index)
            new = new[:key_node.start_mark.index] + f"{self.key}: []\n" + new[line_end:]
        return self._checked(new, expected), removed, dash

    def append_text(self, item_text: str, dash: int, intent: dict[str, Any]) -> IntentsDoc:
        """Append an intent given as text (from :meth:`remove` of another file), re-indented to this list."""
        yaml = _yaml()
        key_node, seq = self._seq()
        joins = isinstance(seq, yaml.SequenceNode) and seq.value and not seq.flow_style
        if not joins and (key_node is None or (isinstance(seq, yaml.SequenceNode) and seq.value)):
            return self.add(intent)  # no list to put the text in (or a flow list of intents): written fresh
        shift = (self._dash_column(seq.value[-1]) if joins else 2) - dash
        lines = item_text.rstrip("\n").splitlines()
        if shift > 0:
            lines = [(" " * shift + ln) if ln.strip() else ln for ln in lines]
        elif shift < 0:
            lines = [ln[min(-shift, _indent(ln)):] for ln in lines]
        body = "\n".join(lines)
        if not joins:  # `key: []` or `key:`: the text becomes the list
            return self._checked(self._replace_value(key_node, seq, "\n" + body), self.intents() + [intent])
        at = _line_end(self.text, _content_end(seq))
        prefix = "" if self.text[:at].endswith("\n") else "\n"
        new = self.text[:at] + prefix + body + "\n" + self.text[at:]
        return self._checked(new, self.intents() + [intent])

    # ------------------------------------------------------------------ helpers
    def _dash_column(self, item: Any) -> int:
        """The column of the ``-`` that starts ``item`` (the last ``-`` before it on its line)."""
        line = self.text[_line_start(self.text, item.start_mark.index):item.start_mark.index]
        pos = line.rfind("-")
        return pos if pos >= 0 else max(0, item.start_mark.column - 2)

    def _item_span(self, node: Any) -> tuple[int, int, int]:
        """(start, end, dash column) of an item's lines, with its own comments (see :meth:`remove`)."""
        text = self.text
        dash = self._dash_column(node)
        start = _line_start(text, node.start_mark.index)
        end = _line_end(text, _content_end(node))
        # the comment block right above it, at its own indentation
        while start > 0:
            prev = _line_start(text, start - 1)
            line = text[prev:start].rstrip("\n")
            if line.lstrip().startswith("#") and _indent(line) == dash:
                start = prev
            else:
                break
        # comments right below it, indented deeper than its dash (they annotate its last keys)
        while end < len(text):
            line = text[end:_line_end(text, end)].rstrip("\n")
            if line.lstrip().startswith("#") and _indent(line) > dash:
                end = _line_end(text, end)
            else:
                break
        return start, end, dash

    def _render_item(self, fields: dict[str, Any], dash: int, key_col: int) -> str:
        block = self._block_lists()
        lines = []
        for n, (k, v) in enumerate(fields.items()):
            lead = " " * dash + "- " + " " * (key_col - dash - 2) if n == 0 else " " * key_col
            head = f"{lead}{k}: "
            lines.append(_joined(head, self.value_text(v, column=len(head), indent=key_col + 2, block=block)))
        return "\n".join(lines)

    def _render_items(self, intents: list[dict[str, Any]], dash: int) -> str:
        return "\n".join(self._render_item(_ordered(i), dash, dash + 2) for i in intents)

    def _replace_value(self, key_node: Any, value_node: Any, new_value: str) -> str:
        """``key: <value>`` with the value's own characters replaced (or, for a null value, set after the colon)."""
        return _apply(self.text, [self._value_span(key_node, value_node, new_value)])

    def _value_span(self, key_node: Any, value_node: Any, new_value: str) -> tuple[int, int, str]:
        """The splice (start, end, text) that replaces ``key``'s value by ``new_value``."""
        text = self.text
        yaml = _yaml()
        if isinstance(value_node, yaml.ScalarNode) and value_node.tag.endswith("null") and \
                value_node.start_mark.index == value_node.end_mark.index:
            at = text.find(":", key_node.end_mark.index) + 1
            return at, at, new_value if new_value.startswith("\n") else " " + new_value
        start, end = value_node.start_mark.index, _content_end(value_node)
        if new_value.startswith("\n"):
            # a block value after `key:`: drop the space or newline between the colon and the old value
            colon = text.rfind(":", key_node.end_mark.index, start)
            start = colon + 1 if colon >= 0 else start
        elif text[start - 1:start] == "\n" or text[key_node.end_mark.index:start].count("\n"):
            colon = text.rfind(":", key_node.end_mark.index, start)
            start = colon + 1 if colon >= 0 else start
            new_value = " " + new_value
        return start, end, new_value

    def _splice_update(self, node: Any, changes: dict[str, Any]) -> str:
        """Every change as a splice located in this one parse, applied from the end of the text backwards."""
        yaml = _yaml()
        if not isinstance(node, yaml.MappingNode) or node.flow_style or not node.value:
            raise EditError("a flow-style intent is rendered again")
        spans: list[tuple[int, int, str]] = []
        added: list[str] = []
        for key, value in changes.items():
            span = self._key_span(node, key, value)
            if span is not None:
                spans.append(span)
            elif value is not None:
                added.append(self._new_key(node, key, value))
        if added:
            # new keys: lines after the item's last key/value
            at = _line_end(self.text, _content_end(node))
            prefix = "" if self.text[:at].endswith("\n") else "\n"
            spans.append((at, at, prefix + "".join(line + "\n" for line in added)))
        return _apply(self.text, spans)

    def _key_span(self, node: Any, key: str, value: Any) -> tuple[int, int, str] | None:
        """The splice that sets (or, for None, removes) an existing ``key``; None when the item has no such key."""
        yaml = _yaml()
        text = self.text
        for k, v in node.value:
            if getattr(k, "value", None) != key:
                continue
            if value is None:  # remove the key's lines
                start = _line_start(text, k.start_mark.index)
                if text[start:k.start_mark.index].strip(" -"):
                    raise EditError("key shares its line")
                if text[start:k.start_mark.index].strip() == "-":
                    raise EditError("cannot remove the first key of an item by splicing")
                return start, _line_end(text, _content_end(v)), ""
            key_col = k.start_mark.column
            block_list = isinstance(v, yaml.SequenceNode) and not v.flow_style and bool(v.value)
            block = block_list or (isinstance(v, yaml.SequenceNode) and not v.value and self._block_lists())
            indent = v.value[0].start_mark.column - 2 if block_list else key_col + 2
            new_value = self.value_text(value, column=k.end_mark.column + 2, indent=indent, block=block)
            if isinstance(value, (list, tuple)) and value and block_list:
                # a block list replaced in place: from its first `-` to its last item's end
                return _line_start(text, v.value[0].start_mark.index), _content_end(v), new_value.lstrip("\n")
            return self._value_span(k, v, new_value)
        return None

    def _new_key(self, node: Any, key: str, value: Any) -> str:
        """``key: value`` as a new line (or block) at the item's key column."""
        key_col = node.value[0][0].start_mark.column
        head = " " * key_col + f"{key}: "
        return _joined(head, self.value_text(value, column=len(head), indent=key_col + 2, block=self._block_lists()))

    def _rerender(self, index: int, node: Any, target: dict[str, Any]) -> str:
        start, end, dash = self._item_span(node)
        # keep the comments above the item; only its own lines are rendered again
        own = _line_start(self.text, node.start_mark.index)
        return self.text[:own] + self._render_item(_ordered(target), dash, dash + 2) + "\n" + self.text[end:]

    def _checked(self, new_text: str, expected: list[dict[str, Any]]) -> IntentsDoc:
        """The edited document, if it parses to exactly ``expected``; else :class:`EditError`."""
        try:
            doc = IntentsDoc(new_text, self.key)
        except EditError:
            raise EditError("the edit would break the file's YAML; nothing was written",
                            hint="edit the file by hand, or report the layout that failed") from None
        if _normal(doc.intents()) != _normal(expected) or _rest(doc.data, self.key) != _rest(self.data, self.key):
            raise EditError("the edit would not give the intended content; nothing was written",
                            hint="edit the file by hand, or report the layout that failed")
        return doc


def _apply(text: str, spans: list[tuple[int, int, str]]) -> str:
    """``text`` with every (start, end, replacement) splice made; the spans must not overlap."""
    for start, end, new in sorted(spans, key=lambda s: (s[0], s[1]), reverse=True):
        text = text[:start] + new + text[end:]
    return text


def _joined(head: str, value: str) -> str:
    """``key: value``, or ``key:`` and a block value on the next lines (no trailing space)."""
    return head.rstrip() + value if value.startswith("\n") else head + value


def _ordered(fields: dict[str, Any]) -> dict[str, Any]:
    out = {k: fields[k] for k in KEY_ORDER if k in fields and fields[k] is not None}
    out.update({k: v for k, v in fields.items() if k not in out and v is not None})
    return out


def _normal(value: Any) -> Any:
    """Data compared after an edit: tuples as lists, scalar ids as text (the loader's view)."""
    return json.loads(json.dumps(value, default=str))


def _rest(data: Any, key: str) -> Any:
    return _normal({k: v for k, v in data.items() if k != key}) if isinstance(data, dict) else {}


_PLAIN_BAD = re.compile(r"^[\s\-?:,\[\]{}#&*!|>'\"%@`]|[:#]\s|\s#|:$|\s$")


def _plain_ok(text: str) -> bool:
    """A plain scalar is safe when it reads back as the same string."""
    if not text or _PLAIN_BAD.search(text):
        return False
    yaml = _yaml()
    try:
        return yaml.load(f"k: {text}\n", Loader=_loader()) == {"k": text}
    except yaml.YAMLError:
        return False
