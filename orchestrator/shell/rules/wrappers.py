"""Rules for wrappers that run another command (sudo, env, timeout, xargs, parallel, su, script...)."""
from __future__ import annotations

import re

from orchestrator.shell.words import W, _has, _shq, _split_opts
from orchestrator.shell.programs import _DOWNLOADERS, _INTERPRETERS, _SHELLS, _WRAPPERS

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only (strings at runtime): keep `typing` off the import path
    from typing import Callable
    from orchestrator.shell.run import _Run


# ----------------------------------------------------------------------------------------------------------
# wrappers, shells, interpreters


def _wrapper(run: _Run) -> None:
    name, args = run.name, run.args
    valued = _WRAPPERS[name]
    if name == "command":
        # command -v / -V only looks the name up.
        opts, pos = _split_opts(args, stop_at_first_pos=True)
        if _has(opts, "-v", "-V"):
            return
        run.sub(pos)
        return
    if name == "time" or name == "builtin" or name == "noglob" or name == "nocorrect":
        opts, pos = _split_opts(args, valued, stop_at_first_pos=True)
        run.sub(pos)
        return
    if name == "flock":
        opts, pos = _split_opts(args, valued, stop_at_first_pos=True)
        # flock FILE CMD... / flock -c 'cmd' FILE
        if "-c" in opts or "--command" in opts:
            for v in opts.get("-c", []) + opts.get("--command", []):
                run.code(v, "flock -c")
            return
        run.sub(pos[1:])
        return
    if name in ("taskset", "chrt"):
        opts, pos = _split_opts(args, (), stop_at_first_pos=True)
        run.sub(pos[1:])
        return
    if name in ("sudo", "doas", "run0", "pkexec"):
        opts, pos = _split_opts(args, valued, stop_at_first_pos=True)
        if _has(opts, "-l", "--list", "-v", "--validate", "-k", "--reset-timestamp", "-K", "-V", "--version",
                "-h", "--help") and not pos:
            return
        if _has(opts, "-e", "--edit") or name == "sudoedit":
            for p in pos:
                run.write(p, "sudo -e")
            return
        if _has(opts, "-s", "--shell", "-i", "--login") and not pos:
            run.flag("unknown", f"{name} opens an interactive shell")
            return
        if _has(opts, "-s", "--shell", "-i", "--login"):
            run.code(" ".join(w.text for w in pos), name)
            return
        while pos and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", pos[0].text):
            run.wk.assignment(pos[0].text)
            pos = pos[1:]  # sudo VAR=value cmd
        if not pos:
            return
        run.sub(pos)
        return
    opts, pos = _split_opts(args, valued, stop_at_first_pos=True)
    if name == "exec" and not pos:
        return  # `exec 3>file`: redirections only (handled by the walker)
    if not pos:
        return
    run.sub(pos)


def _env(run: _Run) -> None:
    args = run.args
    i = 0
    rest: list[W] = []
    while i < len(args):
        a = args[i]
        s = a.text
        if s in ("-u", "--unset", "-C", "--chdir") and i + 1 < len(args):
            if s in ("-C", "--chdir"):
                run.ctx = run.ctx.copy()
                run.ctx.cwd = None
            i += 2
            continue
        if s in ("-S", "--split-string") and i + 1 < len(args):
            run.code(" ".join(_shq(w.text) if j else w.text for j, w in enumerate(args[i + 1:])), "env -S")
            return
        if s.startswith("--split-string=") or (s.startswith("-S") and len(s) > 2):
            head = s.split("=", 1)[1] if s.startswith("--") else s[2:]
            run.code(" ".join([head] + [_shq(w.text) for w in args[i + 1:]]), "env -S")
            return
        if s == "--":
            rest = args[i + 1:]
            break
        if s.startswith("-") and not a.dyn:
            i += 1
            continue
        if "=" in s and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", s):
            run.wk.assignment(s)
            i += 1
            continue
        rest = args[i:]
        break
    while rest and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", rest[0].text):
        rest = rest[1:]
    if rest:
        run.sub(rest)


