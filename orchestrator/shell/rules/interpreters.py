"""Rules for shells, interpreters, eval and source: the code they run is analyzed when it is literal."""
from __future__ import annotations

import re

from orchestrator.shell.parse import _LazyRe, _t
from orchestrator.shell.words import W, _prog_name
from orchestrator.shell.programs import _DOWNLOADERS
from orchestrator.shell.run import _Run

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only (strings at runtime): keep `typing` off the import path
    from typing import Callable


def _shell(run: _Run) -> None:
    name, args = run.name, run.args
    i = 0
    code: str | None = None
    code_w: W | None = None
    while i < len(args):
        s = args[i].text
        if args[i].dyn:
            break
        if s == "-c" or (s.startswith("-") and not s.startswith("--") and "c" in s[1:] and s[1:].isalpha()):
            if i + 1 < len(args):
                code_w = args[i + 1]
                code = code_w.text
            else:
                code = ""
            break
        if s in ("-o", "-O", "+o", "+O", "--rcfile", "--init-file"):
            i += 2
            continue
        if s.startswith("-") or s.startswith("+"):
            if s in ("--version", "--help"):
                return
            i += 1
            continue
        break
    if code is not None and run.xargs and (not code or "{}" in code or code.strip() in (":::", "::::")):
        run.flag("unknown", f"{name} -c runs code taken from its input", risk="runs-code")
        run.acc.unresolved = True
        if not code or code.strip().startswith(("{}", '"{}"', "'{}'", ":::")):
            # the input names the program itself (`… | xargs -I{} sh -c '{}'`): any command at all, like `| sh`
            run.flag("unknown", f"{name} -c runs commands read from its input", risk="unclassified")
        elif code.strip() not in ("::::",):
            # the placeholder hides the paths, not the programs: an upload or a force push in the script still
            # needs a person (`xargs -I@ sh -c 'nc @ 80 < f'`, redteam2 R2-up-nc-wrapped-xargs)
            inner = run.verdict(code)
            if inner.kind == "destructive":
                run.flag("destructive", f"{name} -c: {inner.reasons[0] if inner.reasons else 'destructive'}")
            if "upload" in inner.risks:
                run.flag("mutating", f"{name} -c sends local data to another host", "upload")
        return
    if code is not None:
        if code_w is not None and code_w.dyn:
            if _contains_download(code_w):
                run.flag("destructive", f"{name} -c runs code fetched from the network")
                return
            _computed_code(run, [code_w])
            run.flag("unknown", f"{name} -c with a non-literal script", risk="runs-code")
            run.acc.unresolved = True
            return
        run.code(code, f"{name} -c")
        return
    rest = args[i:]
    if rest:
        if any(w.node is not None and w.node.type == "process_substitution" and _contains_download(w)
               for w in rest[:1]):
            run.flag("destructive", f"{name} runs code fetched from the network")
            return
        run.flag("unknown", f"{name} runs a script file ({rest[0].text[:60]})", risk="runs-code")
        return
    # A shell reading commands from stdin.
    if run.ctx.download:
        run.flag("destructive", f"download piped into {name}")
        return
    if run.ctx.stdin is not None and name != "fish":
        run.code(run.ctx.stdin, f"{name} <<heredoc")  # the heredoc / here-string is the script
        return
    run.flag("unknown", f"{name} executes commands from stdin", risk="runs-code")


def _contains_download(w: W) -> bool:
    node = w.node
    if node is None:
        return any(d in w.text for d in ("curl", "wget"))
    stack = [node]
    while stack:
        n = stack.pop()
        if n.type == "command_name":
            if _prog_name(W(_t(n))) in _DOWNLOADERS:
                return True
        stack.extend(n.children)
    return False


_PY_SAFE_MODULES = frozenset("json sys math re base64 datetime time platform hashlib textwrap string itertools "
                             "collections functools pprint decimal fractions statistics random uuid "
                             "unicodedata calendar binascii struct html keyword operator numbers "
                             "copy enum typing dataclasses zlib locale".split())
_PY_DANGEROUS = _LazyRe(
    r"\b(open|exec|eval|compile|__import__|importlib|os|subprocess|shutil|pathlib|Path|socket|urllib|requests|"
    r"http|ctypes|getattr|setattr|delattr|globals|locals|vars|system|popen|remove|unlink|rmtree|rmdir|"
    r"write_text|write_bytes|mkdir|makedirs|rename|replace|chmod|chown|input|breakpoint|pickle|marshal|"
    r"tempfile|sqlite3|pty|signal|multiprocessing|threading|asyncio|builtins|__builtins__|__class__|"
    r"__subclasses__|__globals__|code|codecs|io|fileinput|glob|zipfile|tarfile|webbrowser|setuptools|pip|"
    r"runpy|site|sysconfig)\b")
