"""All user-facing output goes through here, so tests can capture it and adapters can silence it."""

from __future__ import annotations

import json
import sys
from typing import Any


def out(text: str = "") -> None:
    """Print a line to stdout."""
    sys.stdout.write(text + "\n")


def shown(text: str) -> str:
    """``text`` for one line of a terminal: every character that is not printable (a newline, a tab, an escape
    sequence's ESC, a bidi override) escaped, so text an agent wrote cannot move the cursor, erase or hide what a
    person reads. ``--json`` output keeps it verbatim."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)


def err(text: str) -> None:
    """Print a line to stderr."""
    sys.stderr.write(text + "\n")


def json_out(obj: Any, *, indent: int | None = 2) -> None:
    """Print ``obj`` as JSON to stdout."""
    sys.stdout.write(json.dumps(obj, indent=indent, sort_keys=False, default=str) + "\n")
