"""Rules for file-system programs: rm, cp/mv/install/ln, touch/mkdir, chmod/chown, tee, dd, truncate, shred,
find, fd, mktemp."""
from __future__ import annotations

import posixpath
import re

from orchestrator.shell.parse import _LazyRe
from orchestrator.shell.words import W, _has, _split_opts
from orchestrator.shell.programs import _DEV_BLOCK, _DEV_NULLISH

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only (strings at runtime): keep `typing` off the import path
    from typing import Callable, Iterable
    from orchestrator.shell.run import _Ctx, _Run


# ----------------------------------------------------------------------------------------------------------
# file utilities


def _rm(run: _Run) -> None:
    opts, pos = _split_opts(run.args)
    if _has(opts, "--help", "--version") and not pos:
        return
    recursive = _has(opts, "-r", "-R", "--recursive", "--dir", "-d") and _has(opts, "-r", "-R", "--recursive")
    # the approval risk class, whatever the kind: `rm -r build` is a mutating delete the pipeline scopes,
    # and still a recursive delete to a person asked to remember a grant for it
    run.tag("recursive-delete" if recursive else "file-delete")
    if not pos:
        if run.xargs:
            run.acc.unresolved = True
            run.flag("destructive" if recursive else "mutating", f"{run.name} deletes paths from stdin")
            return
        # `ls | rm -rf`: rm ignores stdin, so this deletes nothing -- but it reads as an attempt whose
        # operands went missing (quoting, a lost xargs): not something to auto-allow.
        run.flag("unknown", f"{run.name} without operands")
        return
    for p in pos:
        bad = _dangerous_target(p)
        if bad and not recursive and p.literal and not p.glob:
            # Without -r, rm refuses directories: `rm .` or `rm /` deletes nothing.
            run.delete(p, run.name)
        elif bad:
            run.delete(p, f"{run.name} ({bad})", "destructive")
        elif _temp_path(p) and not (p.dyn and run.wk.assigned & {"TMPDIR", "TMP", "TEMP"}):
            # (`TMPDIR=/x rm -rf $TMPDIR/y`: bash expands $TMPDIR with the *inherited* value, but the command
            # evidently means the assigned one -- a non-temp path -- so any assignment voids the exemption.)
            # Scratch space: reported, but not "destructive" (peers agree: safety-net allows it).
            run.delete(p, f"{run.name} (temporary path)")
        elif not p.literal:
            run.delete(p, f"{run.name} (unresolved target)", "destructive")
        elif _SYSTEM_PATH.match(p.text):
            run.delete(p, f"{run.name} of a system path", "destructive")
        elif recursive and _VCS_DIR.search(p.text):
            run.delete(p, f"{run.name} -r of version-control metadata (history is lost)", "destructive")
        elif recursive and not _confined(p.text, run.ctx):
            run.delete(p, f"{run.name} -r outside the working directory", "destructive")
        elif recursive:
            # A literal path inside the working directory: the pipeline sees it in `deletes` and applies
            # scope / protected paths / approval to it; it is not blind damage.
            run.delete(p, f"{run.name} -r")
        else:
            run.delete(p, run.name)
    if run.xargs:
        run.acc.unresolved = True
        if recursive:
            run.flag("destructive", f"{run.name} -r on paths from stdin")


_CRITICAL = _LazyRe(r"^(/|/\*|~|~/|~/\*|\.|\./|\.\.|\.\./|\*|/(bin|boot|dev|etc|home|lib|lib64|opt|proc|root|"
                       r"sbin|srv|sys|usr|var|Users|System|Library|Applications)/?\*?)$")


_SYSTEM_PATH = _LazyRe(r"^/(etc|usr|bin|sbin|boot|lib|lib32|lib64|opt|sys|proc|root|dev|srv|var/(?!tmp/)|"
                          r"System|Library|Applications|private/(?!tmp/|var/tmp/))")
_VCS_DIR = _LazyRe(r"(^|/)\.(git|hg|svn|jj|orchestration)(/|$)")
_TEMP_RE = _LazyRe(r"^(/tmp|/var/tmp|/private/tmp|/private/var/tmp|/dev/shm)/+[^/]")
_TMPVAR_RE = _LazyRe(r'^"?\$(\{TMPDIR(:-/tmp)?\}|TMPDIR|\{TMP\}|TMP|\{TEMP\}|TEMP)/+[^/$]')


def _temp_path(w: W) -> bool:
    t = w.text
    if ".." in t.split("/"):
        return False
    if w.literal:
        return bool(_TEMP_RE.match(t))
    return bool(_TMPVAR_RE.match(t)) and not w.glob and t.count("$") == 1


