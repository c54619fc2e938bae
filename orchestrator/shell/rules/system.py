"""Rules for system administration programs: signals, kernel/log readers, packages (dpkg/rpm), crontab and the
macOS tools (verb-prefix read-only dispatch)."""
from __future__ import annotations

import re

from orchestrator.shell.words import W, _has, _split_opts

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only (strings at runtime): keep `typing` off the import path
    from typing import Callable
    from orchestrator.shell.run import _Run


def _kill(run: _Run) -> None:
    opts, pos = _split_opts(run.args, ("-s", "-n"))
    if _has(opts, "-l", "-L", "--list") or not run.args:
        return
    targets = [a.text for a in run.args if not a.text.startswith("-") or re.fullmatch(r"-\d+", a.text)]
    raw = [a.text for a in run.args]
    if "-1" in raw[1:] or (raw and raw[-1] == "-1") or "1" == (targets[-1] if targets else ""):
        if raw.count("-1") >= 1 and (len(raw) >= 2 or raw[-1] == "-1"):
            run.flag("destructive", "kill -1 signals every process")
            return
    run.flag("mutating", f"{run.name} signals processes")


def _dangerous_simple(kind: str, why: str) -> Callable[[_Run], None]:
    def rule(run: _Run) -> None:
        opts, pos = _split_opts(run.args)
        if _has(opts, "--help", "--version") and not pos:
            return
        run.flag(kind, why.format(name=run.name))
    return rule


def _crontab(run: _Run) -> None:
    opts, pos = _split_opts(run.args, ("-u",))
    if _has(opts, "-r"):
        run.flag("destructive", "crontab -r deletes the crontab")
    elif _has(opts, "-l"):
        return
    else:
        run.flag("mutating", "crontab installs a crontab")


def _dmesg(run: _Run) -> None:
    opts, pos = _split_opts(run.args, ("-f", "-l", "--level", "-s", "-n", "--console-level", "-F", "--file"))
    if _has(opts, "-c", "-C", "--clear", "--read-clear", "-n", "--console-level", "-D", "-E",
            "--console-off", "--console-on"):
        run.flag("mutating", "dmesg clears or configures the kernel ring buffer")


def _journalctl(run: _Run) -> None:
    opts, pos = _split_opts(run.args, ())
    if any(o.startswith(("--vacuum", "--rotate", "--flush", "--sync", "--relinquish", "--setup-keys",
                         "--update-catalog")) for o in opts):
        run.flag("mutating", "journalctl changes the journal")


def _sysctl(run: _Run) -> None:
    if any("=" in a.text for a in run.args) or any(a.text in ("-w", "--write", "-p", "--load", "--system", "-f")
                                                   for a in run.args):
        run.flag("mutating", "sysctl sets kernel parameters")


def _date(run: _Run) -> None:
    if any(a.text in ("-s", "--set") or a.text.startswith("--set=") for a in run.args):
        run.flag("mutating", "date sets the clock")


def _hostname(run: _Run) -> None:
    opts, pos = _split_opts(run.args, ("-F", "--file"))
    if pos or _has(opts, "-F", "--file", "-b", "--boot"):
        run.flag("mutating", "hostname sets the host name")


def _ifconfig(run: _Run) -> None:
    if len(run.args) >= 2 and not any(a.text in ("-a", "-l", "-L", "-v") for a in run.args[:1]):
        run.flag("mutating", "ifconfig changes an interface")


def _pkg_query(run: _Run, read_opts: tuple[str, ...]) -> None:
    """dpkg / rpm: query options are read-only; install/remove/purge change the system."""
    texts = [a.text for a in run.args]
    if texts and all(t.startswith("-") is False or t in read_opts or t.startswith(read_opts) for t in texts) \
            and any(t in read_opts or t.startswith(read_opts) for t in texts):
        return
    if any(t in ("-r", "-P", "--remove", "--purge", "-e", "--erase") for t in texts):
        run.flag("destructive" if any(t in ("-P", "--purge") for t in texts) else "mutating",
                 f"{run.name} removes packages")
        return
    run.flag("mutating", f"{run.name} changes installed packages")


def _dscl(run: _Run) -> None:
    for a in run.args:
        t = a.text.lstrip("-")
        if t in ("read", "readall", "list", "search", "diff", "readpl", "readpli", "help", "q", "quit"):
            return
        if t in ("create", "append", "merge", "delete", "change", "passwd", "changei", "createpl", "deletepl",
                 "mcxset", "mcxdelete", "auth", "authonly"):
            run.flag("destructive" if t in ("delete", "deletepl", "mcxdelete") else "mutating", f"dscl -{t}")
            return
    run.flag("unknown", "dscl action not recognised")


