"""Where git subcommands write: the real targets of ``git config``, ``init``, ``clone``, ``worktree``, ``bundle``...

:mod:`orchestrator.shell` knows *whether* a git subcommand changes things; this module says *where*, so that scope,
``.intentignore`` and selfguard judge the real paths instead of a bare "git init is mutating":

- ``git -C DIR ...`` runs in DIR: the rest of the command is analyzed with DIR as its working directory
  (``git -C .. rm -rf other`` deletes ``../other``, outside the workspace);
- ``--git-dir=X`` / ``--work-tree=X`` (not the default ``.git``) are written by every subcommand that writes;
  ``GIT_DIR``/``GIT_WORK_TREE``/``GIT_COMMON_DIR``/``GIT_INDEX_FILE`` assigned in the command make it unknown;
- ``git config`` set/unset/edit writes the repository's ``.git/config`` (``--worktree``: ``config.worktree``,
  ``--global``: ``~/.gitconfig``, ``--system``: ``/etc/gitconfig``, ``--file F``: F). ``.git/config`` is a
  governance file (selfguard), so every config write made by an agent is refused, whatever the key; a key that
  makes git run a command (``alias.*``, ``core.pager``, ``core.hooksPath``, ``core.sshCommand``, ``filter.*``...;
  anything outside the known-harmless list) is also tagged with the ``hijack`` risk;
- ``git remote add/set-url/rename/remove``, ``git submodule add/init/sync/set-url/set-branch/deinit`` write
  ``.git/config`` too (a new remote is a place to push the code to);
- ``git init [DIR]`` writes ``DIR/.git`` (``--bare``: DIR); ``git clone SRC [DIR]`` writes DIR (derived from SRC as
  git does when absent); ``git worktree add/move/remove``, ``git bundle create F``, ``git archive -o F``,
  ``git format-patch -o D``, ``git diff/log/show --output=F``, ``git bugreport/diagnose -o D``,
  ``git checkout-index --prefix=P``, ``git merge-file F``, ``git fast-export/fast-import --export-marks=F``,
  ``git maintenance register/start`` (``~/.gitconfig``) write what they name;
- options that make git run a command or install hooks (``clone -u/--upload-pack``, ``--template``,
  ``clone -c key=val`` with a key outside the harmless list, ``archive --remote --exec``, ``ext::`` URLs) make the
  command unknown with the ``hijack`` risk.

``.git/config`` is written relative to the command's working directory (``src/.git/config`` from ``src``): git
itself looks upwards for the repository, which the analyzer cannot see; selfguard refuses ``.git/config`` and
``.git/hooks/**`` at any depth, so either spelling is refused. Branch bookkeeping that git writes on its own
(``branch.<name>.remote``/``merge`` from ``push -u``, ``branch -u``, ``checkout --track``) holds no command and is
not reported.

Called from ``orchestrator.shell.rules.git._git`` (imported lazily there, so this module is off the import path
of commands that do not run git).
"""

from __future__ import annotations

import posixpath
import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from orchestrator.shell.run import _Run
    from orchestrator.shell.words import W

__all__ = ["check", "hijacks", "humanish"]

#: environment variables that move git's repository or work tree to a place this analysis cannot see
_MOVING_ENV = ("GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY")
#: configuration keys (lower case) known to make git run a command; reported by name in the reason
_RUNS_EXACT = frozenset("""core.pager core.editor core.hookspath core.sshcommand core.fsmonitor core.gitproxy
core.askpass core.worktree core.attributesfile sequence.editor diff.external credential.helper gpg.program
interactive.difffilter include.path uploadpack.packobjectshook web.browser sendemail.smtpserver
diff.tool merge.tool""".split())
_RUNS_PREFIX = ("alias.", "pager.", "includeif.", "filter.", "credential.", "gpg.", "difftool.", "mergetool.",
                "browser.", "man.", "url.", "protocol.", "remote.", "submodule.")
_RUNS_SUFFIX = (".textconv", ".command", ".driver", ".uploadpack", ".receivepack", ".helper", ".cmd",
                ".program", ".path", ".sshcommand", ".proxy", ".vcs", ".update")


