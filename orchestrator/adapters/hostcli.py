"""``orch doctor``'s look at an agent CLI itself: is it on PATH, and is it the version orchestrator verified?

An agent's hook or plugin protocol is a private contract that moves between releases (Qwen Code ignores
``updatedInput`` in PreToolUse, Cline kills a plugin hook after 3 s…): the setup modules name the version each
adapter was verified with (by the end-to-end tests against the real binary, tests/e2e/package.json), and a
different installed version is a warning — its payloads may have changed, and an adapter refuses a payload it
cannot read (:mod:`orchestrator.adapters.payload`), so the risk is refused calls, not ungoverned ones.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
from typing import Any, Mapping

#: seconds ``<cli> --version`` may take (a Node CLI starts in about a second)
VERSION_TIMEOUT = 20.0
_VERSION = re.compile(r"\b(\d+\.\d+\.\d+)\b")


def version_of(binary: str, env: Mapping[str, str] | None = None) -> tuple[str | None, str]:
    """(the version ``binary --version`` prints, where it was found) — (None, why) when it is not on PATH or does
    not answer."""
    env = dict(os.environ if env is None else env)
    path = shutil.which(binary, path=env.get("PATH"))
    if path is None:
        return None, f"`{binary}` is not on PATH"
    try:
        proc = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=VERSION_TIMEOUT,
                              env=env, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, f"{path} --version failed ({exc})"
    found = _VERSION.search(proc.stdout) or _VERSION.search(proc.stderr)
    if found is None:
        return None, f"{path} --version printed no version"
    return found.group(1), path


def version_finding(check: str, label: str, binary: str, verified: str,
                    env: Mapping[str, str] | None = None) -> Any:
    """The ``<agent>.version`` finding: ok for the verified version, a warning for another one, info when the
    CLI is not installed on this machine (a teammate's may be)."""
    from orchestrator.core.findings import Finding

    version, where = version_of(binary, env)
    if version is None:
        return Finding(check, "info", f"{label}: {where}; orchestrator's adapter was verified with {verified}")
    if version == verified:
        return Finding(check, "ok", f"{label} {version} ({where}) is the version orchestrator's adapter was "
                       "verified with")
    return Finding(check, "warn", f"{label} {version} ({where}) is not the version orchestrator's adapter was "
                   f"verified with ({verified}): a changed hook format is refused call by call (never let through), "
                   "but calls may be refused", f"use {label} {verified}, or an orchestrator release verified "
                   f"with {version}")


__all__ = ["VERSION_TIMEOUT", "version_finding", "version_of"]
