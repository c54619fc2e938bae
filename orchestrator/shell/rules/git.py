"""The git rule: which subcommands are read-only, and options/configuration that make git run other code.
Where a writing subcommand writes is :mod:`.git_writes`."""
from __future__ import annotations

import re

from orchestrator.shell.words import W, _has, _split_opts
from orchestrator.shell.programs import _GIT_READ, _GIT_SAFE_CONFIG
from orchestrator.shell.rules.fs import _sources

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only (strings at runtime): keep `typing` off the import path
    from typing import Callable
    from orchestrator.shell.run import _Run


# ----------------------------------------------------------------------------------------------------------
# git

_GIT_TREE_WRITERS = frozenset("""checkout switch merge pull cherry-pick revert reset am rebase worktree read-tree
checkout-index restore""".split())


def _alias_value(run: _Run, value: str) -> None:
    """``git -c alias.p='push -f' p``: what the alias runs still needs a person when it would on its own (a force
    push, an upload); the kernel contains the rest (redteam2)."""
    inner = run.verdict(value[1:] if value.startswith("!") else "git " + value)
    if inner.kind == "destructive":
        run.flag("destructive", f"git alias: {inner.reasons[0] if inner.reasons else value}")
    if "upload" in inner.risks or "outside-world" in inner.risks:
        run.flag("mutating", f"git alias sends data elsewhere: {value[:60]}", "upload")


def _git_global_opts(run: _Run) -> tuple[int, bool] | None:
    """Skip git's global options: the index of the subcommand and whether -c set an editor; None when an
    option decided the command (configuration that runs code, --exec-path, --version)."""
    args = run.args
    i = 0
    editor_cfg = False  # -c core.editor/sequence.editor: only matters for subcommands that open an editor
    while i < len(args):
        s = args[i].text
        if s in ("-c", "--config-env") and i + 1 < len(args):
            key, _, val = args[i + 1].text.partition("=")
            key = key.lower()
            if not args[i + 1].dyn and s == "-c" and key in ("core.editor", "sequence.editor"):
                editor_cfg = True
            elif not args[i + 1].dyn and s == "-c" and (key == "core.pager" or key.startswith("pager.")) \
                    and val and run.verdict(val).kind == "read_only":
                pass  # the pager command is itself read-only (less, cat, delta...)
            elif args[i + 1].dyn or not key.startswith(_GIT_SAFE_CONFIG):
                # core.pager, alias.*, diff.external, filter.*, core.sshCommand ... run commands
                if key.startswith("alias.") and val:
                    _alias_value(run, val)
                run.flag("unknown", f"git -c {key}: configuration that may run commands", risk="hijack")
                return None
        if s.startswith("--exec-path="):
            run.flag("unknown", "git --exec-path changes which programs git runs", risk="hijack")
            return None
        if s in ("-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path", "--config-env",
                 "--super-prefix", "--list-cmds", "--attr-source"):
            i += 2
            continue
        if s.startswith("-"):
            if s in ("--version", "--help", "-h", "--html-path", "--man-path", "--info-path") and i == len(args) - 1:
                return None
            i += 1
            continue
        break
    return i, editor_cfg


#: git subcommands that talk to another repository (a URL or a configured remote)
_GIT_NETWORK = frozenset("push fetch pull ls-remote clone remote submodule archive send-pack fetch-pack".split())
_GIT_WHERE_KEY = re.compile(r"(?i)^(remote\..+\.(url|pushurl)|url\..+\.(insteadof|pushinsteadof))=?")
#: variables that change where git sends data or which program carries it
_GIT_WHERE_ENV = ("GIT_SSH", "GIT_SSH_COMMAND", "GIT_PROXY_COMMAND")


def _git_network(run: _Run, sub: str, rest: list[W]) -> None:
    """A remote location the command chose itself makes a network subcommand an upload (a person decides):
    ``GIT_CONFIG_*``/``GIT_SSH_COMMAND`` assigned in the command (``-c remote.x.url=URL``: :func:`_git`), or a
    URL the command computed (``git ls-remote "https://h/$(cat f)"`` sends it)."""
    from orchestrator.shell.rules.net import _computed

    why = ""
    env = sorted(v for v in run.wk.assigned if v.startswith("GIT_CONFIG") or v in _GIT_WHERE_ENV)
    if env:
        why = f"{env[0]} assigned in the command changes where git {sub} sends data"
    if any(_computed(run, a) for a in rest):
        why = f"git {sub} to a location the command computed"
    if why:
        run.flag("mutating", why, "upload")