def hijacks(key: str) -> bool:
    """Whether setting configuration ``key`` may make git (or a program it starts) run other code.

    Anything not on the analyzer's list of harmless keys (``user.*``, ``color.*``...) counts: the list of keys
    that run commands grows with every git release, the harmless list does not need to.
    """
    from orchestrator.shell.programs import _GIT_SAFE_CONFIG

    k = key.lower()
    if k in _RUNS_EXACT or k.startswith(_RUNS_PREFIX) or k.endswith(_RUNS_SUFFIX):
        return True
    return not k.startswith(_GIT_SAFE_CONFIG)


def _runs_command(key: str) -> bool:
    k = key.lower()
    return k in _RUNS_EXACT or k.startswith(_RUNS_PREFIX) or k.endswith(_RUNS_SUFFIX)


def humanish(source: str, bare: bool = False) -> str | None:
    """The directory ``git clone SOURCE`` creates when none is given (git's "humanish" part), or None."""
    s = source.rstrip("/")
    if s.endswith("/.git"):
        s = s[:-5].rstrip("/")
    name = re.split(r"[/:]", s)[-1] if s else ""
    if name.endswith(".git"):
        name = name[:-4]
    if name in ("", ".", "..") or "\\" in name:
        return None
    return name + ".git" if bare else name


def _split(args: list[W], valued: frozenset[str]) -> tuple[dict[str, list[W]], list[W]]:
    """Options and positionals, option values kept as words (see ``words._split_opt_words``)."""
    from orchestrator.shell.words import _split_opt_words

    return _split_opt_words(args, valued)


def _last(opts: dict[str, list[W]], *names: str) -> W | None:
    for n in names:
        if opts.get(n):
            return opts[n][-1]
    return None


def _join(base: W, tail: str) -> W:
    from orchestrator.shell.words import W

    return W(base.text.rstrip("/") + "/" + tail if base.text not in ("", ".") else tail, base.dyn, base.glob)


def check(run: _Run, i: int) -> bool:
    """Report the write targets of the git command in ``run`` whose subcommand is ``run.args[i]``.

    Returns True when the command was fully judged here (the caller returns), False when the caller's own rules
    must still decide its kind (the targets found here are already recorded).
    """
    from orchestrator.shell.programs import _GIT_READ
    from orchestrator.shell.words import W

    args = run.args
    head, sub, rest = args[:i], args[i].text, args[i + 1:]
    # ---- global options: -C (re-analyze from there), --git-dir, --work-tree
    moved: list[W] = []
    kept: list[W] = []
    git_dir: W | None = None
    work_tree: W | None = None
    k = 0
    while k < len(head):
        a = head[k]
        s = a.text
        value: W | None = None
        name = s
        if s in ("-C", "--git-dir", "--work-tree") and k + 1 < len(head):
            value = head[k + 1]
            k += 2
        elif s.startswith(("--git-dir=", "--work-tree=")) and not a.dyn:
            name, _eq, val = s.partition("=")
            value = W(val, a.dyn, a.glob)
            k += 1
        else:
            kept.append(a)
            if s in ("-c", "--config-env", "--namespace", "--exec-path", "--super-prefix", "--list-cmds",
                     "--attr-source") and k + 1 < len(head):
                kept.append(head[k + 1])
                k += 1
            k += 1
            continue
        if name == "-C":
            moved.append(value)
        elif name == "--git-dir":
            git_dir = value
        else:
            work_tree = value
    if moved:
        ctx = run.ctx.copy()
        cwd = ctx.cwd
        for d in moved:
            if cwd is None or not d.literal or d.text.startswith("~"):
                cwd = None
            elif d.text == "":
                continue  # `git -C ""` stays where it is
            else:
                if ".." in d.text.split("/"):
                    run.acc.dotdot = True
                cwd = posixpath.normpath(d.text if d.text.startswith("/") or not cwd
                                         else posixpath.join(cwd, d.text))
        ctx.cwd = cwd
        if run.acc.programs and run.acc.programs[-1][0] == "git":
            run.acc.programs.pop()  # this same command, recorded again below without -C (ShellAnalysis.programs)
        run.sub([W("git"), *kept, *args[i:]], ctx=ctx)
        return True
    read = sub in _GIT_READ
    if not read and any(v in run.wk.assigned for v in _MOVING_ENV):
        run.flag("unknown", f"git {sub} with GIT_DIR/GIT_WORK_TREE set in the command: where it writes cannot be "
                            "judged")
        return True
    if git_dir is not None and git_dir.text in (".git", "./.git") and git_dir.literal:
        git_dir = None  # the default spelled out
    if not read and sub != "config":
        if work_tree is not None:
            run.write(work_tree, f"git --work-tree (git {sub})")
        if git_dir is not None:
            run.write(git_dir, f"git --git-dir (git {sub})")
    config = _join(git_dir, "config") if git_dir is not None else W(".git/config")
    rule = _RULES.get(sub)
    return rule(run, rest, config, git_dir) if rule is not None else False


