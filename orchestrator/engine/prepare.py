"""Call preparation: classify a tool call and canonicalise its targets before any pre-hook sees it.

Shell commands are analysed (:func:`orchestrator.shell.analyze`, with the policy's secret patterns), the policy's
tool kinds applied, deletes marked destructive where the policy says so, and every target resolved to a canonical
workspace-relative path (:func:`orchestrator.core.paths.resolve`). A command's writes through directory entries it
makes itself are judged here too (:func:`_check_new_entries`). The :class:`~orchestrator.engine.pipeline.Governor` calls
:func:`prepare` first in ``pre`` and ``post``; it holds no state of its own.
"""

from __future__ import annotations

import os
import posixpath
import stat
from typing import TYPE_CHECKING, Any

from orchestrator.core.models import Kind, ToolCall
from orchestrator.core.paths import PathError, resolve, resolve_dir
from orchestrator.secrets.patterns import SecretMatcher as _SecretMatcher
from orchestrator.secrets.patterns import enabled as _secrets_on

if TYPE_CHECKING:
    from orchestrator.config.policy import PolicyView as Policy


def prepare(call: ToolCall, pol: Policy, root: str, *, ignore_case: bool = False) -> dict[str, Any] | None:
    """Classify ``call`` (shell analysis, the policy's tool kinds, destructive deletes) and canonicalise its targets
    against workspace ``root``. Idempotent.

    Returns each resolved target's ``lstat`` from the resolution (for the pre-image: valid only now, so it is
    handed on rather than stored in the call), or None if the call was already prepared. Raises
    :class:`~orchestrator.core.paths.PathError` for a target that cannot be governed."""
    if call.prepared:
        return None
    if call.tool in pol.tools:
        call.kind = Kind(pol.tools[call.tool])
    if call.kind is Kind.EXEC:
        from orchestrator.secrets.patterns import for_policy
        from orchestrator.shell import analyze

        # the policy's secret patterns (an empty matcher when read protection is off)
        sh = analyze(call.command or "", for_policy(pol) if _secrets_on(pol) else _NO_SECRETS)
        call.shell = sh
        call.paths = [*sh.writes, *sh.deletes]
        if sh.kind == "destructive":
            call.destructive = True
            call.reasons.extend(sh.reasons or ("destructive command",))
        elif sh.deletes and pol.delete_is_destructive:
            # the same rule as a delete tool: removing files waits for a person, whether the
            # agent uses a Delete tool or `rm` (the analyzer only says *what* is deleted)
            call.destructive = True
            call.reasons.extend(r for r in sh.reasons if "delete" in r or "rm" in r)
            if not call.reasons:
                call.reasons.append("deletes " + ", ".join(sh.deletes))
    elif call.kind is Kind.DELETE and pol.delete_is_destructive:
        call.destructive = True
        call.reasons.append("deletes a file")
    cwd = call.cwd if call.cwd else root
    if cwd != root:
        cwd = resolve_dir(cwd, root)
    sh = call.shell
    if sh is not None and sh.entries:
        _check_new_entries(call, sh, root, cwd, ignore_case)
    lstats: dict[str, Any] = {}
    for raw in call.paths:
        try:
            rel, st = resolve(raw, root, cwd, ignore_case=ignore_case)
        except PathError as exc:
            # reading outside the workspace is not governed; only mutations must stay inside
            if call.kind in (Kind.READ, Kind.META):
                continue
            if call.kind is Kind.EXEC and exc.type == "path-outside-workspace" and \
                    _outside_writable(raw, cwd, pol, root):
                continue  # /tmp/x: outside the workspace, in a path the policy declares writable (sandbox)
            raise
        lstats.setdefault(rel, st)
    call.resolved = list(lstats)
    call.prepared = True
    return lstats

