"""Rules for database clients: psql/mysql, sqlite3/duckdb, redis-cli, sqlcmd (read-only SQL is recognised)."""
from __future__ import annotations

import re

from orchestrator.shell.parse import _LazyRe
from orchestrator.shell.words import W, _has, _split_opts

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only (strings at runtime): keep `typing` off the import path
    from typing import Callable
    from orchestrator.shell.run import _Run


# ----------------------------------------------------------------------------------------------------------
# database clients and misc


_SQL_WRITE = _LazyRe(r"\b(analyze|insert|update|delete|drop|truncate|alter|create|replace|grant|revoke|merge|vacuum|"
                        r"attach|detach|copy|call|exec|execute|do|set|lock|reindex|cluster|comment|import|export|load|"
                        r"pragma|install|begin|commit|rename|shutdown|kill|flush|optimize|repair|upsert)\b", re.I)
_SQL_READ_START = _LazyRe(r"^\s*(?:(?:--[^\n]*\n|/\*.*?\*/)\s*)*(select|show|describe|desc|explain|with|values|"
                          r"fields|filter|stats)\b", re.I | re.S)


def _sql_read_only(q: str) -> bool:
    """A single read-only statement (SELECT/SHOW/DESCRIBE/EXPLAIN/WITH) with no data-changing keyword."""
    body = re.sub(r"--[^\n]*|/\*.*?\*/", " ", q, flags=re.S)
    body = re.sub(r"(?i)\bexplain\s+analyze\b", "explain", body)
    return bool(_SQL_READ_START.match(q)) and not _SQL_WRITE.search(body)


_SQL_DESTROY = _LazyRe(r"\b(drop|truncate|delete\s+from|flushall|flushdb)\b", re.I)
# PRAGMAs that only report (SQLite / DuckDB). Others act even without `=` (optimize, wal_checkpoint,
# incremental_vacuum, force_checkpoint, enable_*), so they are not vouched for.
_SQL_PRAGMA_READ = _LazyRe(
    r"^\s*pragma\s+(\w+\.)?(table_info|table_xinfo|table_list|index_list|index_info|index_xinfo|"
    r"foreign_key_list|foreign_key_check|integrity_check|quick_check|database_list|compile_options|"
    r"function_list|pragma_list|collation_list|module_list|show_tables|show_tables_expanded|storage_info|"
    r"database_size|version|platform|metadata_info|show)\s*(\(\s*[\w.'\"]*\s*\))?\s*;?\s*$", re.I)


_SQL_META_READ = _LazyRe(
    r"^(\.(tables|schema|fullschema|indexes|indices|databases|dbinfo|dump|headers?|mode|show|help|timer|"
    r"width|stats|lint|print|quit|exit|echo|changes|nullvalue|separator|bail|eqp|sha3sum)"
    r"|\\(d[A-Za-z+]*|l\+?|list|conninfo|encoding|z|sf\+?|sv\+?|echo|q|x|timing|copyright|\?|h|a|t|H|f|C|"
    r"pset))(\s[^;]*)?$")


def _sql_single_read(q: str) -> bool:
    """One read statement (SELECT/SHOW/DESCRIBE/EXPLAIN/WITH, or a PRAGMA query without ``=``), at most a
    trailing ``;``. A second statement after ``;`` is not vouched for: splitting SQL correctly needs the
    dialect's quoting rules, and the keyword scan alone could miss a write hidden there."""
    body = re.sub(r"--[^\n]*|/\*.*?\*/", " ", q, flags=re.S).strip()
    if body.rstrip(";").count(";"):
        return False
    if _SQL_PRAGMA_READ.match(body):
        return True
    return _sql_read_only(body)


