"""Program and subcommand tables that more than one module consults (read-only programs, shells, wrappers, git's
read-only subcommands and harmless configuration keys...)."""
from __future__ import annotations

from orchestrator.shell.parse import _LazyRe


_DEV_NULLISH = _LazyRe(r"^/dev/(null|stdout|stderr|stdin|tty|fd/\d+|zero)$")
_DEV_BLOCK = _LazyRe(r"^/dev/(sd|hd|vd|xvd|nvme|mmcblk|disk|rdisk|md|dm-|loop|mapper/|sr)")


# ----------------------------------------------------------------------------------------------------------
# program tables

# Programs that never modify files by themselves (given no redirection; rules below override these).
_READ_ONLY = frozenset("""
ls ll la l dir vdir exa eza lsd tree cat bat batcat tac nl head tail less more most wc grep egrep fgrep rg ag
ack pwd echo printf which whereis type hash whatis apropos man info help date cal uptime free stat file du df
ps pgrep pstree top htop btop sort uniq cut paste join comm fold fmt column expand unexpand tr rev tsort jq yq
gron diff diff3 sdiff cmp colordiff delta test [ [[ true false : uname whoami id groups hostname sha1sum
sha224sum sha256sum sha384sum sha512sum md5sum md5 shasum b2sum cksum sum crc32 basename dirname realpath
readlink locate mlocate plocate fd fdfind printenv nproc lscpu lsblk lsusb lspci lsmod lsof ss
netstat dig host nslookup whois ping ping6 traceroute tracepath mtr getconf locale tty logname users who w
last lastlog sleep seq yes expr factor bc dc numfmt od hexdump xxd strings base32 base64 basenc look vmstat
iostat mpstat sar sw_vers system_profiler mdfind mdls uuidgen cloc tokei scc jless fx glow mdcat csvlook xsv
qsv tldr cheat shellcheck hadolint yamllint jsonlint actionlint nm objdump readelf otool size
getent finger pinky namei envsubst tput clear dirs jobs let wait shift times getopts compgen ulimit diffstat
wdiff lesspipe zcat zless zmore zgrep zegrep zfgrep bzcat bzgrep bzless xzcat xzgrep xzless lzcat zstdcat
lz4cat pv
""".split())

# Programs whose output only goes to stdout unless an option says otherwise (handled by rules below).
_SHELLS = frozenset("sh bash zsh dash ksh mksh fish ash busybox_sh tcsh csh yash".split())
_INTERPRETERS = frozenset("""python python2 python3 pypy pypy3 node nodejs deno bun perl ruby php lua luajit
Rscript R julia tclsh osascript irb jshell groovy scala elixir erl pwsh powershell""".split())
_DOWNLOADERS = frozenset("curl wget fetch aria2c http https xh httpie lwp-request GET".split())

# Flags of wrappers that consume a value, so the value is not taken as the wrapped program.
_WRAPPERS: dict[str, frozenset[str]] = {
    "sudo": frozenset("-u -g -C -D -h -p -r -t -U -T --user --group --chdir --host --prompt --role --type "
                      "--other-user --command-timeout --close-from".split()),
    "doas": frozenset("-u -C".split()),
    "nice": frozenset("-n --adjustment".split()),
    "ionice": frozenset("-c -n -p -P -u --class --classdata".split()),
    "nohup": frozenset(),
    "arch": frozenset("-d -e --arch".split()),
    "setsid": frozenset(),
    "time": frozenset("-f -o --format --output".split()),
    "command": frozenset(),
    "builtin": frozenset(),
    "exec": frozenset("-a".split()),
    "stdbuf": frozenset("-i -o -e --input --output --error".split()),
    "unbuffer": frozenset(),
    "caffeinate": frozenset("-t -w".split()),
    "taskset": frozenset(),
    "chrt": frozenset(),
    "flock": frozenset("-w -E --timeout --conflict-exit-code".split()),
    "torsocks": frozenset(),
    "proxychains": frozenset("-f".split()),
    "proxychains4": frozenset("-f".split()),
    "firejail": frozenset(),
    "catchsegv": frozenset(),
    "noglob": frozenset(),
    "nocorrect": frozenset(),
    "rlwrap": frozenset(),
    "coproc": frozenset(),
    "run0": frozenset("-u --user".split()),
    "pkexec": frozenset("--user".split()),
}


_UNICODE_DASHES = frozenset("\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe63\uff0d")
_SYSTEM_BIN = _LazyRe(r"^/(usr/(local/)?)?s?bin/[^/]+$|^/opt/homebrew/bin/[^/]+$|^/bin/[^/]+$|"
                      r"^/usr/libexec/[^/]+$|^/home/linuxbrew/\.linuxbrew/bin/[^/]+$")
_HELP_ARGS = frozenset("--help -h -help --version -version -V help version -?".split())
_DISK_TOOLS = frozenset("fdisk sfdisk cfdisk gdisk sgdisk parted wipefs mkswap blkdiscard badblocks mke2fs "
                        "mkdosfs mkntfs mke2fs newfs newfs_apfs newfs_hfs newfs_msdos zap-disk "
                        "diskutil_erase cryptsetup zpool_destroy lvremove vgremove pvremove mdadm "
                        "hdparm".split())
_POWER = frozenset("shutdown reboot halt poweroff".split())


# git: read by the git rule (rules/git.py) and by where git writes (rules/git_writes.py)

_GIT_READ = frozenset("""status log diff show blame annotate rev-parse rev-list ls-files ls-tree ls-remote cat-file
describe shortlog grep whatchanged diff-tree diff-index diff-files cherry range-diff name-rev merge-base show-ref
for-each-ref var version help check-ignore check-attr check-mailmap count-objects fsck verify-commit verify-tag
verify-pack show-branch get-tar-commit-id column fmt-merge-msg interpret-trailers check-ref-format hash-object
show-index""".split())


_GIT_SAFE_CONFIG = ("color.", "user.", "advice.", "log.", "i18n.", "init.", "safe.directory", "core.quotepath",
                    "core.autocrlf", "core.safecrlf", "core.longpaths", "core.abbrev", "column.", "format.pretty",
                    "pull.rebase", "push.default", "diff.renames", "diff.algorithm", "merge.conflictstyle",
                    "status.", "blame.", "grep.linenumber", "grep.extendedregexp", "core.ignorecase",
                    "protocol.version", "http.sslverify", "fetch.prune", "commit.gpgsign", "tag.gpgsign",
                    "rebase.autostash", "maintenance.auto", "gc.auto")
