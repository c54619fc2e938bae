"""The egress plan of a sandboxed command: the allow and deny entries the proxy applies to its connections.

The engine writes it when it plans a command (:func:`write`), content-addressed beside the launcher's spec files
(``.orchestration/run/sandbox/<id>.egress``, a governance directory no agent can write); the launcher names the
id when it registers the command's network namespace with the proxy, and the proxy reads the file (:func:`load`),
checking that its bytes still hash to the id. So what a command may reach is fixed when the hook decides, from
the policy, the intent and the person's configuration as they were then: nothing the command does while it runs
(a remote URL changed in ``.git/config`` during a git-mode command, a ``PIP_INDEX_URL`` it exports) widens it.
"""

from __future__ import annotations

import hashlib
import json
import os

SUFFIX = ".egress"
FORMAT = 1


def encode(allow: list[tuple[str, str]], deny: list[tuple[str, str]]) -> bytes:
    """The file's bytes: JSON, keys sorted, one canonical form (so equal plans share one id)."""
    return json.dumps({"format": FORMAT, "allow": [list(p) for p in allow], "deny": [list(p) for p in deny]},
                      sort_keys=True, separators=(",", ":")).encode()


def plan_id(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


def write(directory: str, allow: list[tuple[str, str]], deny: list[tuple[str, str]]) -> str:
    """Write the plan (once: the name is its hash) and return its id."""
    data = encode(allow, deny)
    ident = plan_id(data)
    path = os.path.join(directory, ident + SUFFIX)
    if not os.path.exists(path):
        os.makedirs(directory, exist_ok=True)
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)  # atomic: the proxy never reads half a plan
    return ident


def valid_id(ident: str) -> bool:
    return len(ident) == 16 and all(c in "0123456789abcdef" for c in ident)


def load(directory: str, ident: str) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(allow, deny) of plan ``ident``; raises ValueError (unknown id, a file that does not hash to its name)."""
    if not valid_id(ident):
        raise ValueError(f"malformed egress plan id {ident!r}")
    try:
        with open(os.path.join(directory, ident + SUFFIX), "rb") as fh:
            data = fh.read(1 << 20)
    except OSError as exc:
        raise ValueError(f"no egress plan {ident}: {exc.strerror}") from None
    if plan_id(data) != ident:
        raise ValueError(f"egress plan {ident} does not match its id")
    obj = json.loads(data)
    if not isinstance(obj, dict) or obj.get("format") != FORMAT:
        raise ValueError(f"egress plan {ident}: unknown format")

    def pairs(key: str) -> list[tuple[str, str]]:
        return [(str(p[0]), str(p[1])) for p in obj.get(key, []) if isinstance(p, list) and len(p) == 2]

    return pairs("allow"), pairs("deny")