def _confined(p: str, ctx: _Ctx) -> bool:
    """A literal relative path that stays inside the command's working directory."""
    if p.startswith(("/", "~")) or ctx.cwd is None:
        return False
    if ctx.cwd and ctx.cwd.startswith(("/", "..")):
        return False
    n = posixpath.normpath(posixpath.join(ctx.cwd or ".", p))
    return n not in (".", "..") and not n.startswith("../") and n != ""


def _dangerous_target(w: W) -> str:
    t = w.text
    if _CRITICAL.match(t.rstrip("/") or "/") or _CRITICAL.match(t):
        return "critical path"
    if w.dyn:
        v = t.strip('"')
        if re.fullmatch(r"\$\{?HOME\}?/?\*?|\$\{?[A-Za-z_]\w*\}?/?\*?|\$\{?[A-Za-z_]\w*\}?/\*", v):
            return "variable target (may be empty or /)"
    return ""


def _simple_targets(run: _Run, valued: Iterable[str] = (), skip_first: int = 0, kind: str = "mutating",
                    why: str | None = None) -> None:
    opts, pos = _split_opts(run.args, valued)
    if _has(opts, "--help", "--version") and not pos:
        return
    for p in pos[skip_first:]:
        run.write(p, why or run.name, kind)
    if not pos[skip_first:]:
        run.acc.unresolved = run.acc.unresolved or run.xargs
        run.flag(kind, f"{run.name} modifies files")


def _touch(run: _Run) -> None:
    _simple_targets(run, ("-d", "-t", "-r", "--date", "--reference"))


def _mkdir(run: _Run) -> None:
    _simple_targets(run, ("-m", "--mode", "-Z", "--context"))


def _chmod_like(run: _Run) -> None:
    valued = ("--reference",) if run.name == "chmod" else ("--reference", "--from")
    args = run.args
    # chmod modes like -w / -x look like options; treat a leading -[rwxXst]+ as the mode.
    opts, pos = _split_opts([a for a in args if not re.fullmatch(r"[-+=][rwxXstugo]+", a.text)], valued)
    mode_from_flag = any(re.fullmatch(r"[-+=][rwxXstugo]+", a.text) for a in args)
    if _has(opts, "--help", "--version") and not pos:
        return
    skip = 0 if (mode_from_flag or "--reference" in opts) else 1
    targets = pos[skip:]
    recursive = _has(opts, "-R", "--recursive")
    mode = pos[0].text if pos and skip else ""
    for p in targets:
        bad = _dangerous_target(p)
        if p.literal and _SYSTEM_PATH.match(p.text) and (recursive or mode in ("777", "0777", "a+rwx", "000")):
            run.write(p, f"{run.name} on a system path", "destructive")
        elif bad and recursive:
            run.write(p, f"{run.name} -R on {bad}", "destructive")
        elif bad and p.text in ("/",):
            run.write(p, f"{run.name} on {bad}", "destructive")
        else:
            run.write(p, run.name)
    if recursive and mode in ("777", "a+rwx", "0777", "000", "0000") and any(_dangerous_target(p) for p in targets):
        run.flag("destructive", f"{run.name} -R {mode} on a critical path")
    if not targets:
        run.flag("mutating", f"{run.name} changes file attributes")
        run.acc.unresolved = True


def _cp_like(run: _Run) -> None:
    """cp / mv / ln / install: the last positional (or -t DIR) is written; mv also deletes its sources."""
    # --backup, --preserve, --reflink and --context take a value only as "--opt=value"; -Z takes none
    valued = ["-t", "--target-directory", "-S", "--suffix", "-m", "--mode", "-o", "--owner",
              "-g", "--group", "--sparse", "--no-preserve"]
    if run.name == "install":
        valued += ["-o", "-g", "-m", "-t"]
    opts, pos = _split_opts(run.args, valued)
    if _has(opts, "--help", "--version") and not pos:
        return
    target = opts.get("-t") or opts.get("--target-directory")
    if target:
        dest: W | None = W(target[-1])
        srcs = pos
    elif len(pos) >= 2:
        dest, srcs = pos[-1], pos[:-1]
    elif len(pos) == 1 and run.name == "ln":
        dest, srcs = W(posixpath.basename(pos[0].text.rstrip("/")) or pos[0].text, pos[0].dyn, pos[0].glob), pos
    elif run.name == "install" and _has(opts, "-d", "--directory"):
        for p in pos:
            run.write(p, "install -d")
        return
    else:
        dest, srcs = None, pos
    if run.name == "install" and _has(opts, "-d", "--directory"):
        for p in pos:
            run.write(p, "install -d")
        return
    if dest is not None:
        if run.xargs:
            run.acc.unresolved = True
        kind = "mutating"
        if run.name == "mv" and dest.literal and (dest.text in ("/dev/null",) or _DEV_BLOCK.match(dest.text)):
            run.flag("destructive", f"mv onto the device {dest.text}")
        acc = run.wk.acc
        before = len(acc.writes)
        run.write(dest, run.name, kind)
        if len(acc.writes) > before:
            # -T, --parents or a source "x/." do not make DIR/<basename>: anything in DIR may be new
            named = not _has(opts, "-T", "--no-target-directory", "--parents") and \
                all(posixpath.basename(p.text.rstrip("/")) not in ("", ".", "..") for p in srcs)
            run.entry(_entry_op(run.name, opts), _sources(run, srcs), named)
        if len(srcs) > 1 or (srcs and srcs[0].glob):
            run.acc.unresolved = True  # dest is a directory: the written names are dest/<basename>
    else:
        run.acc.unresolved = True
        run.flag("mutating", f"{run.name} with targets from elsewhere")
    if run.name == "mv":
        for s in srcs:
            run.delete(s, "mv (source)")