def _security(run: _Run) -> None:
    if not run.args:
        run.flag("unknown", "security opens an interactive prompt")
        return
    first = run.args[0].text
    if first in ("list-keychains", "default-keychain", "login-keychain") and \
            any(a.text == "-s" for a in run.args[1:]):
        run.flag("mutating", f"security {first} -s changes the keychain search list")
        return
    _SECURITY_READ(run)


# -- verb-prefix read-only dispatch for macOS tools ------------------------------------------------------
def _mac_tool(read_prefixes: tuple[str, ...], read_exact: tuple[str, ...] = (),
              destroy: tuple[str, ...] = (), stdout_flags: tuple[str, ...] = ()) -> Callable[[_Run], None]:
    def rule(run: _Run) -> None:
        if stdout_flags and any(a.text in stdout_flags for a in run.args):
            return  # output goes to stdout
        args = run.args
        if run.name == "defaults":
            # global options before the verb: -currentHost, -host NAME
            while args and args[0].text in ("-currentHost", "-host"):
                args = args[2:] if args[0].text == "-host" else args[1:]
        first = args[0].text if args else ""
        if not run.args:
            run.flag("unknown", f"{run.name} without a subcommand")
            return
        if first in ("-h", "--help", "-help", "help", "--version", "-version", "version"):
            return
        if first.startswith(destroy) and destroy:
            run.flag("destructive", f"{run.name} {first}")
            return
        if first.startswith(read_prefixes) or first in read_exact:
            return
        run.flag("mutating", f"{run.name} {first}")
    return rule



_SECURITY_READ = _mac_tool(("find-", "show-", "dump-", "list-", "verify-", "cms", "smartcard-list", "get-", "leaks",
                            "translocate-", "requirement-evaluate", "default-keychain", "login-keychain", "error",
                            "authorizationdb read", "dump"), destroy=("delete-",))
_SCUTIL_READ = _mac_tool(("--get", "--dns", "--proxy", "-r", "--nwi", "--nc list", "--nc status", "-w"), ("-d",))
_PROMETHEUS_READ = _mac_tool(("--version", "--help", "-h", "--help-long"))
_PLUTIL_READ = _mac_tool(("-p", "-lint", "-help", "-type", "-extract"))
_SIPS_READ = _mac_tool(("-g", "--getProperty", "-1", "--verify"))
_APPLE_ARCHIVERS = _mac_tool(("-h", "--help", "probe", "info", "-V", "--version"),
                             stdout_flags=("-c", "--pipe", "--to-stdout"))


def _scutil(run: _Run) -> None:
    if not run.args:
        run.flag("unknown", "scutil opens an interactive prompt")
    else:
        _SCUTIL_READ(run)


def _prometheus(run: _Run) -> None:
    if not run.args:
        run.flag("unknown", "prometheus starts a server")
    else:
        _PROMETHEUS_READ(run)


def _plutil(run: _Run) -> None:
    if run.args and not any(a.text.startswith("-") for a in run.args):
        return  # plutil FILE... defaults to -lint (a syntax check)
    _PLUTIL_READ(run)


def _sips(run: _Run) -> None:
    if run.args and not any(a.text.startswith("-") for a in run.args):
        return  # with only file operands sips has no function to apply (it modifies only with -s/-r/-z/...)
    _SIPS_READ(run)


def _lipo(run: _Run) -> None:
    """lipo takes the input file anywhere: read-only when an inspection operation is given and no output."""
    if not run.args:
        run.flag("unknown", "lipo without an operation")
    elif any(a.text in ("-info", "-detailed_info", "-archs", "-verify_arch") for a in run.args) and \
            not any(a.text in ("-create", "-output", "-extract", "-extract_family", "-remove", "-replace", "-thin")
                    for a in run.args):
        return
    else:
        run.flag("mutating", "lipo writes a binary")


def _say(run: _Run) -> None:
    for k, a in enumerate(run.args):
        if a.text.split("=", 1)[0] in ("-o", "--output-file"):
            if "=" in a.text:
                run.write(W(a.text.split("=", 1)[1]), "say -o")
            else:
                run.write(run.args[k + 1] if k + 1 < len(run.args) else W("", True), "say -o")


def _symbols(run: _Run) -> None:
    for k, a in enumerate(run.args[:-1]):
        if a.text in ("-saveSignature", "-symbolsPackageDir"):
            run.write(run.args[k + 1], f"symbols {a.text}")


