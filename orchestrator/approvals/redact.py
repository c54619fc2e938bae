"""Redacting secret-looking values out of text that leaves the machine (pushes, webhooks).

What a push may carry is the team's choice (policy ``approval.notify.content``); whatever it carries goes through
:func:`redact` first: values of secret-named options and variables (``--password X``, ``API_KEY=…``,
``Authorization: Bearer …``), credentials in URLs, well-known token shapes (GitHub, Slack, AWS, Google, OpenAI /
Anthropic keys, JWTs, PEM blocks) and long high-entropy words become ``[redacted]``. Over-redaction is the accepted
failure: a person opens the console for the exact text.
"""

from __future__ import annotations

import math
import re
from collections import Counter

MASK = "[redacted]"
_NAME = r"(?:pass(?:word|wd|phrase)?|pwd|secret|token|api[_-]?key|apikey|access[_-]?key|private[_-]?key|" \
        r"client[_-]?secret|auth(?:orization)?|credentials?|session[_-]?key|cookie|signature)"
_RULES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)", re.S), MASK),
    # scheme://user:password@host
    (re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://[^\s:/@]+:)[^\s@/]+@"), r"\1" + MASK + "@"),
    # Authorization: Bearer xyz / Basic xyz (header text in curl -H)
    (re.compile(r"(?i)\b(authorization\s*:\s*(?:bearer|basic|token)?\s*)[^\s'\"]+"), r"\1" + MASK),
    # --password X, --token=X, -p<secret> is left alone (ambiguous), NAME=value, NAME: value
    (re.compile(r"(?i)(--?[\w-]*" + _NAME + r"[\w-]*)(=|\s+)(\"[^\"]*\"|'[^']*'|[^\s'\"]+)"), r"\1\2" + MASK),
    (re.compile(r"(?i)\b([\w.-]*" + _NAME + r"[\w.-]*)(\s*[=:]\s*)(\"[^\"]*\"|'[^']*'|[^\s'\"&;|]+)"),
     r"\1\2" + MASK),
    # well-known token shapes
    (re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|glpat-[A-Za-z0-9_-]{20,}|"
                r"xox[abprs]-[A-Za-z0-9-]{10,}|AKIA[0-9A-Z]{16}|ASIA[0-9A-Z]{16}|AIza[0-9A-Za-z_-]{30,}|"
                r"sk-(?:ant-|proj-)?[A-Za-z0-9_-]{20,}|npm_[A-Za-z0-9]{30,}|"
                r"eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,})"), MASK),
)
_WORD = re.compile(r"[A-Za-z0-9+/_=-]{32,}")


def _entropy(word: str) -> float:
    counts = Counter(word)
    return -sum(c / len(word) * math.log2(c / len(word)) for c in counts.values())


def _high_entropy(m: re.Match[str]) -> str:
    word = m.group(0)
    # hex digests (commits, sha256) are ids people need to see; a long mixed-alphabet word is likely a key
    if re.fullmatch(r"[0-9a-f]+", word) or _entropy(word) < 4.0:
        return word
    return MASK


def redact(text: str) -> str:
    """``text`` with secret-looking values replaced by ``[redacted]``."""
    for pattern, repl in _RULES:
        text = pattern.sub(repl, text)
    return _WORD.sub(_high_entropy, text)


__all__ = ["MASK", "redact"]
