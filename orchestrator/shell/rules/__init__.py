"""Per-program rules: one table per family, merged into one registry (``_RULES``: program name -> rule)."""
from __future__ import annotations

import re

from orchestrator.shell.words import W, _split_opts
from orchestrator.shell.programs import _READ_ONLY
from orchestrator.shell.rules.fs import (
    _chmod_like,
    _cp_like,
    _dd,
    _fd,
    _find,
    _ln,
    _mkdir,
    _mktemp,
    _rm,
    _rmdir,
    _shred,
    _tee,
    _touch,
    _truncate,
    _unlink,
)
from orchestrator.shell.rules.text import _awk, _base64, _fzf, _jq, _pager, _printf, _sed, _sort, _uniq_split, _yq
from orchestrator.shell.rules.archive import _7z, _compressor, _patch, _tar, _unzip, _zip
from orchestrator.shell.rules.net import _curl, _gpg, _ip, _openssl, _rsync, _scp, _ssh, _wget
from orchestrator.shell.rules.system import (
    _crontab,
    _dangerous_simple,
    _date,
    _dmesg,
    _dscl,
    _hostname,
    _ifconfig,
    _journalctl,
    _kill,
    _mac_tool,
    _pkg_query,
    _security,
    _sysctl,
)
from orchestrator.shell.rules.databases import _redis, _sql_client, _sqlcmd, _sqlite
from orchestrator.shell.rules.services import _S, _SERVICE_CLIS, _pip, _service_cli, _uv
from orchestrator.shell.rules.interpreters import _eval, _source
from orchestrator.shell.rules.wrappers import (
    _busybox,
    _chroot,
    _env,
    _parallel,
    _rtk,
    _script,
    _su,
    _timeout,
    _watch,
    _wrapper,
    _xargs,
)
from orchestrator.shell.rules.git import _git
from orchestrator.shell.rules.editors import _black, _editor
from orchestrator.shell.rules.builtins import _cd, _trap

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only (strings at runtime): keep `typing` off the import path
    from typing import Callable
    from orchestrator.shell.run import _Run