def _sources(run: _Run, srcs: list[W]) -> tuple[str, ...]:
    """The literal sources of an entry-making command, as paths relative to the call's cwd. A ``..`` in a
    *source* is read, not written through: it must not raise the ``dotdot`` flag meant for write targets."""
    acc = run.wk.acc
    flag, unresolved = acc.dotdot, acc.unresolved
    out = tuple(run.wk._path(p, run.ctx) for p in srcs if p.literal)
    acc.dotdot, acc.unresolved = flag, unresolved
    return out


#: cp options that make the copy a link
_CP_LINK = ("-l", "--link", "-s", "--symbolic-link")
#: cp options under which links in the source are copied as links
_CP_NODEREF = ("-P", "--no-dereference", "-d", "-a", "--archive")
_CP_LONG = frozenset("""--archive --attributes-only --backup --copy-contents --debug --force --interactive --link
--dereference --no-clobber --no-dereference --preserve --no-preserve --parents --recursive --reflink
--remove-destination --sparse --strip-trailing-slashes --symbolic-link --suffix --target-directory
--no-target-directory --update --verbose --one-file-system --context --keep-directory-symlink --help
--version""".split())


def _entry_op(name: str, opts: dict[str, list[str]]) -> str:
    """How ``name`` makes its destination entry (see ShellAnalysis.entries)."""
    if name in ("ln", "link"):
        return "ln"
    if name == "mv":
        return "mv"
    if name == "install":
        return "replace"
    if _has(opts, *_CP_LINK) or any(o.startswith("--") and o not in _CP_LONG for o in opts):
        return "ln"  # GNU accepts abbreviations (--lin, --sym): an option we do not know may make links
    recursive_keeps_links = _has(opts, "-r", "-R", "--recursive") and not _has(opts, "-L", "--dereference")
    if _has(opts, *_CP_NODEREF) or recursive_keeps_links or "links" in ",".join(opts.get("--preserve", [])):
        return "cplink"
    return "copy"


def _tee(run: _Run) -> None:
    opts, pos = _split_opts(run.args, ("--output-error",))
    if run.xargs:
        run.acc.unresolved = True
        run.flag("mutating", "tee writes files named on its input")
    for p in pos:
        run.write(p, "tee")


def _dd(run: _Run) -> None:
    if run.xargs:
        run.flag("unknown", "dd with operands taken from input")
        run.acc.unresolved = True
    for a in run.args:
        if a.text.startswith("of="):
            w = W(a.text[3:], a.dyn, a.glob)
            run.write(w, "dd of=")
            if w.text.startswith("/dev/") and not _DEV_NULLISH.match(w.text):
                run.flag("destructive", f"dd writes to device {w.text}")


def _truncate(run: _Run) -> None:
    _simple_targets(run, ("-s", "--size", "-r", "--reference"))


def _shred(run: _Run) -> None:
    opts, pos = _split_opts(run.args, ("-n", "--iterations", "-s", "--size", "--random-source"))
    if _has(opts, "--help", "--version") and not pos:
        return
    run.tag("file-delete")
    for p in pos:
        if _has(opts, "-u", "--remove", "--zero", "-z") or True:
            run.delete(p, "shred", "destructive")
    if not pos:
        run.flag("destructive", "shred overwrites data")


def _unlink(run: _Run) -> None:
    opts, pos = _split_opts(run.args)
    run.tag("file-delete")
    for p in pos:
        kind = "destructive" if not p.literal else "mutating"
        run.delete(p, run.name, kind)
    if not pos and run.xargs:
        run.acc.unresolved = True
        run.flag("mutating", f"{run.name} deletes paths from stdin")