# ------------------------------------------------------------------------------------------------ subcommands

_CONFIG_VALUED = frozenset("-f --file --blob --type --default --comment --value -t".split())
_CONFIG_READ = ("--get", "--get-all", "--get-regexp", "--get-urlmatch", "--get-color", "--get-colorbool", "--list",
                "-l")
_CONFIG_WRITE = ("--unset", "--unset-all", "--add", "--replace-all", "--remove-section", "--rename-section")


def _config(run: _Run, rest: list[W], config: W, git_dir: W | None) -> bool:
    from orchestrator.shell.words import W

    opts, pos = _split(rest, _CONFIG_VALUED)
    act = pos[0].text if pos and pos[0].literal else None
    edit = "-e" in opts or "--edit" in opts or act == "edit"
    if act in ("list", "get") or "--blob" in opts:
        return True
    if act in ("set", "unset", "rename-section", "remove-section", "edit"):
        key_w = pos[1] if len(pos) > 1 else None
    elif edit:
        key_w = None
    elif any(o in opts for o in _CONFIG_READ) and not any(o in opts for o in _CONFIG_WRITE):
        return True
    elif len(pos) == 1 and not any(o in opts for o in _CONFIG_WRITE):
        return True  # `git config user.name`: a get
    elif not pos and not any(o in opts for o in _CONFIG_WRITE):
        return True  # usage error, writes nothing
    else:
        key_w = pos[0] if pos else None
    real = True  # a file git reads its configuration from
    if "--global" in opts:
        target = W("~/.gitconfig")
    elif "--system" in opts:
        target = W("/etc/gitconfig")
    elif _last(opts, "-f", "--file") is not None:
        target = _last(opts, "-f", "--file")  # type: ignore[assignment]
        real = target.text.endswith("config") or not target.literal
    elif "--worktree" in opts:
        target = _join(git_dir, "config.worktree") if git_dir is not None else W(".git/config.worktree")
    else:
        target = config
    if target.text == "-":
        return True
    run.write(target, "git config")
    key = key_w.text if key_w is not None else ""
    if edit:
        run.flag("unknown", "git config --edit opens an editor (a command) on the configuration")
        run.acc.risks.add("hijack")
    elif key_w is not None and (not key_w.literal or hijacks(key)) and real:
        what = "a command git runs" if key_w.literal and _runs_command(key) else "configuration that may run code"
        run.acc.flag("mutating", f"git config {key[:60]}: {what}", "hijack")
    return True


def _remote(run: _Run, rest: list[W], config: W, git_dir: W | None) -> bool:
    opts, pos = _split(rest, frozenset({"-t", "-m"}))
    if pos and pos[0].text in ("add", "set-url", "rename", "remove", "rm", "set-branches"):
        run.write(config, f"git remote {pos[0].text}")
    return False