_RULES: dict[str, Callable[[_Run], None]] = {
    "rm": _rm, "rmdir": _rmdir, "unlink": _unlink, "shred": _shred, "srm": _shred, "wipe": _shred,
    "touch": _touch, "mkdir": _mkdir, "mkfifo": _mkdir, "mknod": _mkdir,
    "chmod": _chmod_like, "chown": _chmod_like, "chgrp": _chmod_like, "chattr": _chmod_like,
    "setfacl": _chmod_like, "xattr": lambda r: (None if not any(re.fullmatch(r"-[a-z]*[wdc][a-z]*", a.text)
                                                                for a in r.args)
                                                else r.flag("mutating", "xattr modifies attributes")),
    "cp": _cp_like, "mv": _cp_like, "ln": _ln, "install": _cp_like, "link": _cp_like,
    "tee": _tee, "dd": _dd, "truncate": _truncate, "sed": _sed, "gsed": _sed,
    "awk": _awk, "gawk": _awk, "mawk": _awk, "nawk": _awk,
    "find": _find, "gfind": _find, "fd": lambda r: _fd(r), "fdfind": lambda r: _fd(r),
    "xargs": _xargs, "tar": _tar, "gtar": _tar, "bsdtar": _tar,
    "unzip": _unzip, "zip": _zip, "7z": lambda r: _7z(r), "7za": lambda r: _7z(r), "7zr": lambda r: _7z(r),
    "gzip": _compressor, "gunzip": _compressor, "bzip2": _compressor, "bunzip2": _compressor, "xz": _compressor,
    "unxz": _compressor, "zstd": _compressor, "unzstd": _compressor, "lz4": _compressor, "lzma": _compressor,
    "patch": _patch, "rsync": _rsync, "scp": _scp, "curl": _curl, "wget": _wget,
    "kill": _kill, "pkill": _dangerous_simple("mutating", "{name} signals processes"),
    "killall": _dangerous_simple("mutating", "{name} signals processes"),
    "cd": _cd, "pushd": _cd, "popd": _cd, "eval": _eval, "source": _source, ".": _source,
    "timeout": _timeout, "gtimeout": _timeout, "watch": _watch, "chroot": _chroot, "parallel": _parallel,
    "sem": _parallel, "busybox": _busybox, "toybox": _busybox, "env": _env, "git": _git,
    "pip": _pip, "pip3": _pip, "psql": _sql_client, "mysql": _sql_client, "mariadb": _sql_client,
    "sqlite3": _sqlite, "duckdb": _sqlite, "redis-cli": _redis, "fzf": _fzf, "sk": _fzf,
    "openssl": _openssl, "crontab": _crontab, "sort": _sort, "uniq": _uniq_split, "split": _uniq_split,
    "csplit": _uniq_split, "mktemp": _mktemp, "dmesg": _dmesg, "journalctl": _journalctl, "sysctl": _sysctl,
    "date": _date, "hostname": _hostname, "ifconfig": _ifconfig, "iconv": lambda r: _sort(r), "yq": _yq, "jq": _jq, "printf": _printf,
    "black": _black, "ruff": _black, "prettier": _black, "gofmt": _black, "rustfmt": _black, "isort": _black,
    "base64": _base64, "gpg": _gpg, "gpg2": _gpg, "ssh": _ssh, "exec": lambda r: _wrapper(r),
    "sudoedit": lambda r: [r.write(p, "sudoedit") for p in r.args if not p.text.startswith("-")] and None,
    "vi": lambda r: _editor(r), "vim": lambda r: _editor(r), "nvim": lambda r: _editor(r),
    "nano": lambda r: _editor(r), "emacs": lambda r: _editor(r), "code": lambda r: _editor(r),
    "history": lambda r: (r.flag("mutating", "history -c/-d clears history")
                          if any(a.text in ("-c", "-d", "-w", "-a") for a in r.args) else None),
    "export": lambda r: None, "declare": lambda r: None, "local": lambda r: None, "readonly": lambda r: None,
    "typeset": lambda r: None, "set": lambda r: None, "unset": lambda r: None, "shopt": lambda r: None,
    "alias": lambda r: None, "unalias": lambda r: None, "umask": lambda r: None, "trap": lambda r: None,
    "read": lambda r: None, "wait": lambda r: None, "exit": lambda r: None, "return": lambda r: None,
    "break": lambda r: None, "continue": lambda r: None, "shift": lambda r: None, "getopts": lambda r: None,
    "ulimit": lambda r: None, "caller": lambda r: None, "complete": lambda r: None, "bind": lambda r: None,
    "enable": lambda r: None, "disown": lambda r: None, "bg": lambda r: None, "fg": lambda r: None,
    "mapfile": lambda r: None, "readarray": lambda r: None, "let": lambda r: None,
}


