"""The egress plan of a sandboxed command: the allow and deny entries the proxy applies to its connections.

The engine writes it when it plans a command (:func:`write`), content-addressed beside the launcher's spec files
(``.orchestration/run/sandbox/<id>.egress``, a governance directory no agent can write); the launcher names the
file when it registers the command's network namespace with the proxy, and the proxy reads it (:func:`load`),
checking where it lies and that its bytes still hash to its name. So what a command may reach is fixed when the hook decides, from
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
    """Write the plan (once: the name is its hash) and return its path."""
    data = encode(allow, deny)
    ident = plan_id(data)
    path = os.path.join(directory, ident + SUFFIX)
    if not os.path.exists(path):
        os.makedirs(directory, exist_ok=True)
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)  # atomic: the proxy never reads half a plan
    return path


def valid_id(ident: str) -> bool:
    return len(ident) == 16 and all(c in "0123456789abcdef" for c in ident)


def load(path: str) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(allow, deny) of the plan file ``path``; raises ValueError: a path that is not a plan in a workspace's
    ``.orchestration/run/sandbox/`` (the only place the engine writes them, and no agent can), a file of another
    user, or one whose bytes do not hash to its name."""
    name = os.path.basename(path)
    ident = name[:-len(SUFFIX)]
    if not os.path.isabs(path) or not name.endswith(SUFFIX) or not valid_id(ident):
        raise ValueError(f"not an egress plan: {path[:300]!r}")
    real = os.path.realpath(os.path.dirname(path))
    if not real.endswith(os.sep + os.path.join(".orchestration", "run", "sandbox")):
        raise ValueError(f"an egress plan outside a workspace's .orchestration/run/sandbox: {path[:300]!r}")
    try:
        fd = os.open(os.path.join(real, name), os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        with os.fdopen(fd, "rb") as fh:
            if os.fstat(fh.fileno()).st_uid != os.getuid():
                raise ValueError(f"egress plan {path[:300]!r} belongs to another user")
            data = fh.read(1 << 20)
    except OSError as exc:
        raise ValueError(f"no egress plan {path[:300]!r}: {exc.strerror}") from None
    if plan_id(data) != ident:
        raise ValueError(f"egress plan {path[:300]!r} does not match its name")
    obj = json.loads(data)
    if not isinstance(obj, dict) or obj.get("format") != FORMAT:
        raise ValueError(f"egress plan {path[:300]!r}: unknown format")

    def pairs(key: str) -> list[tuple[str, str]]:
        return [(str(p[0]), str(p[1])) for p in obj.get(key, []) if isinstance(p, list) and len(p) == 2]

    return pairs("allow"), pairs("deny")