def _submodule(run: _Run, rest: list[W], config: W, git_dir: W | None) -> bool:
    from orchestrator.shell.words import W

    opts, pos = _split(rest, frozenset("-b --branch --name --reference --depth".split()))
    act = pos[0].text if pos else ""
    if act in ("add", "init", "sync", "set-url", "set-branch", "deinit"):
        run.write(config, f"git submodule {act}")
    if act == "add":
        run.write(W(".gitmodules"), "git submodule add")
        if len(pos) >= 3:
            run.write(pos[2], "git submodule add")
        elif len(pos) == 2 and pos[1].literal and humanish(pos[1].text):
            run.write(W(humanish(pos[1].text) or ""), "git submodule add")
        else:
            run.acc.unresolved = True
    return False


_INIT_VALUED = frozenset("--template --separate-git-dir -b --initial-branch --object-format --ref-format".split())


def _init(run: _Run, rest: list[W], config: W, git_dir: W | None) -> bool:
    from orchestrator.shell.words import W

    opts, pos = _split(rest, _INIT_VALUED)
    where = pos[0] if pos else W(".")
    run.write(where if "--bare" in opts else _join(where, ".git"), "git init")
    sep = _last(opts, "--separate-git-dir")
    if sep is not None:
        run.write(sep, "git init --separate-git-dir")
    if "--template" in opts:
        run.acc.flag("unknown", "git init --template installs hooks (commands git runs) from the template",
                     "hijack")
    return True


_CLONE_VALUED = frozenset("""-o --origin -b --branch -u --upload-pack --reference --reference-if-able
--separate-git-dir --depth --shallow-since --shallow-exclude -c --config --server-option -j --jobs --filter
--template --bundle-uri --ref-format --revision""".split())


def _clone(run: _Run, rest: list[W], config: W, git_dir: W | None) -> bool:
    from orchestrator.shell.words import W

    opts, pos = _split(rest, _CLONE_VALUED)
    if _last(opts, "-u", "--upload-pack") is not None:
        run.acc.flag("unknown", "git clone --upload-pack runs the given command", "hijack")
    if "--template" in opts:
        run.acc.flag("unknown", "git clone --template installs hooks (commands git runs) from the template", "hijack")
    for kv in opts.get("-c", []) + opts.get("--config", []):
        key = kv.text.partition("=")[0]
        if not kv.literal or hijacks(key):
            run.acc.flag("unknown", f"git clone -c {key[:60]}: configuration that may run code during the clone",
                         "hijack")
    if pos and pos[0].text.startswith("ext::"):
        run.acc.flag("unknown", "git clone of an ext:: URL runs a command", "hijack")
    if len(pos) >= 2:
        run.write(pos[1], "git clone")
    elif pos and pos[0].literal and humanish(pos[0].text, "--bare" in opts or "--mirror" in opts):
        run.write(W(humanish(pos[0].text, "--bare" in opts or "--mirror" in opts) or ""), "git clone")
    else:
        run.acc.unresolved = True
        run.flag("mutating", "git clone creates a directory")
    sep = _last(opts, "--separate-git-dir")
    if sep is not None:
        run.write(sep, "git clone --separate-git-dir")
    return True


def _worktree(run: _Run, rest: list[W], config: W, git_dir: W | None) -> bool:
    opts, pos = _split(rest, frozenset("-b -B --reason".split()))
    act = pos[0].text if pos else ""
    if act == "add" and len(pos) >= 2:
        run.write(pos[1], "git worktree add")
    elif act == "move" and len(pos) >= 3:
        run.delete(pos[1], "git worktree move")
        run.write(pos[2], "git worktree move")
    elif act == "remove" and len(pos) >= 2:
        run.delete(pos[1], "git worktree remove")
    elif act in ("add", "move", "remove"):
        run.acc.unresolved = True
    return False


def _bundle(run: _Run, rest: list[W], config: W, git_dir: W | None) -> bool:
    opts, pos = _split(rest, frozenset())
    if len(pos) >= 2 and pos[0].text == "create" and pos[1].text != "-":
        run.write(pos[1], "git bundle create")
    return False


def _archive(run: _Run, rest: list[W], config: W, git_dir: W | None) -> bool:
    opts, pos = _split(rest, frozenset("--format --prefix -o --output --remote --exec --add-file "
                                       "--add-virtual-file --mtime".split()))
    out = _last(opts, "-o", "--output")
    if out is not None:
        run.write(out, "git archive -o")
    if "--exec" in opts:
        run.acc.flag("unknown", "git archive --exec runs the given command", "hijack")
    return True


