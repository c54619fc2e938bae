"""Secret read protection: refuse reading, searching, copying or sending secret files.

Runs for *every* call, before the read fast path of :meth:`Governor.pre` (reads need no intent, so the other
pre-hooks never see them). What it checks:

- read tools (``Read``, ``read_file``, ``NotebookRead``...) and unknown tools: each target path, and where it is a
  symlink the file it points at;
- search tools (``Grep``, ``search_file_content``, ``search_files``, ``read_many_files``): a search whose path
  *is* a secret, whose file filter (``glob``/``include``/``file_pattern``) targets secrets, or whose directory
  holds a home credential location (``~``, ``~/.ssh``). A search over an ordinary project directory passes:
  Claude Code's Grep (ripgrep) skips hidden and git-ignored files, which is where env files and keys live; a
  kernel sandbox closes the rest (documented in docs/security.md). Listing names (``Glob``, ``LS``) passes;
- shell commands: the analyzer's ``ShellAnalysis.secrets`` hits (``cat .env``, ``curl -d @.env``, ``cp .env
  src/``...), tagged ``secret-read`` / ``exfiltration`` in ``ShellAnalysis.risks``.

The cost on the hot path is one cached matcher lookup and one or two regex matches per path.
"""

from __future__ import annotations

import os
import stat
from typing import TYPE_CHECKING, Any

from orchestrator.secrets import patterns as _secrets
from orchestrator.core.models import Kind, Verdict

if TYPE_CHECKING:
    from orchestrator.core.models import ToolCall

NAME = "secrets"

#: search tools: input keys naming where they search, and keys naming a file filter (a glob)
_SEARCH_PATH_KEYS = ("path", "absolute_path", "dir_path", "directory")
_SEARCH_FILTER_KEYS = ("glob", "include", "file_pattern", "pattern_glob")
_SEARCH_TOOLS = frozenset({"Grep", "search_file_content", "search_files", "grep_search", "read_many_files",
                           "grep"})

HINT = ("secret files (env files, private keys, cloud and SSH credentials) are not readable by agents: use the "
        "template (e.g. .env.example) or ask a person for the value you need; a person can exempt a path with "
        "`secrets.allow` in .orchestration/policy.yaml")


def _deny(path: str, pattern: str, how: str, tool: str) -> Verdict:
    if how == "send":
        message = f"{tool} would send secret file {path} to another host (matches {pattern!r})"
        kind = "exfiltration"
    elif how == "copy":
        message = f"{tool} would copy secret file {path} somewhere readable (matches {pattern!r})"
        kind = "secret-read"
    else:
        message = f"{path} is a secret file (matches {pattern!r}): agents may not read it"
        kind = "secret-read"
    return Verdict.deny("secret-read", NAME, message, path=path, pattern=pattern, risk=kind, hint=HINT)


def _resolved_hit(m: _secrets.SecretMatcher, raw: str, root: str, cwd: str) -> tuple[str, str] | None:
    """(path, pattern) if ``raw`` or, through a symlink, the file it names is a secret."""
    pattern = m.match(raw, root, cwd)
    if pattern is not None:
        return raw, pattern
    full = m.absolute(raw, root, cwd)
    # one lstat: a link named innocently may point at a secret. Only a link *as the file itself* is followed here
    # (realpath of every component costs ~20 us per read); a linked directory still meets the name patterns, and
    # the kernel sandbox covers the rest (docs/security.md).
    try:
        if not stat.S_ISLNK(os.lstat(full).st_mode):
            return None
        real = os.path.realpath(full)
    except (OSError, ValueError):
        return None
    if real != full:
        pattern = m.match(real, root)
        if pattern is not None:
            return real, pattern
    return None


def check_call(call: ToolCall, policy: Any, root: str) -> Verdict | None:
    """The refusal for ``call`` if it reads or sends a secret, else None. ``call`` must be prepared."""
    kind = call.kind
    sh = call.shell
    if kind is Kind.EXEC:
        if sh is not None and "object-read" in sh.risks and not sh.secrets and _secrets.enabled(policy):
            _tracked_secret_read(call, _secrets.for_policy(policy), root)
        if sh is None or not sh.secrets:
            return None
        path, pattern, how = next((h for h in sh.secrets if h[2] == "send"), sh.secrets[0])
        return _deny(path, pattern, how, call.tool if not call.command else f"`{_short(call.command)}`")
    if kind is Kind.READ or kind is Kind.UNKNOWN:
        if not call.paths or not _secrets.enabled(policy):
            return None
        m = _secrets.for_policy(policy)
        cwd = call.cwd or root
        for raw in call.paths:
            if isinstance(raw, str) and raw:
                hit = _resolved_hit(m, raw, root, cwd)
                if hit is not None:
                    return _deny(hit[0], hit[1], "read", call.tool)
        return None
    if kind is Kind.META and call.tool in _SEARCH_TOOLS or (kind is Kind.META and call.tool.endswith("__grep")):
        if not _secrets.enabled(policy):
            return None
        return _search(call, _secrets.for_policy(policy), root)
    return None


#: the start of the reason a tracked secret adds (pre/approval.py shows it to the person)
TRACKED_REASON = "prints the contents of git objects, and this repository tracks secret files"