def _sql_codes_verdict(run: _Run, codes: list[str], what: str) -> None:
    """Classify inline SQL strings: destroy > write > not a single read statement (unknown)."""
    for c in codes:
        if _SQL_DESTROY.search(c):
            run.flag("destructive", f"{what} runs destructive SQL")
            return
    for c in codes:
        if _SQL_PRAGMA_READ.match(c):
            continue
        if _SQL_WRITE.search(c) or re.search(r"^\s*\.(output|once|import|save|restore|backup|shell|system|"
                                              r"read|load|open|cd)", c, re.M):
            run.flag("mutating", f"{what} runs SQL that changes data")
            return
    for c in codes:
        t = c.strip()
        if t.startswith((".", "\\")):
            # sqlite dot-commands / psql meta-commands: only the ones that just describe or format.
            # Others write files (.log, .clone, \o, \w, \copy), open apps (.excel) or run code (\!, \gexec).
            if all(_SQL_META_READ.match(line.strip()) for line in t.splitlines() if line.strip()):
                continue
            run.flag("unknown", f"{what}: meta-command not known to be read-only")
            return
        if not _sql_single_read(t):
            run.flag("unknown", f"{what}: SQL is not a single read-only statement")
            return


def _sql_client(run: _Run) -> None:
    valued = {"-c", "--command", "-e", "--execute", "-f", "--file", "-h", "--host", "-p", "--port", "-U",
              "--username", "-u", "--user", "-d", "--dbname", "-D", "--database", "-P", "-o", "--output", "-s",
              "-cmd", "-separator", "-S", "-v", "--set", "-F", "-T", "-R", "-L", "--log-file"}
    pre: list[str] = []
    rest_args: list[W] = []
    k = 0
    while k < len(run.args):
        t = run.args[k].text
        if t in ("-cmd", "-init") and k + 1 < len(run.args):
            pre.append(run.args[k + 1].text if t == "-cmd" else "\x00init")
            k += 2
            continue
        rest_args.append(run.args[k])
        k += 1
    if "\x00init" in pre:
        run.flag("unknown", f"{run.name} -init runs a SQL file")
        return
    opts, pos = _split_opts(rest_args, valued)
    codes = opts.get("-c", []) + opts.get("--command", []) + opts.get("-e", []) + opts.get("--execute", []) + pre
    if run.name in ("sqlite3", "duckdb"):
        codes += [p.text for p in pos[1:]] + opts.get("-cmd", [])
        if "-readonly" in [a.text for a in run.args] and not any(
                re.search(r"^\s*\.(shell|system|output|once|save|backup|import)", c, re.M) for c in codes):
            return  # the database is opened read-only: statements cannot change it
    if _has(opts, "--version", "-V", "--help", "-l", "--list") and not codes:
        return
    for o in ("-o", "--output", "-L", "--log-file"):
        for v in opts.get(o, []):
            run.write(W(v), f"{run.name} {o}")
    if _has(opts, "-f", "--file"):
        run.flag("unknown", f"{run.name} runs a SQL file")
        return
    if not codes:
        run.flag("unknown", f"{run.name} interactive session / stdin")
        return
    _sql_codes_verdict(run, codes, run.name)


_SQLITE_FLAGS0 = frozenset("-readonly -safe -bail -batch -header -noheader -json -csv -box -line -list -markdown "
                           "-table -column -html -echo -interactive -memtrace -nofollow -zip -append "
                           "-deserialize -stats -quote -ascii -tabs -unsafe-testing -no-stdin -noinit".split())
_SQLITE_FLAGS1 = frozenset("-nullvalue -separator -newline -mmap -vfs -maxsize -escape -A -init".split())
_SQLITE_FLAGS2 = frozenset("-lookaside -pagecache -heap".split())