def _xargs(run: _Run) -> None:
    valued = ("-I", "-i", "-L", "-l", "-n", "-P", "-d", "-E", "-e", "-s", "-a", "-J", "-R", "-S",
              "--max-args", "--max-procs", "--delimiter", "--eof", "--max-chars", "--arg-file",
              "--max-lines", "--replace", "--process-slot-var")
    # options with optional glued values (-i, -l, -e) only count when glued; handle explicitly.
    args = run.args
    i = 0
    while i < len(args):
        s = args[i].text
        if not s.startswith("-") or args[i].dyn:
            break
        if s == "--":
            i += 1
            break
        if s.startswith("--"):
            name = s.split("=", 1)[0]
            if "=" not in s and name in valued and name not in ("--replace", "--eof", "--max-lines"):
                i += 1
            i += 1
            continue
        head = s[:2]
        if head in ("-i", "-l", "-e"):
            i += 1
            continue
        if head in valued and len(s) == 2:
            i += 2
            continue
        i += 1
    inner = args[i:]
    repl = None
    for k, a in enumerate(args[:i]):
        t = a.text
        if t == "-I" and k + 1 < i:
            repl = args[k + 1].text
        elif t.startswith("-I") and len(t) > 2:
            repl = t[2:]
        elif t.startswith("--replace="):
            repl = t.split("=", 1)[1] or "{}"
        elif t in ("-i", "--replace"):
            repl = "{}"
        elif t.startswith("-i") and len(t) > 2:
            repl = t[2:]
    if repl and repl != "{}":
        # Custom replace-string: normalise to {} so the argument is treated as input-dependent.
        inner = [W(w.text.replace(repl, "{}"), w.dyn, w.glob, w.node) if repl in w.text else w for w in inner]
    if not inner:
        # Without a command xargs runs `echo` -- but we do not vouch for what it is really meant to feed
        # (a mis-parsed option value, a command lost to quoting): ask.
        run.flag("unknown", "xargs without an explicit command")
        return
    if any(a.text in ("-p", "--interactive", "-o", "--open-tty") or
           (a.text.startswith("-") and not a.text.startswith("--") and a.text[1:].isalpha()
            and ("p" in a.text[1:] or "o" in a.text[1:]) and a.text[:2] not in ("-I", "-i", "-e", "-E", "-l",
                                                                               "-L", "-d", "-a"))
           for a in args[:i]):
        # -p prompts on the terminal before each command; -o reopens the tty as stdin of the command
        # (interactive programs): the run depends on a human's answers.
        run.flag("unknown", "xargs -p/-o runs commands interactively")
        return
    run.sub(inner + ([W("{}", True)] if repl is None and _appended_matter(inner) else []), xargs=True)


#: programs whose meaning the words xargs appends can change beyond *which files* (a subcommand, an option, a
#: program to run, a URL): `echo push -f | xargs git` is a force push, `xargs -0 env` runs anything (redteam2)
_APPEND_MATTERS = frozenset("""git env command exec nohup setsid nice ionice stdbuf timeout time sudo doas chroot
unbuffer script watch flock kubectl gh docker podman npm npx pnpm yarn pip pip3 make terraform aws gcloud az helm ssh scp
rsync nc ncat netcat socat openssl dig nslookup host ping""".split())


def _appended_matter(inner: list[W]) -> bool:
    """Whether the words xargs appends to ``inner`` can change what it does, not only which paths it reads,
    deletes or changes (``xargs rm``, ``xargs wc -l``, ``xargs chmod 755`` keep their meaning: paths)."""
    name = inner[0].text.rsplit("/", 1)[-1]
    return name in _APPEND_MATTERS or name in _WRAPPERS or name in _SHELLS or name in _INTERPRETERS or \
        name in _DOWNLOADERS or name.startswith("python")


def _timeout(run: _Run) -> None:
    opts, pos = _split_opts(run.args, ("-s", "--signal", "-k", "--kill-after"), stop_at_first_pos=True)
    if _has(opts, "--help", "--version") and not pos:
        return
    run.sub(pos[1:])


def _watch(run: _Run) -> None:
    opts, pos = _split_opts(run.args, ("-n", "--interval", "-d", "--differences", "-q", "--equexit"),
                            stop_at_first_pos=True)
    if not pos:
        return
    if len(pos) == 1:
        run.code(pos[0].text, "watch")
    else:
        run.code(" ".join(w.text for w in pos), "watch")


def _chroot(run: _Run) -> None:
    opts, pos = _split_opts(run.args, ("--userspec", "--groups"), stop_at_first_pos=True)
    if len(pos) <= 1:
        run.flag("unknown", "chroot starts a shell")
        return
    run.sub(pos[1:])


