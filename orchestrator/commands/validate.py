"""``orch validate``: check the governance files (intents, policy, ``.intentignore``); errors as ``file:line: …``.

Exit 0 when every file loads and validates, 1 otherwise. Each file is validated from its text (no compiled cache),
so what this prints is what a fresh hook process would see.
"""

from __future__ import annotations

import argparse
import os

from orchestrator.commands import add_workspace_arg, workspace_of
from orchestrator.core.output import json_out, out


def register(parser: argparse.ArgumentParser) -> None:
    add_workspace_arg(parser)
    parser.add_argument("--json", action="store_true", help="print the results as JSON")


def validate(ws: object) -> list[dict[str, object]]:
    """One result per governance file: ``{file, ok, line, message, hint}``."""
    from orchestrator.config import confcache
    from orchestrator.config import intents
    from orchestrator.config import policy
    from orchestrator.core.errors import OrchestratorError
    from orchestrator.config import intentignore
    from orchestrator.config.intentstore import ARCHIVE_NAME, check_archive

    results: list[dict[str, object]] = []
    for load, path in ((intents.load, ws.intents_file), (policy.load, ws.policy_file),  # type: ignore[attr-defined]
                       (intentignore.load, ws.intentignore_file),  # type: ignore[attr-defined]
                       (lambda _path: check_archive(ws), ws.orch_dir / ARCHIVE_NAME)):  # type: ignore[attr-defined]
        rel = os.path.relpath(path, ws.root)  # type: ignore[attr-defined]
        confcache.forget([str(path)])
        try:
            load(path)  # no cache_dir: validated from the file's text
        except OrchestratorError as exc:
            line = getattr(exc, "line", None)
            message = exc.message
            prefix = f"{getattr(exc, 'file', None)}" + (f":{line}" if line else "") + ": "
            if message.startswith(prefix):
                message = message[len(prefix):]  # the location is printed as file:line in front
            results.append({"file": rel, "ok": False, "line": line, "message": message, "hint": exc.hint or ""})
        else:
            results.append({"file": rel, "ok": True, "line": None, "message": "valid" if os.path.exists(path)
                            else "absent (defaults apply)", "hint": ""})
    return results


def run(args: argparse.Namespace) -> int:
    results = validate(workspace_of(args))
    if args.json:
        json_out(results)
    else:
        for r in results:
            if r["ok"]:
                out(f"{r['file']}: {r['message']}")
            else:
                where = f"{r['file']}:{r['line']}" if r["line"] else str(r["file"])
                out(f"{where}: error: {r['message']}")
                if r["hint"]:
                    out(f"{where}: hint: {r['hint']}")
    return 0 if all(r["ok"] for r in results) else 1