def _check_new_entries(call: ToolCall, sh: Any, root: str, cwd: str, ignore_case: bool) -> None:
    """Judge a command's writes against the directory entries it makes itself.

    The paths are checked before the command runs: in ``ln -s .orchestration/policy.yaml x && echo … > x``
    (or ``cp -a``/``mv``/``rsync -a`` of a tree holding a link, ``git checkout``…) ``x`` is not a link yet, so a
    write or delete through an entry the same command makes cannot be judged: the analysis becomes
    ``unknown`` (a person decides). Compared on canonical paths, so no spelling hides it; a ``..`` after such an
    entry is not simplified safely, so it counts too. A copy or move into an existing directory writes
    DIR/<name>: those targets are added to the call, so scope, protection and the hard-link rule see them.
    Records the targets that are only ever *replaced* (mv, ln -f, install, rsync, renamed over rather than
    written through), which selfguard's hard-link rule need not refuse.
    """
    import dataclasses

    def canon(raw: str) -> str | None:
        try:
            return resolve(raw, root, cwd, ignore_case=ignore_case)[0]
        except PathError:
            return None

    log = [canon(w) for w in sh.write_log]
    deleted = [d for d in (canon(x) for x in sh.deletes) if d is not None]
    replacing = {e.write_index for e in sh.entries if e.op in _REPLACING}  # indices into log
    replaced = {w for i, w in enumerate(log) if w is not None and i in replacing}
    written_through = {w for i, w in enumerate(log) if w is not None and i not in replacing}
    extra: list[str] = []
    through = None
    for made in sh.entries:
        index, op, sources = made.write_index, made.op, made.sources
        dest = "." if index < 0 else (log[index] if index < len(log) else None)
        if dest is None:
            continue
        created = [dest]
        full = os.path.join(root, dest)
        into_dir = index >= 0 and os.path.isdir(full) and not os.path.islink(full)
        if into_dir and made.named and sources:
            created = [posixpath.basename(src) if dest == "." else f"{dest}/{posixpath.basename(src)}"
                       for src in sources]
            extra.extend(created)
            (replaced if op in _REPLACING else written_through).update(created)
        elif into_dir and op in ("copy", "cplink") and _holds_links(full):
            # `cp -r a/. dir/`, `cp -T`: the files written are not named; a copy writes through a link it meets
            through = dest
            break
        if not (op == "ln" or (op in _MAY_LINK and any(_holds_links(os.path.join(cwd, src))
                                                       for src in sources or ("",)))):
            continue
        # a later mv / ln -f / install *onto* the entry replaces it rather than writing through it
        later = [w for j, w in enumerate(log) if j != index and w is not None
                 and not (j in replacing and w == dest)] + deleted
        if sh.dotdot and later:
            through = f"{dest} (and a path with '..', which cannot be resolved before the command runs)"
            break
        for entry in created:
            if any(entry == "." or w == entry or w.startswith(entry + "/") for w in later):
                through = entry
                break
        if through:
            break
    if through is not None:
        call.shell = dataclasses.replace(sh, kind="unknown", reasons=(
            f"writes through {through}, which the same command makes (a link, or a copy or move that may be "
            "one): where that write lands cannot be checked before the command runs",) + sh.reasons)
    call.paths = [*call.paths, *(os.path.join(root, e) for e in extra)]
    call.replaced = sorted(replaced - written_through)

def is_mutating(call: ToolCall, policy: Policy) -> bool:
    """Whether the pipeline must govern this (prepared) call."""
    if call.kind is Kind.EXEC:
        return call.shell is None or call.shell.kind != "read_only"
    if call.kind is Kind.UNKNOWN:
        return policy.unknown_tools != "read"
    return call.kind.mutating



#: the matcher of a policy with read protection off (``secrets.enabled: false``): matches nothing
_NO_SECRETS = _SecretMatcher((), ())
#: ops of ShellAnalysis.entries that rename or unlink over an existing entry instead of writing through it
_REPLACING = frozenset({"ln", "mv", "replace", "cplink-replace"})
#: ops whose new entry is a link if a source holds one
_MAY_LINK = frozenset({"mv", "cplink", "cplink-replace"})
#: a source tree larger than this is assumed to hold links (scanning it would cost more than asking a person)
_SCAN_LIMIT = 5000


def _holds_links(path: str) -> bool:
    """True if moving or link-preserving-copying ``path`` may make a link: it is a symlink, a file with other
    hard links, a tree holding either, something that does not exist yet (made earlier in the same command), or
    a tree too big to look through."""
    try:
        st = os.lstat(path)
    except OSError:
        return True
    if stat.S_ISLNK(st.st_mode) or (stat.S_ISREG(st.st_mode) and st.st_nlink > 1):
        return True
    if not stat.S_ISDIR(st.st_mode):
        return False
    seen, stack = 0, [path]
    while stack:
        try:
            with os.scandir(stack.pop()) as it:
                for entry in it:
                    seen += 1
                    if seen > _SCAN_LIMIT or entry.is_symlink():
                        return True
                    if entry.is_dir(follow_symlinks=False):
                        stack.append(entry.path)
                    elif entry.is_file(follow_symlinks=False) and entry.stat(follow_symlinks=False).st_nlink > 1:
                        return True
        except OSError:
            return True
    return False


def _outside_writable(raw: str, cwd: str, pol: Any, root_dir: str | None = None) -> bool:
    """True if ``raw`` (a shell write target outside the workspace) lies beneath an absolute ``sandbox.writable``
    entry of the policy (``/tmp``): such writes are not the workspace's business, the policy declared them fine."""
    sb = getattr(pol, "sandbox", None)
    if sb is None or not sb.enabled:
        return False
    if not isinstance(raw, str) or "\x00" in raw:
        return False
    path = os.path.expanduser(raw)
    path = os.path.realpath(os.path.join(cwd, path))
    for entry in sb.writable:
        base = os.path.expanduser(entry)
        if not os.path.isabs(base):
            continue
        base = os.path.realpath(base)
        if root_dir is not None and (root_dir == base or root_dir.startswith(base.rstrip("/") + "/")):
            continue  # the workspace lies beneath it (a checkout in /tmp): `../x` would escape the workspace
        if path == base or path.startswith(base.rstrip("/") + "/"):
            return True
    return False


__all__ = ["is_mutating", "prepare"]
