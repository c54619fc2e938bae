"""Per-program rules: one table per program family, looked up through one registry.

Each family module (:mod:`.fs`, :mod:`.text`, :mod:`.archive`, :mod:`.net`, :mod:`.system`, :mod:`.databases`,
:mod:`.services`, :mod:`.interpreters`, :mod:`.wrappers`, :mod:`.git`, :mod:`.servers`, :mod:`.editors`,
:mod:`.builtins`) ends
with its ``RULES`` table (program name -> rule, a function of :class:`orchestrator.shell.run._Run`); a program
belongs to exactly one family. :func:`rule_for` finds a program's rule, importing its family on first use: a
one-shot hook process that analyzes ``git status`` loads the git rules, not the macOS or cloud ones (the
package's import cost stays that of the single module it replaced). :data:`_FAMILY_OF` names each program's
family; ``tests/shell/test_package.py`` checks it against the tables themselves.

Shell-wide checks that run for every command (:mod:`.secrets`, :mod:`.outside`) and where git writes
(:mod:`.git_writes`, loaded on demand) are not in the registry.
"""
from __future__ import annotations

from orchestrator.shell.programs import _READ_ONLY as _ALL_READ_ONLY

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only (strings at runtime): keep `typing` off the import path
    from types import ModuleType
    from typing import Callable

    from orchestrator.shell.run import _Run

_PROGRAMS: dict[str, str] = {
    "fs": "chattr chgrp chmod chown cp dd ditto fd fdfind find gfind install link ln mkdir mkfifo mknod mktemp "
             "mv rm rmdir setfacl shred srm tee touch truncate unlink wipe xattr",
    "text": "awk base32 base64 basenc csplit fzf gawk gsed iconv jq less man mawk more most nawk printf rg sed sk "
             "sort split textutil uniq xxd yq",
    "archive": "7z 7za 7zr 7zz bsdtar bunzip2 bzip2 compression_tool gtar gunzip gzip lz4 lzma patch tar unxz unzip "
             "unzstd xz zip zstd",
    "net": "curl ftp gpg gpg2 ip iptables lftp nc ncat netcat openssl rsync scp sftp socat ssh telnet wget "
           "dig nslookup host drill getent ping ping6 traceroute tracepath whois http https xh xhs "
           "mail mailx s-nail sendmail swaks mutt msmtp ngrok cloudflared lt localtunnel bore",
    "system": "ansible-test applesingle binhex codesign crontab csrutil date defaults diskutil dmesg dpkg dscl hdiutil "
             "hostname hostnamectl ifconfig journalctl kill killall lipo macbinary mdimport mdutil mkswap networksetup "
             "nvram open pkgutil pkill plutil pmset pre-commit prometheus qlmanage rpm sample say scutil "
             "security sips sleep softwareupdate spctl symbols sysctl tmutil",
    "databases": "duckdb mariadb mysql psql redis-cli sqlcmd sqlite3",
    "services": "ansible ansible-console ansible-doc ansible-galaxy ansible-inventory ansible-lint ansible-playbook "
             "ansible-pull bd cargo docker-compose packer pip pip3 podman-compose poetry profiles "
             "terraform tofu uv",
    "interpreters": ". eval java make source",
    "wrappers": "busybox chroot env exec gtimeout parallel rtk script sem su systemd-run timeout toybox watch xargs",
    "git": "git",
    "servers": "busctl byobu dbus-run-session dbus-send emacsclient gdbus qdbus screen tmux zellij",
    "editors": "black code emacs gofmt isort markdownlint nano nvim prettier ruff rustfmt sudoedit vi vim",
    "builtins": "alias bg bind break caller cd complete continue declare disown enable exit export fg getopts hash "
             "history let local mapfile popd pushd read readarray readonly return set shift shopt trap typeset "
             "ulimit umask unalias unset wait",
}

#: program name -> the family module holding its rule
_FAMILY_OF: dict[str, str] = {name: family for family, names in _PROGRAMS.items() for name in names.split()}
FAMILIES = tuple(_PROGRAMS)

#: the service CLIs of :data:`.services._SERVICE_CLIS` (verb trees), so that an unknown program does not load that
#: family just to learn it is not one of them; tests/shell/test_package.py checks it against the table
_SERVICE_NAMES = frozenset("""
ansible-config ansible-vault apigeecli apt apt-cache auth0 aws az azcopy borg brew cargo cdk
circleci conda deck docker doctl doppler eksctl fastly firebase flatpak flipt fly flyctl gcloud gem
gh glab go gsutil hcloud helm heroku ip k3d kind kong kubectl launchctl ldcli linode-cli mc minikube
nats netlify newrelic npm oc op packer pip pip3 pnpm podman poetry pulumi rabbitmqadmin rabbitmqctl
rclone restic snap stripe systemctl terraform tofu unleash uv vault velero vercel wrangler yarn
""".split())

#: programs that never write by themselves and have no rule
_READ_ONLY = _ALL_READ_ONLY - frozenset(_FAMILY_OF)


def family(name: str) -> ModuleType:
    """The family module ``name`` (imported on first use)."""
    return __import__(f"{__name__}.{name}", fromlist=("RULES",))


def rule_for(program: str) -> Callable[[_Run], None] | None:
    """The rule of ``program``, or None when no family has one."""
    fam = _FAMILY_OF.get(program)
    return None if fam is None else family(fam).RULES[program]


def all_rules() -> dict[str, Callable[[_Run], None]]:
    """Every family's table merged (imports them all); a program listed in two families is an error."""
    merged: dict[str, Callable[[_Run], None]] = {}
    for fam in FAMILIES:
        for name, rule in family(fam).RULES.items():
            if name in merged:
                raise RuntimeError(f"{name!r} has a rule in two families ({fam})")
            merged[name] = rule
    return merged