def _tracked_secret_read(call: ToolCall, m: _secrets.SecretMatcher, root: str) -> None:
    """A git command that prints object contents (tagged ``object-read``) in a repository that tracks a secret file:
    the kernel cannot refuse that object, so a person decides. The call's analysis is raised to mutating with the
    ``secret-read`` risk, so the governed path (gatekeeper, approval) runs; elsewhere nothing changes."""
    import dataclasses

    from orchestrator.secrets.tracked import tracked

    found = tracked(root, m)
    if found == []:
        return
    sh = call.shell
    assert sh is not None
    named = (", ".join(found[:5]) + (f" and {len(found) - 5} more" if len(found) > 5 else "")) if found else \
        "(git could not list them)"
    reason = f"{TRACKED_REASON} ({named}): the kernel cannot tell their objects from others"
    call.shell = dataclasses.replace(sh, kind="mutating" if sh.kind == "read_only" else sh.kind,
                                     risks=sh.risks | {"secret-read"}, reasons=(reason, *sh.reasons))


def _search(call: ToolCall, m: _secrets.SecretMatcher, root: str) -> Verdict | None:
    data = call.input or {}
    cwd = call.cwd or root
    where: list[str] = []
    for key in _SEARCH_PATH_KEYS:
        v = data.get(key)
        if isinstance(v, str) and v:
            where.append(v)
    paths = data.get("paths")
    if isinstance(paths, list):
        where.extend(p for p in paths if isinstance(p, str) and p)
    for raw in where:
        hit = _resolved_hit(m, raw, root, cwd)
        if hit is not None:
            return _deny(hit[0], hit[1], "read", call.tool)
        holder = m.holds_secrets(raw, root, cwd)
        if holder is not None:
            return _deny(raw, holder, "read", call.tool)
    filters: list[str] = []
    for key in _SEARCH_FILTER_KEYS:
        v = data.get(key)
        if isinstance(v, str) and v:
            filters.extend(_expand_braces(v))
        elif isinstance(v, list):
            filters.extend(x for x in v if isinstance(x, str))
    for flt in filters:
        # a filter like ".env*" or "**/*.pem": judge the file names it selects by the filter's own last part
        last = flt.rstrip("/").rsplit("/", 1)[-1]
        probe = last.replace("**", "x").replace("*", "").replace("?", "x") or last
        for candidate in (last, probe):
            pattern = m.match(candidate, root, cwd)
            if pattern is not None:
                return _deny(flt, pattern, "read", call.tool)
    return None


def _expand_braces(glob: str) -> list[str]:
    """``*.{env,pem}`` -> ``*.env``, ``*.pem`` (one level, as ripgrep's globs do)."""
    start = glob.find("{")
    end = glob.find("}", start + 1)
    if start < 0 or end < 0:
        return [glob]
    return [glob[:start] + alt + glob[end + 1:] for alt in glob[start + 1:end].split(",")]


def _short(command: str, limit: int = 80) -> str:
    command = " ".join(command.split())
    return command if len(command) <= limit else command[: limit - 1] + "…"


def check(ctx: Any) -> Verdict | None:
    """The pre-hook interface (``Context`` in, verdict out), for hosts that run it through ``HOOKS``."""
    return check_call(ctx.call, ctx.policy, ctx.root)


def check_secrets(ws: Any) -> Any:
    """``orch doctor``: read protection is on, and no secret file is committed to git (agents cannot read it, but
    anyone with a clone can)."""
    import subprocess

    from orchestrator.config import policy as _policy
    from orchestrator.core.errors import OrchestratorError
    from orchestrator.core.findings import Finding

    try:
        pol = _policy.load(ws.policy_file)
    except OrchestratorError:
        return  # config.policy reports it
    if not _secrets.enabled(pol):
        yield Finding("secrets", "warn", "read protection is off (secrets.enabled: false): agents may read, copy and "
                      "send .env files, private keys and credentials", "set secrets.enabled: true in "
                      ".orchestration/policy.yaml")
        return
    m = _secrets.for_policy(pol)
    root = str(ws.root)
    from orchestrator.secrets.tracked import tracked

    now = tracked(root, m) or []
    # a secret deleted since is still in the history: `git log -p --all` prints it (this scan is doctor-only)
    history = sorted(set(_history_paths(root, subprocess)) - set(now))
    history = [p for p in history if m.match(p, root) is not None]
    if now or history:
        shown = ", ".join(now[:5]) + (f" and {len(now) - 5} more" if len(now) > 5 else "")
        old = ", ".join(history[:5]) + (f" and {len(history) - 5} more" if len(history) > 5 else "")
        what = "; ".join(x for x in (f"tracked now: {shown}" if now else "",
                                     f"in the history only: {old}" if history else "") if x)
        yield Finding("secrets", "warn", f"secret files are committed to git ({what}): agents cannot read the files, "
                      "but git commands that print objects (git show, log -p, grep REV, diff…) ask a person while "
                      "one is tracked, a secret only in the history is not covered, and everyone with a clone has "
                      "them", "rotate the secret, stop tracking it (git rm --cached FILE), then remove it from the "
                      "history (git filter-repo --invert-paths --path FILE, or BFG) and force-push; if it holds no secret, list it under secrets.allow in "
                      ".orchestration/policy.yaml")
    else:
        yield Finding("secrets", "ok", f"read protection on ({len(m.patterns)} patterns); no secret file is "
                      "committed")


def _history_paths(root: str, subprocess: Any) -> list[str]:
    """Every path ever added in the repository's history (``orch doctor`` only: one ``git log`` over all refs)."""
    try:
        proc = subprocess.run(["git", "log", "--all", "--diff-filter=A", "--name-only", "--format=", "-z"],
                              cwd=root, capture_output=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return []
    if proc.returncode != 0:
        return []
    return [p.strip("\n") for p in proc.stdout.decode("utf-8", "replace").split("\0") if p.strip("\n")]
