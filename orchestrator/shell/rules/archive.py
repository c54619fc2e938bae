"""Rules for archivers and compressors: tar, zip/unzip, 7z, gzip & co., patch."""
from __future__ import annotations

from orchestrator.shell.words import W, _has, _split_opts

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only (strings at runtime): keep `typing` off the import path
    from typing import Callable
    from orchestrator.shell.run import _Run


def _tar(run: _Run) -> None:
    args = run.args
    if not args:
        return
    first = args[0].text
    modes = set()
    letters = first if not first.startswith("-") else ""
    for a in args:
        s = a.text
        if s.startswith("--"):
            name = s.split("=", 1)[0]
            modes.add({"--extract": "x", "--get": "x", "--create": "c", "--list": "t", "--append": "r",
                       "--update": "u", "--delete": "d", "--concatenate": "A", "--catenate": "A",
                       "--diff": "D", "--compare": "D"}.get(name, ""))
        elif s.startswith("-") and len(s) > 1:
            letters += s[1:]
    for ch in "xctruAd":
        if ch in letters.split("f")[0] + letters:
            modes.add(ch if ch != "d" or "--delete" in [a.text for a in args] else "")
    # archive file
    fval = None
    for idx, a in enumerate(args):
        s = a.text
        if s.startswith("--file="):
            fval = W(s.split("=", 1)[1], a.dyn, a.glob)
        elif s == "--file" or (s.startswith("-") and not s.startswith("--") and s.endswith("f")) or \
                (idx == 0 and not s.startswith("-") and s.endswith("f")):
            if idx + 1 < len(args):
                fval = args[idx + 1]
    cdir = None
    for idx, a in enumerate(args):
        if a.text in ("-C", "--directory") and idx + 1 < len(args):
            cdir = args[idx + 1]
        elif a.text.startswith("--directory="):
            cdir = W(a.text.split("=", 1)[1])
    to_cmd = False
    for k, a in enumerate(args):
        t = a.text
        if t.startswith("--to-command") and "x" in modes:
            # Extracted file contents are piped into this command instead of being written to disk.
            cmd = t.split("=", 1)[1] if "=" in t else (args[k + 1].text if k + 1 < len(args) else "")
            cmd_w = W(cmd, a.dyn if "=" in t else (args[k + 1].dyn if k + 1 < len(args) else True))
            if not cmd or cmd_w.dyn:
                run.flag("unknown", "tar --to-command with a non-literal command")
                return
            run.code(cmd, "tar --to-command")
            to_cmd = True
            continue
        if t.startswith(("--checkpoint-action", "--to-command", "--use-compress-program", "--info-script",
                         "--new-volume-script", "--rsh-command", "--rmt-command", "-I", "-F")) and \
                not t.startswith("--file"):
            run.flag("unknown", f"tar {t.split('=', 1)[0]} runs a command")
            return
    if "x" in modes and to_cmd:
        return
    if "x" in modes:
        run.acc.unresolved = True
        run.write(cdir or W("."), "tar extract")
        if any(a.text in ("--overwrite", "--recursive-unlink", "--unlink-first", "-U") for a in args):
            run.flag("destructive", "tar extract overwrites existing files")
        return
    if modes & {"c", "r", "u", "A", "d"}:
        if fval is not None and fval.text != "-":
            run.write(fval, "tar create")
        elif fval is None:
            run.flag("mutating", "tar writes an archive")
        if any(a.text == "--remove-files" for a in args):
            run.acc.unresolved = True
            run.flag("destructive", "tar --remove-files deletes the sources")
        return
    if "t" in modes or "D" in modes:
        return
    run.flag("unknown", "tar mode not recognised")


def _unzip(run: _Run) -> None:
    opts, pos = _split_opts(run.args, ("-d", "-x", "-P"))
    if _has(opts, "-l", "-t", "-v", "-Z", "-z", "-p", "-c", "--help") or (not pos):
        return
    run.acc.unresolved = True
    dest = opts.get("-d")
    run.write(W(dest[-1]) if dest else W("."), "unzip extract")
    if _has(opts, "-o"):
        run.flag("mutating", "unzip -o overwrites files")


def _zip(run: _Run) -> None:
    if any(a.text in ("-TT", "--unzip-command") or a.text.startswith("--unzip-command=") for a in run.args):
        run.flag("unknown", "zip -TT runs a test command")
        return
    opts, pos = _split_opts(run.args, ("-b", "-n", "-t", "-tt", "-x", "-i", "-O", "--out", "-P", "-Z"))
    if _has(opts, "--help", "-h", "-v") and not pos:
        return
    if _has(opts, "-sf", "-T") and not _has(opts, "-d", "-m"):
        pass
    if pos:
        run.write(pos[0], run.name)
    if _has(opts, "-m", "--move"):
        run.acc.unresolved = True
        run.flag("destructive", f"{run.name} -m deletes the originals")


def _compressor(run: _Run) -> None:
    opts, pos = _split_opts(run.args, ("-S", "--suffix", "-b", "-T", "--threads", "-o"))
    if _has(opts, "-c", "--stdout", "--to-stdout", "-l", "--list", "-t", "--test", "-h", "--help", "-V",
            "--version", "-L", "--license"):
        return
    if not pos:
        return  # filter stdin -> stdout
    for p in pos:
        run.write(p, run.name)
        run.delete(p, f"{run.name} replaces")


def _patch(run: _Run) -> None:
    opts, pos = _split_opts(run.args, ("-p", "-i", "--input", "-d", "--directory", "-o", "--output", "-F",
                                      "-z", "--suffix", "-B", "-D", "-V", "-r", "--reject-file"))
    if _has(opts, "--dry-run", "-C", "--check", "--help", "--version"):
        return
    run.acc.unresolved = True
    if pos:
        run.write(pos[0], "patch")
    else:
        run.flag("mutating", "patch modifies the files named in the diff")


def _7z(run: _Run) -> None:
    opts, pos = _split_opts(run.args, ())
    sub = pos[0].text if pos else ""
    if sub in ("l", "t", "i", "h", "b") or not pos:
        return
    if sub in ("d",):
        run.flag("destructive", f"{run.name} d deletes from an archive")
        return
    run.acc.unresolved = True
    if sub in ("a", "u") and len(pos) >= 2:
        run.write(pos[1], f"{run.name} {sub}")
        return
    run.write(W((opts and next((k[2:] for k in opts if k.startswith("-o")), None)) or "."), f"{run.name} {sub}")


def _compression_tool(run: _Run) -> None:
    texts = [a.text for a in run.args]
    if "-o" in texts:
        k = texts.index("-o") + 1
        run.write(run.args[k] if k < len(run.args) else W("", True), "compression_tool -o")


RULES: dict[str, Callable[[_Run], None]] = {
    "tar": _tar, "gtar": _tar, "bsdtar": _tar, "unzip": _unzip, "zip": _zip,
    "7z": _7z, "7za": _7z, "7zr": _7z, "7zz": _7z,
    "gzip": _compressor, "gunzip": _compressor, "bzip2": _compressor, "bunzip2": _compressor, "xz": _compressor,
    "unxz": _compressor, "zstd": _compressor, "unzstd": _compressor, "lz4": _compressor, "lzma": _compressor,
    "patch": _patch, "compression_tool": _compression_tool,
}
