"""Rules for text filters that may write (sed -i, awk redirections, sort -o, split...) and viewers (pagers, fzf)."""
from __future__ import annotations

import re

from orchestrator.shell.parse import _LazyRe
from orchestrator.shell.words import W, _has, _split_opts

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only (strings at runtime): keep `typing` off the import path
    from typing import Callable
    from orchestrator.shell.run import _Run


def _sed(run: _Run) -> None:
    args = run.args
    inplace = False
    script_given = False
    files: list[W] = []
    i = 0
    scripts: list[str] = []
    while i < len(args):
        a = args[i]
        s = a.text
        if a.dyn and not script_given:
            script_given = True
            scripts.append(s)
        elif s == "--":
            files.extend(args[i + 1:])
            break
        elif s.startswith("--in-place") or (s.startswith("-") and not s.startswith("--") and "i" in s[1:]
                                            and not s[1:2] in ("e", "f", "l")):
            # -i, -i.bak, -Ei, -ni, -i's/x/y/' (BSD-style glued suffix)
            inplace = True
            if s.startswith("-i") and len(s) > 2 and not s[2:].startswith((".", "~")) and not s[2:].isalpha():
                # -is/a/b/ : GNU reads "s/a/b/" as the backup suffix; treat as script-ish
                pass
            if s == "-i" and i + 1 < len(args) and args[i + 1].text == "" and args[i + 1].node is not None:
                i += 1  # BSD: sed -i '' script
        elif s in ("-e", "--expression") and i + 1 < len(args):
            scripts.append(args[i + 1].text)
            script_given = True
            i += 1
        elif s.startswith("--expression="):
            scripts.append(s.split("=", 1)[1])
            script_given = True
        elif s in ("-f", "--file") and i + 1 < len(args):
            script_given = True
            scripts.append("\x00file")
            i += 1
        elif s in ("-l", "--line-length", "-s", "--separate", "-n", "--quiet", "--silent", "-E", "-r",
                   "--regexp-extended", "-z", "--null-data", "-u", "--unbuffered", "--posix", "--debug",
                   "--sandbox", "--follow-symlinks", "-b", "--binary") or (s.startswith("-") and len(s) > 1
                                                                           and s[1:].isalpha()):
            if s in ("-l", "--line-length"):
                i += 1
            elif "e" in s[1:] and not s.startswith("--"):
                scripts.append(args[i + 1].text if i + 1 < len(args) else "")
                script_given = True
                i += 1
        elif not script_given:
            scripts.append(s)
            script_given = True
        else:
            files.append(a)
        i += 1
    for sc in scripts:
        if sc == "\x00file":
            run.flag("unknown", "sed -f runs a script file", risk="runs-code")
        elif _sed_script_writes(sc):
            run.flag("unknown", "sed script writes files or runs commands (w/W/e)")
    if inplace:
        for f in files:
            run.write(f, "sed -i")
        if not files:
            run.acc.unresolved = True
            run.flag("mutating", "sed -i edits files in place")


def _sed_script_writes(sc: str) -> bool:
    # GNU sed commands w/W write a file and e executes; s///w and s///e as well. Writing to
    # /dev/stdout, /dev/stderr or /dev/null is harmless.
    sc = re.sub(r"([wW])\s*/dev/(stdout|stderr|null)\s*($|\n|;|})", r"\3", sc)
    if re.search(r"(^|[;{}\n]|\d|/|\$)\s*[wWe]\s", sc) or re.search(r"(^|[;{}\n])\s*e\s*($|;)", sc):
        return True
    if re.search(r"s(.).*?\1.*?\1[gpIiMm0-9]*[we]", sc):
        return True
    return False


def _awk(run: _Run) -> None:
    opts, pos = _split_opts(run.args, ("-F", "-v", "-f", "--file", "-i", "--include", "-l", "--load",
                                      "--field-separator", "--assign"))
    if _has(opts, "--version", "--help", "-V") and not pos:
        return
    if _has(opts, "-f", "--file"):
        run.flag("unknown", f"{run.name} -f runs a program file", risk="runs-code")
        return
    if "inplace" in opts.get("-i", []) + opts.get("--include", []):
        for p in pos[1:]:
            run.write(p, f"{run.name} -i inplace")
        return
    if not pos:
        return
    prog = pos[0].text
    if pos[0].dyn:
        run.flag("unknown", f"{run.name} program is not literal", risk="runs-code")
        return
    flat = prog
    for _ in range(4):  # `print ($1 > 0 ? ...)`: a comparison inside parentheses is not a redirection
        flat = re.sub(r"\([^()]*\)", "(_)", flat)
    if (re.search(r"\bsystem\s*\(", prog) or re.search(r"\|\s*&?\s*getline", prog)
            or re.search(r"\b(print|printf)\b[^;{}]*?(>|\|)", flat) or re.search(r"\bfflush\b|\bclose\b", prog)):
        # print > "file", print | "cmd", cmd | getline, system(...)
        # Every output redirection goes to a standard stream (or /dev/null): nothing is written to disk.
        targets = re.findall(r"\b(?:print|printf)\b[^;{}]*?>>?\s*(\"[^\"]*\"|[^\s;}]+)", flat)
        if all(re.fullmatch(r"\"/dev/(stderr|stdout|stdin|null)\"", t) for t in targets) and \
                not re.search(r"\bsystem\s*\(|\|", prog):
            return
        run.flag("unknown", f"{run.name} program writes files or runs commands")


_FZF_ACTION = _LazyRe(r"(execute-silent|execute-multi|execute|become|reload-sync|reload|transform[-\w]*|preview|"
                      r"change-preview)(\(|:)")