def _sample(run: _Run) -> None:
    if not run.args:
        run.flag("unknown", "sample without a process")
        return
    for k, a in enumerate(run.args[:-1]):
        if a.text == "-file":
            run.write(run.args[k + 1], "sample -file")


def _open(run: _Run) -> None:
    if not any(a.text in ("-R", "--reveal") for a in run.args):
        run.flag("unknown", "open launches an application (which may run the file)")


def _hostnamectl(run: _Run) -> None:
    if any(a.text.startswith("set-") for a in run.args):
        run.flag("mutating", "hostnamectl changes host settings")


def _dpkg(run: _Run) -> None:
    _pkg_query(run, ("-l", "-L", "-s", "-S", "-p", "--list", "--listfiles", "--status", "--search", "--print-avail",
                     "--get-selections", "--print-architecture", "-c", "--contents", "-I", "--info",
                     "--compare-versions", "--audit", "-C"))


def _rpm(run: _Run) -> None:
    _pkg_query(run, ("-q", "-qa", "-qi", "-ql", "-qf", "-qc", "-qd", "-qR", "--query", "-K", "--checksig", "-V",
                     "--verify", "--eval", "--showrc", "-qp", "-qpl"))


def _no_effect(run: _Run) -> None:
    """sleep: read-only whatever its arguments (ping is a resolver: shell/rules/net.py)."""


_signals = _dangerous_simple("mutating", "{name} signals processes")

RULES: dict[str, Callable[[_Run], None]] = {
    "kill": _kill, "pkill": _signals, "killall": _signals,
    "mkswap": _dangerous_simple("destructive", "{name} formats a device"),
    "dmesg": _dmesg, "journalctl": _journalctl, "sysctl": _sysctl, "date": _date, "hostname": _hostname,
    "ifconfig": _ifconfig, "crontab": _crontab, "dpkg": _dpkg, "rpm": _rpm, "hostnamectl": _hostnamectl,
    "sleep": _no_effect,
    # macOS
    "scutil": _scutil, "networksetup": _mac_tool(("-get", "-list", "-show", "-print", "-is", "-version", "-help")),
    "defaults": _mac_tool(("read", "read-type", "domains", "find", "export", "help")),
    "pmset": _mac_tool(("-g",)), "security": _security, "dscl": _dscl,
    "tmutil": _mac_tool(("listbackups", "latestbackup", "machinedirectory", "destinationinfo", "isexcluded",
                         "compare", "calculatedrift", "uniquesize", "version", "status", "listlocalsnapshots",
                         "listlocalsnapshotdates", "verifychecksums"),
                        destroy=("delete", "thinlocalsnapshots")),
    "diskutil": _mac_tool(("list", "info", "activity", "listFilesystems", "apfs list", "verifyVolume",
                           "verifyDisk", "cs list"), destroy=("erase", "zeroDisk", "randomDisk",
                                                              "secureErase", "partitionDisk", "reformat")),
    "plutil": _plutil, "csrutil": _mac_tool(("status", "report")),
    "spctl": _mac_tool(("--status", "--disable-status", "-a", "--assess", "--list", "--test", "--check")),
    "mdutil": _mac_tool(("-s",)),
    "codesign": _mac_tool(("-d", "--display", "-v", "--verify", "-dv", "-dvv", "-dvvv", "--validate-constraint")),
    "pkgutil": _mac_tool(("--pkgs", "--files", "--groups", "--pkg-groups", "--pkg-info", "--export-plist",
                          "--file-info", "--packages", "--group-pkgs", "--check-signature", "--payload-files",
                          "--pkgs-plist")),
    "softwareupdate": _mac_tool(("-l", "--list", "--history", "--dump-state")),
    "nvram": _mac_tool(("-p", "-x")),
    "hdiutil": _mac_tool(("info", "imageinfo", "verify", "isencrypted", "checksum", "pmap", "plugins", "help")),
    "lipo": _lipo, "sips": _sips, "qlmanage": _mac_tool(("-m", "-h", "-p", "-t")),
    "mdimport": _mac_tool(("-L", "-A", "-X", "-t", "-n")), "say": _say,
    "binhex": _APPLE_ARCHIVERS, "applesingle": _APPLE_ARCHIVERS, "macbinary": _APPLE_ARCHIVERS,
    "open": _open, "symbols": _symbols, "sample": _sample,
    "pre-commit": _mac_tool((), ("--version", "help", "validate-config", "validate-manifest", "sample-config")),
    "prometheus": _prometheus, "ansible-test": _mac_tool(("sanity", "units", "--version", "env")),
}