_INLINE_DESTRUCTIVE = _LazyRe(
    r"rmtree|rmSync|rmdirSync|unlinkSync|rm_rf|rm_r\b|FileUtils\.rm|os\.remove|os\.unlink|unlink\s*\(|"
    r"remove_dir_all|Remove-Item", re.I)
# Shell text inside inline code only matters when the code can execute it (system/exec/subprocess...).
_INLINE_SHELL_DESTRUCTIVE = _LazyRe(
    r"\brm\s+-[a-zA-Z]*[rRf]|del\s+/[sq]|format\s+c:|mkfs|"
    r"git\s+(reset\s+--hard|clean\s+-[a-z]*f|push\s+(-f|--force))|DROP\s+(TABLE|DATABASE)", re.I)
_INLINE_EXEC = _LazyRe(r"system|exec|spawn|popen|subprocess|child_process|Process|`|\bsh\b|shell")


def _interpreter(run: _Run) -> None:
    name, args = run.name, run.args
    is_py = name.startswith("python") or name.startswith("pypy")
    code: str | None = None
    code_dyn = False
    i = 0
    flag_code = {"-c"} if is_py else {"-e", "-E", "--eval", "-p", "--print", "-r", "-x"}
    if name in ("deno", "bun") and args and args[0].text == "eval":
        code = " ".join(a.text for a in args[1:])
        code_dyn = any(a.dyn for a in args[1:])
        i = len(args)
    while code is None and i < len(args):
        a = args[i]
        s = a.text
        if a.dyn:
            break
        if s in ("--version", "-V", "-VV", "--help", "-h", "-v") and len(args) == 1:
            if s == "-v" and is_py:
                break
            return
        if s in flag_code or (is_py and s.startswith("-") and not s.startswith("--") and s.endswith("c")
                              and s[1:].isalpha()):
            if i + 1 < len(args):
                code = args[i + 1].text
                code_dyn = args[i + 1].dyn
            else:
                code = ""
            break
        if not is_py and s.startswith("-") and not s.startswith("--") and "e" in s[1:] and s[1:].isalpha():
            # perl -pe / -ne / -pie: code follows; -i means edit files in place
            if "i" in s[1:] and name in ("perl", "ruby"):
                files = [w for w in args[i + 2:] if not w.text.startswith("-")]
                for f in files:
                    run.write(f, f"{name} -i")
                if not files:
                    run.flag("mutating", f"{name} -i edits files in place")
            code = args[i + 1].text if i + 1 < len(args) else ""
            code_dyn = i + 1 < len(args) and args[i + 1].dyn
            break
        if is_py and s == "-m" and i + 1 < len(args):
            mod = args[i + 1].text
            # Only modules that do not import or run user code (pydoc/timeit import and execute).
            if mod in ("json.tool", "calendar", "tokenize", "sysconfig", "platform"):
                if mod == "json.tool":
                    outs = [w for w in args[i + 2:] if not w.text.startswith("-")]
                    if len(outs) >= 2:
                        run.write(outs[1], "python -m json.tool")
                return
            if mod in ("pip", "pip3"):
                from orchestrator.shell.rules.services import _pip  # the service CLIs load on demand

                _pip(_Run(run.wk, run.ctx, run.depth, "pip", args[i + 2:], run.xargs))
                return
            run.flag("unknown", f"{name} -m {mod} runs a module", risk="runs-code")
            return
        if s.startswith("-") and s != "-":
            if s in ("-W", "-X", "--require", "-r", "-I", "--import") and i + 1 < len(args):
                i += 2
                continue
            i += 1
            continue
        break
    if code is None:
        rest = args[i:]
        if rest and rest[0].text != "-":
            run.flag("unknown", f"{name} runs a script ({rest[0].text[:60]})", risk="runs-code")
            return
        if run.ctx.download:
            run.flag("destructive", f"download piped into {name}")
            return
        if run.ctx.stdin is None:
            run.flag("unknown", f"{name} executes code from stdin", risk="runs-code")
            return
        code = run.ctx.stdin  # a heredoc / here-string is the program: judge it like inline code
    _judge_code(run, code, code_dyn, i, is_py)