def _sqlite(run: _Run) -> None:
    """sqlite3 / duckdb: [OPTIONS] [DB] [SQL...]; -cmd/-c/-s SQL; -readonly makes any SQL harmless."""
    args = run.args
    codes: list[str] = []
    pos: list[W] = []
    readonly = False
    k = 0
    while k < len(args):
        t = args[k].text
        if t in ("-version", "--version", "-help", "--help", "-h"):
            k += 1
            if not codes and not pos and k >= len(args):
                return
            continue
        if t == "-readonly":
            readonly = True
        if t in _SQLITE_FLAGS0 or (t.startswith("-") and t.lstrip("-") in ("readonly", "safe")):
            k += 1
            continue
        if t in ("-init", "-f"):
            run.flag("unknown", f"{run.name} {t} runs a SQL file")
            return
        if t in _SQLITE_FLAGS1:
            k += 2
            continue
        if t in _SQLITE_FLAGS2:
            k += 3
            continue
        if t in ("-cmd", "-c", "-s") and k + 1 < len(args):
            codes.append(args[k + 1].text)
            k += 2
            continue
        pos.append(args[k])
        k += 1
    codes += [p.text for p in pos[1:]]
    dot_write = any(re.search(r"^\s*\.(shell|system|output|once|save|backup|import|restore|load|open|cd)", c, re.M)
                    for c in codes)
    if dot_write:
        run.flag("unknown", f"{run.name} dot-command writes files or runs commands")
        return
    if readonly and codes:
        return
    if readonly and not run.ctx.piped:
        # -readonly opens the database read-only; with no SQL and no piped/redirected input there is
        # nothing to run (a heredoc/here-string script is checked for dot-commands that write).
        stdin = run.ctx.stdin or ""
        if not re.search(r"^\s*\.(shell|system|output|once|save|backup|import|restore|load|open|cd)", stdin, re.M):
            return
    if not codes:
        run.flag("unknown", f"{run.name} interactive session / stdin")
        return
    _sql_codes_verdict(run, codes, run.name)


def _redis(run: _Run) -> None:
    opts, pos = _split_opts(run.args, ("-h", "-p", "-a", "-n", "-u", "--user", "--pass", "-s"))
    if not pos:
        if _has(opts, "--version", "--help"):
            return
        run.flag("unknown", "redis-cli interactive")
        return
    cmd = pos[0].text.lower()
    if cmd in ("flushall", "flushdb", "del", "unlink", "shutdown", "config"):
        run.flag("destructive", f"redis-cli {cmd}")
    elif cmd in ("get", "mget", "keys", "scan", "info", "ping", "ttl", "type", "exists", "hget", "hgetall",
                 "lrange", "smembers", "zrange", "llen", "scard", "dbsize", "strlen", "monitor"):
        return
    else:
        run.flag("mutating", f"redis-cli {cmd}")


def _sqlcmd(run: _Run) -> None:
    """go-sqlcmd: `sqlcmd query SQL`, `sqlcmd config view` ...; classic sqlcmd -Q/-q/-i."""
    opts, pos = _split_opts(run.args, ("-q", "--query", "-t", "--text", "-d", "--database", "-Q", "-i", "-S",
                                      "-U", "-P", "-o", "-c"))
    first = pos[0].text if pos else ""
    if _has(opts, "--help", "-h", "-?") and not (opts.keys() & {"-q", "--query", "-Q", "-i", "-t", "--text"}):
        return
    if first == "config" and len(pos) > 1 and pos[1].text in ("view", "cs", "connection-strings",
                                                               "get-contexts", "get-endpoints", "get-users",
                                                               "current-context"):
        return
    for v in opts.get("-o", []):
        run.write(W(v), "sqlcmd -o")
    codes = opts.get("-q", []) + opts.get("--query", []) + opts.get("-t", []) + opts.get("--text", []) + \
        opts.get("-Q", [])
    if first == "query":
        codes += [p.text for p in pos[1:]]
    if "-i" in opts or not codes:
        run.flag("unknown", "sqlcmd runs a script or an interactive session")
        return
    _sql_codes_verdict(run, codes, "sqlcmd")


RULES: dict[str, Callable[[_Run], None]] = {
    "psql": _sql_client, "mysql": _sql_client, "mariadb": _sql_client, "sqlite3": _sqlite, "duckdb": _sqlite,
    "redis-cli": _redis, "sqlcmd": _sqlcmd,
}