def _git(run: _Run) -> None:
    if any(a.text in ("-c", "--config-env") and _GIT_WHERE_KEY.match(b.text) for a, b in zip(run.args, run.args[1:])):
        # checked before the global options end the analysis (-c of a non-safe key is a contained hijack, and a
        # push to the URL it names would leave unasked)
        run.flag("mutating", "git -c names where git sends data", "upload")
    head = _git_global_opts(run)
    if head is None:
        return
    i, editor_cfg = head
    args = run.args
    if i >= len(args):
        return
    sub = args[i].text
    rest = args[i + 1:]
    r = [a.text for a in rest]
    opts, pos = _split_opts(rest, ("-m", "--message", "-b", "-B", "-c", "-C", "-F", "--file", "-u", "-o",
                                   "--author", "--date", "-S", "-X", "--strategy", "--strategy-option",
                                   "--onto", "--pathspec-from-file", "--format", "--conflict", "--unified", "-U",
                                   "--inter-hunk-context",
                                   "--pretty", "-n", "--max-count", "--since", "--until", "--grep"))
    if args[i].dyn:
        run.flag("unknown", "git subcommand is not literal")
        return
    if "--help" in r or sub == "help":
        return
    if sub in _GIT_NETWORK:
        _git_network(run, sub, rest)
    if sub == "send-email" and not _has(opts, "--dry-run"):
        run.flag("mutating", "git send-email mails patches to another host", "upload")
        return
    from orchestrator.shell.rules.git_objects import reads_objects

    if reads_objects(sub, r):
        run.tag("object-read")  # asks only where the repository tracks a secret file (orchestrator.pre.secrets)
    if editor_cfg and sub not in _GIT_READ:
        run.flag("unknown", "git -c core.editor: the editor command may run", risk="hijack")
        return
    from orchestrator.shell.rules import git_writes

    if git_writes.check(run, i):  # where it writes: -C, --git-dir, config, init, clone, worktree... (git_writes.py)
        return
    name = f"git {sub}"
    if sub == "hash-object" and "-w" in r:
        run.flag("mutating", "git hash-object -w writes an object")
        return
    if sub == "grep" and any(t.startswith(("-O", "--open-files-in-pager")) for t in r):
        run.flag("unknown", "git grep -O runs a pager command")
        return
    if sub == "difftool" and any(t.startswith(("-x", "--extcmd", "-t", "--tool")) for t in r):
        run.flag("unknown", "git difftool runs an external command")
        return
    if sub == "submodule" and pos[:1] and pos[0].text == "foreach":
        run.code(" ".join(p.text for p in pos[1:]), "git submodule foreach")
        return
    if sub == "bisect" and pos[:1] and pos[0].text == "run":
        run.sub(pos[1:])
        run.flag("mutating", "git bisect run checks out commits")
        return
    if sub in _GIT_TREE_WRITERS:
        # these write entries (symlinks included) from the object store anywhere in the tree: nothing else in the
        # same command can be judged by its path any more
        run.entry("ln", anywhere=True)
    if sub in _GIT_READ:
        if sub == "diff" and _has(opts, "--output"):
            for v in opts["--output"]:
                run.write(W(v), "git diff --output")
        if sub in ("log", "show", "format-patch") and _has(opts, "--output", "-o"):
            run.write(W((opts.get("--output") or opts["-o"])[-1]), name)
        return
    for part in (_git_refs, _git_linked, _git_checkout, _git_history):
        if part(run, sub, rest, r, opts, pos, name):
            return
    _git_other(run, sub, rest, r, opts, pos, name)