def _judge_code(run: _Run, code: str, code_dyn: bool, i: int, is_py: bool) -> None:
    """The interpreter's program text (inline, or the heredoc it reads), whose flag ends at ``run.args[i]``."""
    name, args = run.name, run.args
    if name in ("perl", "ruby") and not code_dyn:
        inplace = any(re.fullmatch(r"-[a-zA-Z]*i\S*", a.text) for a in args[:i + 1]) or \
            any(a.text.startswith("-i") for a in args[:i])
        if inplace:
            files = [w for w in args[i + 2:] if not w.text.startswith("-")]
            for f in files:
                run.write(f, f"{name} -i")
            if not files:
                run.flag("mutating", f"{name} -i edits files in place")
        if re.fullmatch(r"\s*((s|y|tr)([/|#!,])[^;]*?\3[^;]*?\3[a-z]*|print[^;`]*|chomp)\s*;?\s*", code) and \
                "`" not in code and "system" not in code:
            return  # a pure substitution / print filter (-p / -n / -i)
    if code_dyn:
        run.flag("unknown", f"{name} inline code is not literal", risk="runs-code")
        run.acc.unresolved = True
        return
    if _INLINE_DESTRUCTIVE.search(code) or (_INLINE_EXEC.search(code) and _INLINE_SHELL_DESTRUCTIVE.search(code)):
        run.flag("destructive", f"{name} inline code deletes or rewrites data")
        return
    if _INLINE_EXEC.search(code):
        # Look at string literals that look like shell commands.
        for lit in re.findall(r"\"([^\"]{2,})\"|'([^']{2,})'", code):
            s = lit[0] or lit[1]
            sub = run.verdict(s) if len(s) < 2000 else None
            if sub is not None and sub.kind == "destructive":
                run.flag("destructive", f"{name} inline code runs a destructive command")
                return
    if is_py and _py_read_only(code):
        return
    run.flag("unknown", f"{name} runs inline code", risk="runs-code")


def _py_read_only(code: str) -> bool:
    import ast  # lazy: only inline Python needs it

    try:
        ast.parse(code)
    except (SyntaxError, ValueError):
        return False  # not Python we can vouch for (e.g. shell text passed to -c by mistake)
    if _PY_DANGEROUS.search(code.replace("sys.stdout.write", "").replace("sys.stderr.write", "")):
        return False
    for m in re.finditer(r"\bimport\s+([\w., ]+)|\bfrom\s+([\w.]+)\s+import", code):
        mods = (m.group(1) or m.group(2) or "").replace(" ", "").split(",")
        for mod in mods:
            if mod.split(".")[0] not in _PY_SAFE_MODULES:
                return False
    return True


def _computed_code(run: _Run, words: list[W]) -> bool:
    """Code built from data the command produced (``eval "git push -$(echo f)"``, ``sh -c "$cmd"`` after
    ``cmd=…``): any program at all, a force push or an upload included, which the kernel does not contain -- a
    person decides (redteam2). A variable of the agent's own environment stays contained."""
    from orchestrator.shell.rules.net import _computed

    if any(_computed(run, w) for w in words):
        run.flag("unknown", f"{run.name} runs code the command computed", risk="unclassified")
        return True
    return False


def _eval(run: _Run) -> None:
    if any(a.dyn for a in run.args):
        if any(_contains_download(a) for a in run.args):
            run.flag("destructive", "eval of code fetched from the network")
            return
        _computed_code(run, run.args)
        run.flag("unknown", "eval of non-literal code", risk="runs-code")
        run.acc.unresolved = True
        return
    run.code(" ".join(a.text for a in run.args), "eval")


def _source(run: _Run) -> None:
    if run.args and run.args[0].node is not None and _contains_download(run.args[0]):
        run.flag("destructive", "sources code fetched from the network")
        return
    if run.ctx.download and (not run.args or run.args[0].text in ("/dev/stdin", "-")):
        run.flag("destructive", "download piped into source")
        return
    if run.ctx.stdin is not None and run.args and run.args[0].text in ("/dev/stdin", "/dev/fd/0", "-"):
        run.code(run.ctx.stdin, f"{run.name} /dev/stdin")
        return
    run.flag("unknown", f"{run.name} runs a script file", risk="runs-code")


def _java(run: _Run) -> None:
    if len(run.args) == 1 and run.args[0].text in ("-version", "--version", "-help", "--help"):
        return
    if any(a.text.lower().startswith(("delete", "remove", "drop", "purge")) for a in run.args):
        run.flag("destructive", "java runs a destructive CLI command")
    else:
        run.flag("unknown", "java runs a program")


def _make(run: _Run) -> None:
    if not any(a.text in ("-n", "--dry-run", "--just-print", "--recon", "-q", "--question", "-v", "--version",
                          "--help", "-h") for a in run.args):
        run.flag("unknown", "make runs recipes (arbitrary commands)", risk="runs-code")


RULES: dict[str, Callable[[_Run], None]] = {
    "eval": _eval, "source": _source, ".": _source, "java": _java, "make": _make,
}