_RULES.update({
    "scutil": lambda r: (r.flag("unknown", "scutil opens an interactive prompt") if not r.args
                         else _SCUTIL_RO(r)),
    "prometheus": lambda r: (r.flag("unknown", "prometheus starts a server") if not r.args else _PROM_RO(r)),
    "networksetup": _mac_tool(("-get", "-list", "-show", "-print", "-is", "-version", "-help")),
    "_security_ro": _mac_tool(("find-", "show-", "dump-", "list-", "verify-", "cms", "smartcard-list", "get-",
                           "leaks", "translocate-", "requirement-evaluate",
                           "default-keychain", "login-keychain", "error", "authorizationdb read", "dump"),
                          destroy=("delete-",)),
    "_scutil_ro": _mac_tool(("--get", "--dns", "--proxy", "-r", "--nwi", "--nc list", "--nc status", "-w"),
                        ("-d",)),
    "defaults": _mac_tool(("read", "read-type", "domains", "find", "export", "help")),
    "pmset": _mac_tool(("-g",)),
    "security": _security,
    "tmutil": _mac_tool(("listbackups", "latestbackup", "machinedirectory", "destinationinfo", "isexcluded",
                         "compare", "calculatedrift", "uniquesize", "version", "status", "listlocalsnapshots",
                         "listlocalsnapshotdates", "verifychecksums"),
                        destroy=("delete", "thinlocalsnapshots")),
    "diskutil": _mac_tool(("list", "info", "activity", "listFilesystems", "apfs list", "verifyVolume",
                           "verifyDisk", "cs list"), destroy=("erase", "zeroDisk", "randomDisk",
                                                              "secureErase", "partitionDisk", "reformat")),
    # plutil FILE... defaults to -lint (a syntax check).
    "plutil": lambda r: (None if r.args and not any(a.text.startswith("-") for a in r.args)
                         else _mac_tool(("-p", "-lint", "-help", "-type", "-extract"))(r)),
    "launchctl_": _mac_tool(()),
    "csrutil": _mac_tool(("status", "report")),
    "spctl": _mac_tool(("--status", "--disable-status", "-a", "--assess", "--list", "--test", "--check")),
    "mdutil": _mac_tool(("-s",)),
    "codesign": _mac_tool(("-d", "--display", "-v", "--verify", "-dv", "-dvv", "-dvvv", "--validate-constraint")),
    "pkgutil": _mac_tool(("--pkgs", "--files", "--groups", "--pkg-groups", "--pkg-info", "--export-plist", "--file-info", "--packages",
                          "--group-pkgs", "--check-signature", "--payload-files", "--pkgs-plist")),
    "softwareupdate": _mac_tool(("-l", "--list", "--history", "--dump-state")),
    "nvram": _mac_tool(("-p", "-x")),
    "hdiutil": _mac_tool(("info", "imageinfo", "verify", "isencrypted", "checksum", "pmap", "plugins", "help")),
    # lipo takes the input file anywhere: read-only when an inspection operation is given and no output.
    "lipo": lambda r: (r.flag("unknown", "lipo without an operation") if not r.args else None
                       if any(a.text in ("-info", "-detailed_info", "-archs", "-verify_arch") for a in r.args)
                       and not any(a.text in ("-create", "-output", "-extract", "-extract_family", "-remove",
                                              "-replace", "-thin") for a in r.args)
                       else r.flag("mutating", "lipo writes a binary")),
    # sips with only file operands has no function to apply (it modifies only with -s/-r/-z/... options).
    "sips": lambda r: (None if r.args and not any(a.text.startswith("-") for a in r.args)
                       else _mac_tool(("-g", "--getProperty", "-1", "--verify"))(r)),
    "qlmanage": _mac_tool(("-m", "-h", "-p", "-t")),
    "mdimport": _mac_tool(("-L", "-A", "-X", "-t", "-n")),
    "say": lambda r: [r.write(W(a.text.split("=", 1)[1]) if "=" in a.text else
                              (r.args[k + 1] if k + 1 < len(r.args) else W("", True)), "say -o")
                      for k, a in enumerate(r.args) if a.text.split("=", 1)[0] in ("-o", "--output-file")] and None,
    "ping": lambda r: None,
    "sleep": lambda r: None,
    "pre-commit": _mac_tool((), ("--version", "help", "validate-config", "validate-manifest", "sample-config")),
    # Ad-hoc ansible runs a module on remote hosts (even -m ping ships and runs Python there): ask, unless
    # it only lists hosts, checks syntax or runs in --check mode.
    "ansible": lambda r: (None if any(a.text in ("--list-hosts", "--syntax-check", "--version", "--check", "-C",
                                                 "--help", "-h", "--list-tasks")
                                      for a in r.args)
                          else r.flag("unknown", "ansible runs modules on remote hosts")),
    "ansible-test": _mac_tool(("sanity", "units", "--version", "env")),
    # ansible-pull -C is --checkout (a branch), not --check.
    "ansible-pull": lambda r: (None if any(a.text in ("--help", "-h", "--version", "--check", "--list-hosts")
                                           for a in r.args) else r.flag("unknown", "ansible-pull runs a playbook")),
    "ansible-console": lambda r: (None if any(a.text in ("--help", "-h", "--version", "--list-hosts")
                                              for a in r.args) else r.flag("unknown", "ansible-console is a REPL")),
    "_prometheus_ro": _mac_tool(("--version", "--help", "-h", "--help-long")),
    "compression_tool": lambda r: (None if not any(a.text == "-o" for a in r.args)
                                   else r.write(r.args[[a.text for a in r.args].index("-o") + 1]
                                                if [a.text for a in r.args].index("-o") + 1 < len(r.args)
                                                else W("", True), "compression_tool -o")),
    "binhex": _mac_tool(("-h", "--help", "probe", "info", "-V", "--version"), stdout_flags=("-c", "--pipe",
                                                                                              "--to-stdout")),
    "applesingle": _mac_tool(("-h", "--help", "probe", "info", "-V", "--version"), stdout_flags=("-c", "--pipe",
                                                                                                   "--to-stdout")),
    "macbinary": _mac_tool(("-h", "--help", "probe", "info", "-V", "--version"), stdout_flags=("-c", "--pipe",
                                                                                                 "--to-stdout")),
    "open": lambda r: (None if any(a.text in ("-R", "--reveal") for a in r.args)
                       else r.flag("unknown", "open launches an application (which may run the file)")),
    "ditto": lambda r: _cp_like(r),
    "iptables": lambda r: (None if any(a.text in ("-L", "--list", "-S", "--list-rules", "-n") and
                                       not any(b.text in ("-A", "-D", "-F", "-X", "-I", "-R", "-P", "-Z", "-N")
                                               for b in r.args) for a in r.args)
                           else r.flag("destructive" if any(b.text in ("-F", "--flush", "-X") for b in r.args)
                                       else "mutating", "iptables changes firewall rules")),
    "base32": _base64, "basenc": _base64,
    "xxd": lambda r: [r.write(p, "xxd outfile") for p in _split_opts(
        r.args, ("-l", "-len", "-s", "-seek", "-c", "-cols", "-g", "-groupsize", "-o", "-offset", "-n", "-name"))[1][1:2]]
    and None,
    "mkswap": _dangerous_simple("destructive", "{name} formats a device"),
    "systemd-run": lambda r: r.flag("unknown", "systemd-run runs a command"),
    "docker-compose": lambda r: _service_cli(r, _SERVICE_CLIS["docker"]),
    "podman-compose": lambda r: _service_cli(r, _SERVICE_CLIS["docker"]),
    "bd": lambda r: _service_cli(r, _S(depth=1, read="list show ready blocked stats search ")),
    "java": lambda r: (None if any(a.text in ("-version", "--version", "-help", "--help") for a in r.args)
                       and len(r.args) == 1
                       else (r.flag("destructive", "java runs a destructive CLI command")
                             if any(a.text.lower().startswith(("delete", "remove", "drop", "purge"))
                                    for a in r.args)
                             else r.flag("unknown", "java runs a program"))),
    "7zz": lambda r: _7z(r),
    "ansible-doc": lambda r: None,
    "ansible-inventory": lambda r: (r.write(W(next((r.args[i + 1].text for i, a in enumerate(r.args[:-1])
                                                    if a.text == "--output"), "")), "ansible-inventory --output")
                                    if any(a.text == "--output" for a in r.args) else None),
    "ansible-lint": lambda r: (r.flag("mutating", "ansible-lint --fix rewrites files")
                               if any(a.text.startswith("--fix") or a.text == "--write" for a in r.args) else None),
    "ansible-playbook": lambda r: (None if any(a.text in ("--syntax-check", "--list-hosts", "--list-tasks",
                                                          "--list-tags", "--check", "-C", "--help", "-h",
                                                          "--version") for a in r.args)
                                   else r.flag("unknown", "ansible-playbook runs tasks on hosts")),
    "ansible-galaxy": lambda r: _service_cli(r, _S(depth=2, read="list search info verify")),
    "uv": lambda r: _uv(r),
    "terraform": lambda r: (_black(r) if r.args[:1] and r.args[0].text == "fmt"
                            else _service_cli(r, _SERVICE_CLIS["terraform"])),
    "tofu": lambda r: (_black(r) if r.args[:1] and r.args[0].text == "fmt"
                       else _service_cli(r, _SERVICE_CLIS["tofu"])),
    "packer": lambda r: (_black(r) if r.args[:1] and r.args[0].text == "fmt"
                         else _service_cli(r, _SERVICE_CLIS["packer"])),
    "cargo": lambda r: (_black(r) if r.args[:1] and r.args[0].text == "fmt"
                        else _service_cli(r, _SERVICE_CLIS["cargo"])),
    "ip": lambda r: _ip(r),
    "sqlcmd": lambda r: _sqlcmd(r),
    "symbols": lambda r: [r.write(r.args[k + 1], f"symbols {a.text}") for k, a in enumerate(r.args[:-1])
                          if a.text in ("-saveSignature", "-symbolsPackageDir")] and None,
    "poetry": lambda r: _uv(r),
    "rtk": lambda r: _rtk(r),
    "script": lambda r: _script(r),
    "sample": lambda r: (r.flag("unknown", "sample without a process") if not r.args else
                         [r.write(r.args[k + 1], "sample -file") for k, a in enumerate(r.args[:-1])
                          if a.text == "-file"] and None),
    "dscl": lambda r: _dscl(r),
    "profiles": lambda r: _service_cli(r, _S(depth=1, read="help status list show validate version")),
    "textutil": lambda r: (None if any(a.text in ("-stdout", "-info", "-help") for a in r.args)
                           else r.flag("mutating", "textutil converts files")),
    "rg": lambda r: (r.flag("unknown", "rg --pre runs a preprocessor command")
                     if any(a.text == "--pre" or a.text.startswith("--pre=") for a in r.args) else None),
    "less": lambda r: _pager(r), "more": lambda r: _pager(r), "most": lambda r: _pager(r),
    "man": lambda r: (r.flag("unknown", "man with a custom pager/browser runs it")
                      if any(a.text.startswith(("-P", "--pager", "-H", "--html")) for a in r.args) else None),
    "trap": lambda r: _trap(r),
    "alias": lambda r: (r.flag("unknown", "alias definitions change what later commands run")
                        if any("=" in a.text for a in r.args) else None),
    "hash": lambda r: (r.flag("unknown", "hash -p changes which binary a name runs")
                       if any(a.text.startswith("-p") for a in r.args) else None),
    "su": lambda r: _su(r),
    "dpkg": lambda r: _pkg_query(r, ("-l", "-L", "-s", "-S", "-p", "--list", "--listfiles", "--status", "--search",
                                     "--print-avail", "--get-selections", "--print-architecture", "-c",
                                     "--contents", "-I", "--info", "--compare-versions", "--audit", "-C")),
    "rpm": lambda r: _pkg_query(r, ("-q", "-qa", "-qi", "-ql", "-qf", "-qc", "-qd", "-qR", "--query", "-K",
                                    "--checksig", "-V", "--verify", "--eval", "--showrc", "-qp", "-qpl")),
    "hostnamectl": lambda r: (r.flag("mutating", "hostnamectl changes host settings")
                              if any(a.text.startswith("set-") for a in r.args) else None),
    "markdownlint": lambda r: (r.flag("mutating", "markdownlint --fix rewrites files")
                               if any(a.text == "--fix" for a in r.args) else None),
    "make": lambda r: (None if any(a.text in ("-n", "--dry-run", "--just-print", "--recon", "-q", "--question",
                                              "-v", "--version", "--help", "-h") for a in r.args)
                       else r.flag("unknown", "make runs recipes (arbitrary commands)", risk="runs-code")),
})


_READ_ONLY = _READ_ONLY - frozenset(_RULES)

_SECURITY_RO = _RULES.pop("_security_ro")
_SCUTIL_RO = _RULES.pop("_scutil_ro")
_PROM_RO = _RULES.pop("_prometheus_ro")