def _parallel(run: _Run) -> None:
    args = run.args
    cmd: list[W] = []
    i = 0
    valued = {"-j", "--jobs", "-S", "--sshlogin", "--delay", "--timeout", "-N", "-n", "--max-args", "-a",
              "--arg-file", "--joblog", "--results", "--tmpdir", "-I", "--colsep", "-d", "--delimiter",
              "--halt", "--memfree", "--load", "--tag-string", "--workdir", "--retries", "-L", "--max-lines",
              "-E", "--eof", "--basefile", "--shebang-wrap"}
    while i < len(args):
        s = args[i].text
        if s in (":::", "::::", ":::+", "::::+"):
            break
        if s.startswith("-") and not cmd:
            if s in valued or (len(s) == 2 and s in valued):
                i += 2
                continue
            i += 1
            continue
        cmd.append(args[i])
        i += 1
    if not cmd:
        run.flag("unknown", "parallel runs commands from its input")
        run.acc.unresolved = True
        return
    if len(cmd) == 1 and " " in cmd[0].text:
        run.code(cmd[0].text, "parallel")
        run.acc.unresolved = True
        return
    seps = [a.text for a in args[i:] if a.text in (":::", "::::", ":::+", "::::+")]
    inputs = [a for a in args[i + 1:] if a.text not in (":::", "::::", ":::+", "::::+")]
    if seps and all(x == ":::" for x in seps) and inputs and all(a.literal for a in inputs) and len(inputs) <= 64:
        # Literal inputs: run the command once per input, substituting {} (or appending the input).
        for a in inputs:
            if any("{}" in w.text for w in cmd):
                argv = [W(w.text.replace("{}", a.text), w.dyn, w.glob, w.node) for w in cmd]
            else:
                argv = cmd + [a]
            run.sub(argv, xargs=False)
        return
    run.sub(cmd, xargs=True)


def _busybox(run: _Run) -> None:
    if not run.args:
        return
    if run.args[0].text.startswith("-"):
        return
    run.sub(run.args)


def _su(run: _Run) -> None:
    args = run.args
    for k, a in enumerate(args):
        if a.text in ("-c", "--command") and k + 1 < len(args):
            if args[k + 1].dyn:
                break
            run.code(args[k + 1].text, "su -c")
            return
        if a.text.startswith("--command="):
            run.code(a.text.split("=", 1)[1], "su -c")
            return
    run.flag("unknown", "su opens a shell as another user")


def _rtk(run: _Run) -> None:
    """rtk (a token-saving proxy): `rtk [proxy] CMD ...` runs CMD; gain/discover only report."""
    args = run.args
    if not args or (args[0].text == "proxy" and len(args) == 1):
        run.flag("unknown", "rtk without a command")
        return
    first = args[0].text
    if first in ("gain", "discover", "help", "version", "--help", "-h", "--version", "config"):
        return
    run.sub(args[1:] if first == "proxy" else args)


def _script(run: _Run) -> None:
    """script [-a] [-q] [-p] [file [command ...]] (BSD) records a session into file."""
    opts, pos = _split_opts(run.args, ("-F", "-t", "-T", "-c", "--command", "-O", "-I", "-B", "--log-out",
                                      "--log-in", "--log-io", "--log-timing", "-E", "--echo"),
                            stop_at_first_pos=True)
    if _has(opts, "-p"):
        return
    if "-c" in opts or "--command" in opts:
        for v in opts.get("-c", []) + opts.get("--command", []):
            run.code(v, "script -c")
    target = pos[0] if pos else W("typescript")
    run.write(target, "script log")
    if len(pos) > 1:
        run.sub(pos[1:])
    elif not ("-c" in opts or "--command" in opts):
        run.flag("unknown", "script starts an interactive shell")


def _systemd_run(run: _Run) -> None:
    run.flag("unknown", "systemd-run runs a command")


RULES: dict[str, Callable[[_Run], None]] = {
    "exec": _wrapper, "env": _env, "timeout": _timeout, "gtimeout": _timeout, "watch": _watch, "chroot": _chroot,
    "parallel": _parallel, "sem": _parallel, "busybox": _busybox, "toybox": _busybox, "xargs": _xargs, "su": _su,
    "script": _script, "rtk": _rtk, "systemd-run": _systemd_run,
}