def _git_refs(run: _Run, sub: str, rest: list[W], r: list[str], opts: dict[str, list[str]], pos: list[W],
              name: str) -> bool:
    """git branches, tags, remotes, config, stash: True when this decided the command."""
    if sub == "branch":
        if _has(opts, "-D", "-f", "--force", "-M", "-C"):
            run.flag("destructive", "git branch -D/-f/-M deletes or force-moves a branch", risk="history-rewrite")
        elif _has(opts, "-d", "--delete", "-m", "-M", "--move", "-c", "-C", "--copy", "-u", "--set-upstream-to",
                  "--unset-upstream", "--edit-description", "-f", "--force", "-t", "--track"):
            run.flag("mutating", f"{name} modifies branches")
        elif pos and not _has(opts, "-l", "--list", "--contains", "--no-contains", "--merged", "--no-merged",
                              "--points-at", "-a", "-r", "--all", "--remotes", "--sort", "--format",
                              "--show-current", "-v", "-vv", "--verbose"):
            run.flag("mutating", "git branch creates a branch")
        return True
    if sub == "tag":
        if _has(opts, "-d", "--delete"):
            run.flag("mutating", "git tag -d deletes a tag")
        elif pos and not _has(opts, "-l", "--list", "--contains", "--no-contains", "--merged", "--no-merged",
                              "--points-at", "-n", "--sort", "--format", "-v", "--verify"):
            run.flag("mutating", "git tag creates a tag")
        return True
    if sub == "remote":
        if not pos or pos[0].text in ("show", "get-url") or (not pos and _has(opts, "-v", "--verbose")):
            return True
        if pos[0].text in ("-v",):
            return True
        run.flag("mutating", f"git remote {pos[0].text}")
        return True
    if sub == "config":
        if _has(opts, "--get", "--get-all", "--get-regexp", "--list", "-l", "--get-urlmatch", "--get-color",
                "--get-colorbool", "--show-origin", "--show-scope", "-e", "--edit") and not _has(opts, "-e", "--edit"):
            return True
        if pos and pos[0].text in ("get", "list"):
            return True
        if len(pos) == 1 and not _has(opts, "--unset", "--unset-all", "--add", "--replace-all", "--remove-section",
                                      "--rename-section"):
            return True
        run.flag("mutating", "git config changes configuration")
        return True
    if sub == "stash":
        act = pos[0].text if pos else "push"
        if act in ("list", "show"):
            return True
        if act in ("drop", "clear"):
            run.flag("destructive", f"git stash {act} discards stashed changes")
            return True
        if _has(opts, "-u", "--include-untracked", "-a", "--all") or any(
                a.text in ("-u", "--include-untracked", "-a", "--all") for a in run.args):
            # stashing untracked files removes them from the tree: like git clean, it deletes files it never names
            run.flag("destructive", f"git stash {act} --include-untracked removes untracked files")
            return True
        if act in ("pop", "apply"):
            run.entry("ln", anywhere=True)  # restores entries (links too) anywhere
        run.flag("mutating", f"git stash {act}")
        return True
    return False


#: subcommands whose first positional word is an action: (the action when none is given, actions that only read)
_ACTIONS: dict[str, tuple[str, frozenset[str]]] = {
    "worktree": ("", frozenset({"list"})),
    "submodule": ("status", frozenset({"status", "summary"})),
    "notes": ("list", frozenset({"list", "show"})),
    "bisect": ("", frozenset({"log", "visualize", "view", "help"})),
    "lfs": ("", frozenset({"ls-files", "status", "env", "version", "logs", "locks", "fetch"})),
}
#: actions that discard work when forced (-f/--force), and why
_FORCED = {("worktree", "remove"): "git worktree remove --force discards changes",
           ("submodule", "deinit"): "git submodule deinit --force"}


def _git_linked(run: _Run, sub: str, rest: list[W], r: list[str], opts: dict[str, list[str]], pos: list[W],
                name: str) -> bool:
    """git worktrees, submodules, reflog, notes, bisect, lfs: True when this decided the command."""
    if sub == "reflog":
        act = pos[0].text if pos else "show"
        if act in ("expire", "delete"):
            run.flag("destructive", f"git reflog {act} drops history")
        return True
    spec = _ACTIONS.get(sub)
    if spec is None:
        return False
    act = pos[0].text if pos else spec[0]
    if act in spec[1] or (sub == "lfs" and act == "track" and not pos[1:]):  # bare `git lfs track` lists patterns
        return True
    why = _FORCED.get((sub, act))
    if why is not None and _has(opts, "-f", "--force"):
        run.flag("destructive", why)
        return True
    run.flag("mutating", f"git {sub} {act}")
    return True