def _format_patch(run: _Run, rest: list[W], config: W, git_dir: W | None) -> bool:
    from orchestrator.shell.words import W

    opts, pos = _split(rest, frozenset("""-o --output-directory --start-number --subject-prefix --signature
--signature-file --in-reply-to --to --cc --from --base --interdiff --range-diff --creation-factor -v --reroll-count
--suffix --add-header --output""".split()))
    out = _last(opts, "--output")
    if out is not None:
        run.write(out, "git format-patch --output")
    if "--stdout" in opts:
        return True
    run.acc.unresolved = True  # the file names come from the commit subjects
    run.write(_last(opts, "-o", "--output-directory") or W("."), "git format-patch")
    return True


def _output(run: _Run, rest: list[W], config: W, git_dir: W | None) -> bool:
    """`git diff/log/show --output=F` (a diff option: the diff goes to F instead of stdout)."""
    for k, a in enumerate(rest):
        if a.text == "--":
            break
        if a.text.startswith("--output=") and not a.dyn:
            from orchestrator.shell.words import W

            run.write(W(a.text[len("--output="):], a.dyn, a.glob), "git --output")
        elif a.text in ("--output",) and k + 1 < len(rest) and not a.dyn:
            run.write(rest[k + 1], "git --output")
    return True


def _report_dir(run: _Run, rest: list[W], config: W, git_dir: W | None) -> bool:
    """`git bugreport` / `git diagnose`: a report file (named by the tool) in -o DIR, else in the cwd."""
    from orchestrator.shell.words import W

    opts, pos = _split(rest, frozenset("-o --output-directory -s --suffix --mode".split()))
    run.acc.unresolved = True
    run.write(_last(opts, "-o", "--output-directory") or W("."), "git report")
    return True


def _checkout_index(run: _Run, rest: list[W], config: W, git_dir: W | None) -> bool:
    from orchestrator.shell.words import W

    opts, pos = _split(rest, frozenset("--prefix --stage".split()))
    prefix = _last(opts, "--prefix")
    if prefix is not None and prefix.text:
        text = prefix.text.rstrip("/") if prefix.text.endswith("/") else (posixpath.dirname(prefix.text) or ".")
        run.acc.unresolved = True
        run.write(W(text, prefix.dyn, prefix.glob), "git checkout-index --prefix")
    return False


def _merge_file(run: _Run, rest: list[W], config: W, git_dir: W | None) -> bool:
    opts, pos = _split(rest, frozenset({"-L"}))
    if pos and not any(o in opts for o in ("-p", "--stdout", "--object-id")):
        run.write(pos[0], "git merge-file")
    return False


def _marks(run: _Run, rest: list[W], config: W, git_dir: W | None) -> bool:
    opts, pos = _split(rest, frozenset())
    for w in opts.get("--export-marks", []):
        run.write(w, "git --export-marks")
    return False


def _maintenance(run: _Run, rest: list[W], config: W, git_dir: W | None) -> bool:
    from orchestrator.shell.words import W

    opts, pos = _split(rest, frozenset({"--config-file", "--scheduler", "--task", "--schedule"}))
    if pos and pos[0].text in ("register", "unregister", "start", "stop"):
        run.write(_last(opts, "--config-file") or W("~/.gitconfig"), f"git maintenance {pos[0].text}")
    return False


_RULES: dict[str, Any] = {
    "config": _config, "remote": _remote, "submodule": _submodule, "init": _init, "init-db": _init,
    "clone": _clone, "worktree": _worktree, "bundle": _bundle, "archive": _archive, "format-patch": _format_patch,
    "diff": _output, "log": _output, "show": _output, "whatchanged": _output,
    "bugreport": _report_dir, "diagnose": _report_dir, "checkout-index": _checkout_index,
    "merge-file": _merge_file, "fast-export": _marks, "fast-import": _marks, "maintenance": _maintenance,
}