def _rmdir(run: _Run) -> None:
    _unlink(run)


_FIND_VALUED = frozenset("""-name -iname -path -ipath -regex -iregex -type -xtype -user -group -perm -size -mtime
-atime -ctime -mmin -amin -cmin -newer -anewer -cnewer -maxdepth -mindepth -wholename -iwholename -lname -ilname
-inum -links -uid -gid -samefile -fstype -used -context -regextype -printf -print0f -D -O -files0-from""".split())


def _find(run: _Run) -> None:
    args = run.args
    i = 0
    while i < len(args):
        s = args[i].text
        if s in _FIND_VALUED or s.startswith("-newer"):
            i += 2
            continue
        if s in ("-delete",):
            # The deleted paths are whatever find matches: no path to report, only `unresolved`.
            run.acc.unresolved = True
            run.flag("destructive", "find -delete", risk="recursive-delete")
        elif s in ("-exec", "-execdir", "-ok", "-okdir"):
            j = i + 1
            inner: list[W] = []
            while j < len(args) and args[j].text not in (";", "+"):
                inner.append(args[j])
                j += 1
            roots = _find_roots(args)
            if len(roots) == 1 and roots[0].literal and (_confined(roots[0].text, run.ctx) or
                                                         _temp_path(roots[0]) or roots[0].text == "."):
                # {} is a path under a single literal root -- possibly the root itself (find . prints "."),
                # so judge the command as if applied to the root: `find . -exec rm -rf {} ;` = `rm -rf .`.
                base = roots[0].text.rstrip("/") or "."
                inner = [W(w.text.replace("{}", base), w.dyn, w.glob, w.node) for w in inner]
                run.acc.unresolved = True
                run.sub(inner, xargs=False, nested=True)
            else:
                run.sub(inner, xargs=True, nested=True)
            if any("{}" in w.text for w in inner):
                run.acc.unresolved = run.acc.unresolved or run.acc.rank > 0
            i = j
        elif s in ("-fprint", "-fprint0", "-fls", "-fprintf") and i + 1 < len(args):
            run.write(args[i + 1], f"find {s}")
            i += 1
        i += 1


def _find_roots(args: list[W]) -> list[W]:
    out = []
    for a in args:
        if a.text.startswith("-") or a.text in ("(", "!", ")"):
            break
        out.append(a)
    return out or [W(".")]


def _ln(run: _Run) -> None:
    _cp_like(run)


def _mktemp(run: _Run) -> None:
    opts, pos = _split_opts(run.args, ("-p", "--tmpdir", "--suffix"))
    if _has(opts, "-u", "--dry-run"):
        return
    run.acc.unresolved = True
    run.flag("mutating", "mktemp creates a temporary file")


def _fd(run: _Run) -> None:
    opts, pos = _split_opts(run.args, ("-x", "--exec", "-X", "--exec-batch", "-e", "--extension", "-t",
                                      "--type", "-E", "--exclude", "-d", "--max-depth", "-j", "--threads",
                                      "-S", "--size", "--changed-within", "--changed-before", "-o", "--owner",
                                      "--base-directory", "--path-separator", "--search-path", "-c", "--color",
                                      "--max-results", "--min-depth", "--exact-depth", "--ignore-file",
                                      "--format"))
    args = run.args
    for i, a in enumerate(args):
        if a.text in ("-x", "--exec", "-X", "--exec-batch"):
            inner = args[i + 1:]
            j = 0
            while j < len(inner) and inner[j].text != ";":
                j += 1
            if not j:
                run.flag("unknown", f"fd {a.text} without a command")
                return
            run.sub(inner[:j], xargs=True, nested=True)
            return


def _xattr(run: _Run) -> None:
    if any(re.fullmatch(r"-[a-z]*[wdc][a-z]*", a.text) for a in run.args):
        run.flag("mutating", "xattr modifies attributes")


RULES: dict[str, Callable[[_Run], None]] = {
    "rm": _rm, "rmdir": _rmdir, "unlink": _unlink, "shred": _shred, "srm": _shred, "wipe": _shred,
    "touch": _touch, "mkdir": _mkdir, "mkfifo": _mkdir, "mknod": _mkdir,
    "chmod": _chmod_like, "chown": _chmod_like, "chgrp": _chmod_like, "chattr": _chmod_like, "setfacl": _chmod_like,
    "xattr": _xattr,
    "cp": _cp_like, "mv": _cp_like, "install": _cp_like, "link": _cp_like, "ditto": _cp_like, "ln": _ln,
    "tee": _tee, "dd": _dd, "truncate": _truncate, "find": _find, "gfind": _find, "fd": _fd, "fdfind": _fd,
    "mktemp": _mktemp,
}