def _git_checkout(run: _Run, sub: str, rest: list[W], r: list[str], opts: dict[str, list[str]], pos: list[W],
                  name: str) -> bool:
    """git checkout, switch, restore, reset: True when this decided the command."""
    if sub == "checkout":
        # --track[=direct|inherit] and --recurse-submodules[=checkout|on-demand] take their optional value
        # only when stuck with `=` (gitcli(7)); `--track direct main` passes "direct" as a branch/pathspec.
        # git refuses --track with paths, and a value-like word after --recurse-submodules becomes a
        # pathspec whose outcome depends on what the repository contains: do not vouch either way.
        for k, a in enumerate(rest[:-1]):
            if (a.text in ("-t", "--track") and rest[k + 1].text in ("direct", "inherit")) or \
                    (a.text == "--recurse-submodules" and rest[k + 1].text in ("checkout", "on-demand")):
                run.flag("unknown", f"git checkout {a.text} {rest[k + 1].text}: git reads the word as a "
                                    "branch or pathspec, not as the option's value")
                return True
        if _has(opts, "-t", "--track") and not _has(opts, "-f", "--force", "-m", "--merge", "-p", "--patch",
                                                      "--ours", "--theirs"):
            if len(pos) >= 2 or "--" in r:
                run.flag("unknown", "git checkout --track with paths (git refuses; not vouched for)")
                return True
            run.flag("mutating", "git checkout --track creates a tracking branch")
            return True
        if "--" in r or _has(opts, "-f", "--force", "-p", "--patch", "--ours", "--theirs", "-m", "--merge",
                             "--pathspec-from-file") or \
                any(p.text in (".", "*", ":/") or p.glob for p in pos) or \
                (len(pos) >= 2 and not _has(opts, "-b", "-B", "--orphan")):
            run.flag("destructive", "git checkout of paths discards uncommitted changes", risk="history-rewrite")
            return True
        run.flag("mutating", "git checkout switches branches")
        return True
    if sub == "switch":
        if _has(opts, "-f", "--force", "--discard-changes"):
            run.flag("destructive", "git switch --discard-changes/--force")
            return True
        run.flag("mutating", "git switch")
        return True
    if sub == "restore":
        if _has(opts, "-S", "--staged") and not _has(opts, "-W", "--worktree"):
            run.flag("mutating", "git restore --staged unstages")
            return True
        run.flag("destructive", "git restore discards working-tree changes", risk="history-rewrite")
        return True
    if sub == "reset":
        if _has(opts, "--hard", "--merge", "--keep"):
            run.flag("destructive", "git reset --hard discards uncommitted changes", risk="history-rewrite")
            return True
        run.flag("mutating", "git reset")
        return True
    return False


def _push_target(run: _Run, opts: dict[str, list[str]], pos: list[W]) -> None:
    """``git push URL``/``git push ./path``: a repository named by location, not a configured remote, is an upload
    (a person decides; shell/rules/net.py). A bare name is a remote of .git/config, which no command may change."""
    repos = [p.text for p in pos[:1]] + opts.get("--repo", [])
    for repo in repos:
        if "/" in repo or ":" in repo or repo.startswith((".", "~", "$")) or "$(" in repo or "`" in repo:
            run.flag("mutating", f"git push to {repo}, not a configured remote", "upload")
            return


def _git_history(run: _Run, sub: str, rest: list[W], r: list[str], opts: dict[str, list[str]], pos: list[W],
                 name: str) -> bool:
    """git clean, push, history rewrites, gc/prune, update-ref: True when this decided the command."""
    if sub == "clean":
        if _has(opts, "-n", "--dry-run") and not _has(opts, "-i", "--interactive"):
            return True
        if _has(opts, "-f", "--force"):
            run.flag("destructive", "git clean -f deletes untracked files", risk="history-rewrite")
            return True
        run.flag("mutating", "git clean")
        return True
    if sub == "push":
        # A plain --force/-f or a +refspec overwrites whatever is on the remote (and wins over a lease when
        # both are given). --force-with-lease alone refuses unless the remote ref is still where we last
        # saw it, so it cannot throw away someone else's pushed work: mutating, not destructive.
        force = _has(opts, "-f", "--force", "--mirror", "-d", "--delete", "--prune") or any(
            p.text.startswith("+") or p.text.startswith(":") for p in pos[1:])
        if _has(opts, "-n", "--dry-run"):
            return True
        if _has(opts, "-d", "--delete") or any(p.text.startswith(":") for p in pos[1:]):
            run.tag("history-rewrite")  # deletes a remote branch
        if force:
            overwrite = _has(opts, "-f", "--force", "--mirror") or any(p.text.startswith("+") for p in pos[1:])
            run.flag("destructive", "git push rewrites or deletes remote history",
                     risk="force-push" if overwrite else None)
            return True
        if _has(opts, "--force-with-lease", "--force-if-includes"):
            # not destructive (refused if the remote moved), but still a force push to a person approving it
            run.flag("mutating", "git push --force-with-lease (refused if the remote moved)", risk="force-push")
            return True
        run.flag("mutating", "git push")
        _push_target(run, opts, pos)
        return True
    if sub == "replace" and _has(opts, "-l", "--list"):
        return True
    if sub in ("rebase", "filter-branch", "filter-repo", "replace"):
        if sub == "rebase" and _has(opts, "--abort", "--show-current-patch"):
            run.flag("mutating", "git rebase --abort")
            return True
        run.flag("destructive", f"{name} rewrites history", risk="history-rewrite")
        return True
    if sub == "gc":
        if any(x.startswith("--prune") for x in r) or "--aggressive" in r:
            run.flag("destructive", "git gc --prune drops unreachable objects")
            return True
        run.flag("mutating", "git gc")
        return True
    if sub in ("prune", "prune-packed"):
        run.flag("destructive", f"{name} drops unreachable objects")
        return True
    if sub == "update-ref":
        if _has(opts, "-d"):
            run.flag("destructive", "git update-ref -d deletes a ref")
            return True
        run.flag("mutating", name)
        return True
    return False