def _fzf(run: _Run) -> None:
    args = run.args
    for k, a in enumerate(args):
        t = a.text
        name, eq, val = t.partition("=")
        if name in ("--bind", "--preview", "--listen-unsafe", "--history") and not eq and k + 1 < len(args) \
                and name != "--listen-unsafe":
            val = args[k + 1].text
        if name == "--listen-unsafe":
            run.flag("unknown", "fzf --listen-unsafe accepts remote actions")
            return
        if name == "--history":
            run.write(W(val), "fzf --history")
        elif name == "--preview":
            _fzf_code(run, val)
        elif name == "--bind":
            for m in _FZF_ACTION.finditer(val):
                rest = val[m.end():]
                if m.group(2) == "(":
                    depth, j = 1, 0
                    while j < len(rest) and depth:
                        depth += {"(": 1, ")": -1}.get(rest[j], 0)
                        j += 1
                    body = rest[:j - 1] if depth == 0 else rest
                else:
                    body = rest.split(",", 1)[0] if "+" not in rest else rest.split("+", 1)[0]
                _fzf_code(run, body)


def _fzf_code(run: _Run, body: str) -> None:
    body = body.replace("\\ ", " ")
    res = run.verdict(re.sub(r"\{[+nqs0-9.,-]*\}", "x", body))
    if res.kind != "read_only":
        run.flag("unknown" if res.kind != "destructive" else "destructive",
                 f"fzf binds a command that is not read-only: {body[:40]}")


def _sort(run: _Run) -> None:
    opts, pos = _split_opts(run.args, ("-o", "--output", "-k", "--key", "-t", "--field-separator", "-S",
                                      "-f", "--from-code", "--to-code",
                                      "--buffer-size", "-T", "--temporary-directory", "--parallel",
                                      "--files0-from", "--batch-size", "--compress-program", "--random-source"))
    for v in opts.get("-o", []) + opts.get("--output", []):
        if v != "-":  # GNU sort opens "-" as standard output
            run.write(W(v), "sort -o")
    if _has(opts, "--compress-program"):
        run.flag("unknown", "sort --compress-program runs a program")


def _uniq_split(run: _Run) -> None:
    opts, pos = _split_opts(run.args, ("-f", "-s", "-w", "-n", "-l", "-b", "-C", "-a", "-d", "--suffix",
                                      "--additional-suffix", "--filter", "--number", "-t"))
    if run.name == "uniq":
        if len(pos) >= 2:
            run.write(pos[1], "uniq output")
        return
    if _has(opts, "--help", "--version") and not pos:
        return
    run.acc.unresolved = True
    prefix = pos[1] if len(pos) >= 2 else W("x")
    run.write(W(prefix.text + "*", prefix.dyn, True), "split")
    if _has(opts, "--filter"):
        run.flag("unknown", "split --filter runs a command")


def _yq(run: _Run) -> None:
    opts, pos = _split_opts(run.args, ("--arg", "-o", "--output-format", "-p", "--input-format", "--indent",
                                      "-I", "--from-file"))
    if _has(opts, "-i", "--inplace", "--in-place"):
        for p in pos[1:]:
            run.write(p, f"{run.name} -i")
        if len(pos) < 2:
            run.flag("mutating", f"{run.name} -i")


def _jq(run: _Run) -> None:
    opts, pos = _split_opts(run.args, ("--arg", "--argjson", "--slurpfile", "--rawfile", "--indent", "-f",
                                      "--from-file", "-L"))


def _printf(run: _Run) -> None:
    if run.args and run.args[0].text == "-v":
        if len(run.args) > 1:
            run.wk.assigned.add(run.args[1].text.split("[", 1)[0])  # holds what the command computed
        return  # assigns a shell variable


def _base64(run: _Run) -> None:
    opts, pos = _split_opts(run.args, ("-w", "--wrap", "-i", "--input", "-o", "--output", "-b", "--break"))
    for v in opts.get("-o", []) + opts.get("--output", []):
        run.write(W(v), f"{run.name} -o")


def _pager(run: _Run) -> None:
    # less '+!cmd' / more '+!cmd' run a shell command on start.
    if any(a.text.startswith("+") and "!" in a.text for a in run.args) or any(a.dyn and a.text.startswith("+")
                                                                               for a in run.args):
        run.flag("unknown", f"{run.name} +command runs a shell command")


def _rg(run: _Run) -> None:
    if any(a.text == "--pre" or a.text.startswith("--pre=") for a in run.args):
        run.flag("unknown", "rg --pre runs a preprocessor command")


def _man(run: _Run) -> None:
    if any(a.text.startswith(("-P", "--pager", "-H", "--html")) for a in run.args):
        run.flag("unknown", "man with a custom pager/browser runs it")


def _xxd(run: _Run) -> None:
    _, pos = _split_opts(run.args, ("-l", "-len", "-s", "-seek", "-c", "-cols", "-g", "-groupsize", "-o", "-offset",
                                    "-n", "-name"))
    for p in pos[1:2]:  # xxd INFILE OUTFILE
        run.write(p, "xxd outfile")


def _textutil(run: _Run) -> None:
    if not any(a.text in ("-stdout", "-info", "-help") for a in run.args):
        run.flag("mutating", "textutil converts files")


RULES: dict[str, Callable[[_Run], None]] = {
    "sed": _sed, "gsed": _sed, "awk": _awk, "gawk": _awk, "mawk": _awk, "nawk": _awk,
    "sort": _sort, "iconv": _sort, "uniq": _uniq_split, "split": _uniq_split, "csplit": _uniq_split,
    "yq": _yq, "jq": _jq, "printf": _printf, "base64": _base64, "base32": _base64, "basenc": _base64,
    "fzf": _fzf, "sk": _fzf, "less": _pager, "more": _pager, "most": _pager, "rg": _rg, "man": _man, "xxd": _xxd,
    "textutil": _textutil,
}