def _git_other(run: _Run, sub: str, rest: list[W], r: list[str], opts: dict[str, list[str]], pos: list[W],
               name: str) -> None:
    """git rm, mv, apply, clone, commit, fetch, archive, patches, then the known writers; else unknown."""
    if sub == "rm":
        kind = "destructive" if _has(opts, "-r", "-f", "--force") and not _has(opts, "--cached") else "mutating"
        for p in pos:
            if not _has(opts, "--cached"):
                run.delete(p, "git rm", kind)
        if not pos or _has(opts, "--cached"):
            run.flag(kind, "git rm")
        return
    if sub == "mv":
        if len(pos) >= 2:
            run.write(pos[-1], "git mv")
            run.entry("mv", _sources(run, pos[:-1]), named=True)
            for s in pos[:-1]:
                run.delete(s, "git mv (source)")
        run.flag("mutating", "git mv")
        return
    if sub == "apply":
        if _has(opts, "--check", "--stat", "--numstat", "--summary") and not _has(opts, "--apply"):
            return
        run.acc.unresolved = True
        run.flag("mutating", "git apply modifies files named in the patch")
        return
    if sub == "clone":
        if len(pos) >= 2:
            run.write(pos[1], "git clone")
        else:
            run.acc.unresolved = True
            run.flag("mutating", "git clone creates a directory")
        return
    if sub == "commit":
        if _has(opts, "--amend"):
            run.flag("mutating", "git commit --amend rewrites the last commit", risk="history-rewrite")
            return
        run.flag("mutating", "git commit")
        return
    if sub == "fetch" or (sub == "lfs" and pos[:1] and pos[0].text == "fetch"):
        # Only .git internals (remote-tracking refs, objects) change; the working tree is untouched.
        return
    if sub == "archive":
        out = opts.get("-o") or opts.get("--output")
        if out:
            run.write(W(out[-1]), "git archive -o")
        return
    if sub == "format-patch" and not _has(opts, "--stdout"):
        run.acc.unresolved = True
        run.write(W((opts.get("-o") or opts.get("--output-directory") or ["."])[-1]), "git format-patch")
        return
    if sub in ("request-pull", "difftool") or (sub == "format-patch"):
        return
    if (sub == "sparse-checkout" and pos[:1] and pos[0].text == "list") or \
            (sub == "bundle" and pos[:1] and pos[0].text in ("verify", "list-heads")) or \
            (sub == "replace" and _has(opts, "-l", "--list")) or \
            (sub == "rerere" and pos[:1] and pos[0].text in ("status", "diff", "remaining")):
        return
    if sub in ("add", "commit", "merge", "pull", "fetch", "cherry-pick", "revert", "init", "am", "format-patch",
               "archive", "bundle", "pack-refs", "repack", "maintenance", "sparse-checkout", "stage",
               "update-index", "write-tree", "commit-tree", "read-tree", "symbolic-ref", "checkout-index",
               "merge-file", "mergetool", "difftool", "rerere", "request-pull", "send-email", "credential",
               "fast-import", "svn", "p4", "citool", "gui", "revert", "sparse-checkout", "unpack-objects",
               "index-pack", "pack-objects", "mktag", "mktree", "multi-pack-index", "commit-graph", "hook",
               "range-diff", "switch", "annex", "crypt", "secret", "flow"):
        if sub == "symbolic-ref" and len(pos) == 1 and not _has(opts, "-d", "--delete"):
            return
        run.flag("mutating", name)
        return
    run.flag("unknown", f"unknown git subcommand {sub!r}")


RULES: dict[str, Callable[[_Run], None]] = {"git": _git}
