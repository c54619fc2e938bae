"""The environment a sandboxed command inherits: an allow-list of names, and no value that looks like a credential.

The launcher used to drop the names that look like secrets (``*_TOKEN``, ``*SECRET*``...) and pass the rest; the second
held-out red team posted ``os.environ`` and got ``ORCH_OTEL_EXPORTER_OTLP_HEADERS``, ``ANTHROPIC_CUSTOM_HEADERS``,
``SYSTEM_ACCESSTOKEN``, ``NGROK_AUTHTOKEN``, ``OP_SESSION_<account>``, ``BUNDLE_GITHUB__COM``, ``GIT_CONFIG_VALUE_0``
and ``HTTPS_PROXY=http://TOKEN@proxy`` (issue 28, finding 4): credentials have other names. So the default is
inverted, as sudo's ``env_reset``/``env_keep`` and Codex's ``shell_environment_policy`` do it. A variable reaches the
command when (:func:`reason`, the one rule both launchers apply):

1. policy ``sandbox.env_keep`` names it *exactly* (no ``*``): passed as it is, a credential included — the person
   decided that a build needs it (``env_keep: [NPM_TOKEN]``);
2. else its name is one of :data:`ENV_CORE`, or matches :data:`ENV_ALLOW` or an ``env_keep`` glob, and (core names
   exempt) matches no ``sandbox.env_scrub`` pattern (default :data:`SECRET_ENV`);
3. and its value does not look like a credential (:func:`credential`): a URL's user info with or without a password
   (``https://TOKEN@host``, ``http://u:p@proxy``), a well-known token shape (GitHub, GitLab, Slack, AWS key ids,
   OpenAI/Anthropic ``sk-``, npm, Hugging Face, Google, PyPI, Docker Hub, Stripe...), a JWT, an ``Authorization``,
   API-key or cookie header, a ``Bearer``/``Basic`` credential, a credential in a URL query, a PEM block.

Every other variable is dropped. :data:`ENV_ALLOW` is what builds, tests and package managers read (the groups below
say why each is there); the everyday corpus (tests/sandbox/test_corpus.py, bench/bench_sandbox_corpus.py) runs with it.
The launcher then sets its own variables on top (``TMPDIR``, ``ORCH_SANDBOXED``; the egress proxy's variables).

ONE source for both launchers: the Python launcher (landlock.py, run as ``python -I -S``) imports this module beside
it (stdlib only, no ``re``: it must stay cheap to import); the compiled launcher gets the same lists as a header
generated from it at build time (:func:`c_header`, written by compiled.py beside its private copy of launcher.c),
and launcher.c implements :func:`reason` and :func:`credential` step for step. tests/sandbox/test_envpolicy.py runs
both launchers on the same environments and compares what each command sees.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # keep `typing` off the launcher's import path
    from collections.abc import Iterable, Iterator, Mapping

#: never dropped by a name pattern (a program misbehaves without them; ``SSH_AUTH_SOCK`` would match ``*_AUTH_*``);
#: their values are still checked
ENV_CORE = ("PATH", "HOME", "PWD", "OLDPWD", "SHELL", "USER", "LOGNAME", "TERM", "LANG", "TMPDIR", "SSH_AUTH_SOCK")

#: the names (``*`` globs, case-insensitive) a sandboxed command inherits besides ENV_CORE, when no name pattern and
#: no credential-shaped value drops them. Each group says why; ``sandbox.env_keep`` adds more.
ENV_ALLOW = (
    # the session, the terminal and the locale: what every program reads (sudo's env_reset keeps the same kind)
    "USERNAME", "HOSTNAME", "TZ", "LANGUAGE", "LC_*", "TMP", "TEMP", "EDITOR", "VISUAL", "PAGER", "COLORTERM",
    "COLUMNS", "LINES", "NO_COLOR", "FORCE_COLOR", "CLICOLOR", "CLICOLOR_FORCE", "XDG_*", "DEBIAN_FRONTEND",
    # the agent hosts' own markers: tools and tests change behaviour under an agent (Codex tells them the network is
    # off), and none is a credential
    "CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT", "CODEX_SANDBOX", "CODEX_SANDBOX_NETWORK_DISABLED", "GEMINI_CLI",
    # CI markers: test runners and package managers switch to non-interactive output on them
    "CI", "CONTINUOUS_INTEGRATION", "GITHUB_ACTIONS", "GITLAB_CI", "BUILDKITE", "CIRCLECI", "TRAVIS", "TF_BUILD",
    "TEAMCITY_VERSION", "APPVEYOR", "JENKINS_URL", "BITBUCKET_BUILD_NUMBER", "CODEBUILD_BUILD_ID", "DRONE",
    # network settings a build needs behind a proxy or a TLS-inspecting gateway (a proxy URL with a user in it is a
    # credential: dropped by its value); the egress proxy sets its own proxy variables after the scrub
    "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "FTP_PROXY",
    "SSL_CERT_FILE", "SSL_CERT_DIR", "*CA_BUNDLE*", "*CA_CERTS*", "*_CAINFO", "*_CAPATH", "*_CAFILE", "*CERT_FILE",
    "GRPC_DEFAULT_SSL_ROOTS_FILE_PATH",
    # git: who commits, which editor and pager, how it reaches an SSH remote (not GIT_CONFIG_* or GIT_ASKPASS: a
    # config entry can carry an http.extraheader, an askpass program hands out credentials)
    "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "GIT_EDITOR", "GIT_PAGER",
    "GIT_SSH", "GIT_SSH_COMMAND", "GIT_TERMINAL_PROMPT", "GIT_CONFIG_NOSYSTEM", "GIT_CEILING_DIRECTORIES",
    "GIT_LFS_SKIP_SMUDGE",
    # C and C++ toolchains and build systems
    "CC", "CXX", "CPP", "LD", "AR", "CFLAGS", "CXXFLAGS", "CPPFLAGS", "LDFLAGS", "LDLIBS", "LD_LIBRARY_PATH",
    "LIBRARY_PATH", "CPATH", "C_INCLUDE_PATH", "CPLUS_INCLUDE_PATH", "PKG_CONFIG_PATH", "PKG_CONFIG_LIBDIR",
    "MAKEFLAGS", "MAKELEVEL", "CMAKE_*", "CCACHE_*", "NINJA_STATUS", "SOURCE_DATE_EPOCH",
    # Python: the active environment and interpreter, and the installers' settings (their index URLs are values:
    # one with a user in it is dropped; POETRY_PYPI_TOKEN_*, UV_INDEX_*_PASSWORD... by the name patterns)
    "VIRTUAL_ENV", "VIRTUAL_ENV_PROMPT", "CONDA_*", "MAMBA_*", "PYENV_*", "PYTHON*", "PIP_*", "PIPX_*", "UV_*",
    "POETRY_*", "PDM_*", "HATCH_*", "PIPENV_*", "PYTEST_*", "TOX_*", "NOX_*",
    # Node: version managers, the runtime's settings, npm/yarn/pnpm configuration (an auth token there is dropped by
    # its name, `*AUTHTOKEN*`, `*_AUTH`, and by its value)
    "NVM_*", "NODE_PATH", "NODE_OPTIONS", "NODE_ENV", "NODE_EXTRA_CA_CERTS", "NPM_CONFIG_*", "YARN_*", "PNPM_HOME",
    "COREPACK_*", "VOLTA_HOME", "BUN_INSTALL", "DENO_DIR", "DENO_INSTALL",
    # Go (the module proxy and private-module settings; GOPROXY with a user in it is dropped by its value)
    "GOPATH", "GOROOT", "GOBIN", "GOFLAGS", "GOPROXY", "GOPRIVATE", "GONOPROXY", "GONOSUMDB", "GONOSUMCHECK",
    "GOSUMDB", "GOINSECURE", "GOCACHE", "GOMODCACHE", "GOENV", "GOWORK", "GOTOOLCHAIN", "GOEXPERIMENT", "GOOS",
    "GOARCH", "GOAMD64", "GOARM", "GODEBUG", "GOMAXPROCS", "GOGC", "CGO_*",
    # Rust (CARGO_REGISTRY_TOKEN and CARGO_REGISTRIES_*_TOKEN are dropped by `*_TOKEN`)
    "CARGO_*", "RUSTUP_*", "RUSTC", "RUSTC_WRAPPER", "RUSTFLAGS", "RUSTDOCFLAGS", "RUST_BACKTRACE", "RUST_LOG",
    # JVM, .NET, Ruby, Android, Nix, version managers (BUNDLE_* is not listed whole: BUNDLE_<HOST> is a credential)
    "JAVA_HOME", "JDK_HOME", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "MAVEN_HOME", "MAVEN_OPTS", "M2_HOME",
    "GRADLE_HOME", "GRADLE_USER_HOME", "GRADLE_OPTS", "DOTNET_ROOT", "DOTNET_CLI_TELEMETRY_OPTOUT", "NUGET_PACKAGES",
    "GEM_HOME", "GEM_PATH", "RUBYLIB", "RUBYOPT", "RBENV_*", "BUNDLE_PATH", "BUNDLE_GEMFILE", "BUNDLE_WITHOUT",
    "BUNDLE_WITH", "BUNDLE_DEPLOYMENT", "BUNDLE_FROZEN", "BUNDLE_JOBS", "BUNDLE_APP_CONFIG", "BUNDLE_USER_HOME",
    "ANDROID_HOME", "ANDROID_SDK_ROOT", "NIX_*", "IN_NIX_SHELL", "ASDF_*", "MISE_*",
)

#: name patterns dropped even when the allow-list or an ``env_keep`` glob names them (case-insensitive ``*`` globs):
#: the default of policy ``sandbox.env_scrub``
SECRET_ENV = ("*_TOKEN", "*_TOKEN_*", "TOKEN", "*_KEY", "*_KEY_*", "*_KEYS", "*APIKEY*", "*API_KEY*", "*SECRET*",
              "*PASSWORD*", "*PASSWD*", "*_PASS", "*_PWD", "*CREDENTIAL*", "*_AUTH", "*_AUTH_*", "*_PAT", "*COOKIE*",
              "*_SESSION", "*_SESSION_ID", "AWS_ACCESS_KEY_ID", "*_ACCESS_KEY*", "*_PRIVATE_*", "*_DSN",
              "DATABASE_URL", "*_CONNECTION_STRING", "NETRC", "VAULT_*", "OP_SERVICE_ACCOUNT*", "*WEBHOOK*",
              "*PASSPHRASE*", "*_JWT", "*_JWT_*", "*AUTHTOKEN*", "*ACCESSTOKEN*", "*_HEADERS", "OP_SESSION_*")

#: character classes of a token's body
ALNUM, WORD, UPPER = 0, 1, 2
#: (prefix, class, shortest body after it, what it is): a value holding the prefix at a word start followed by that
#: many characters of the class is a credential. Sources: each vendor's documented token format.
TOKEN_SHAPES = (
    ("ghp_", ALNUM, 36, "GitHub token"), ("gho_", ALNUM, 36, "GitHub token"), ("ghu_", ALNUM, 36, "GitHub token"),
    ("ghs_", ALNUM, 36, "GitHub token"), ("ghr_", ALNUM, 36, "GitHub token"),
    ("github_pat_", WORD, 22, "GitHub token"),
    ("glpat-", WORD, 20, "GitLab token"), ("gldt-", WORD, 20, "GitLab token"), ("glrt-", WORD, 20, "GitLab token"),
    ("glptt-", WORD, 20, "GitLab token"), ("glcbt-", WORD, 20, "GitLab token"), ("glft-", WORD, 20, "GitLab token"),
    ("gloas-", WORD, 20, "GitLab token"),
    ("xoxb-", WORD, 10, "Slack token"), ("xoxp-", WORD, 10, "Slack token"), ("xoxa-", WORD, 10, "Slack token"),
    ("xoxo-", WORD, 10, "Slack token"), ("xoxs-", WORD, 10, "Slack token"), ("xoxr-", WORD, 10, "Slack token"),
    ("xoxe-", WORD, 10, "Slack token"), ("xapp-", WORD, 10, "Slack token"),
    ("AKIA", UPPER, 16, "AWS access key id"), ("ASIA", UPPER, 16, "AWS access key id"),
    ("sk-", WORD, 20, "API key (sk-)"), ("sk_live_", ALNUM, 16, "Stripe key"), ("rk_live_", ALNUM, 16, "Stripe key"),
    ("sk_test_", ALNUM, 16, "Stripe key"), ("npm_", ALNUM, 36, "npm token"), ("hf_", ALNUM, 30, "Hugging Face token"),
    ("AIza", WORD, 35, "Google API key"), ("ya29.", WORD, 20, "Google OAuth token"),
    ("pypi-AgE", WORD, 50, "PyPI token"), ("dckr_pat_", WORD, 20, "Docker Hub token"),
    ("glsa_", ALNUM, 32, "Grafana token"), ("SG.", WORD, 22, "SendGrid key"), ("ATATT", WORD, 40, "Atlassian token"),
    ("lin_api_", ALNUM, 32, "Linear key"), ("shpat_", ALNUM, 32, "Shopify token"),
)
#: keys whose value is a credential (case-insensitive, followed by ``:`` or ``=``): header lines of OTLP and
#: custom-header variables (``Authorization=Bearer …``), git's ``http.extraheader``, ``curl -H``; and settings
#: inside an allowed variable (``NIX_CONFIG='access-tokens = github.com=…'``, ``MAVEN_OPTS=-Dpassword=…``)
HEADER_NAMES = ("authorization", "x-api-key", "api-key", "api_key", "apikey", "x-auth-token", "auth-token",
                "private-token", "job-token", "x-access-token", "access-token", "cookie", "x-goog-api-key",
                "access-tokens", "password", "passwd", "secret")
#: HTTP authentication schemes followed by a credential (case-insensitive: ``Bearer abc…``, ``Basic dXNl…``)
AUTH_SCHEMES = ("bearer", "basic")
#: URL query parameters that carry a credential (``?access_token=…``, ``&sig=…``)
QUERY_NAMES = ("access_token", "token", "api_key", "apikey", "key", "sig", "signature", "password", "passwd",
               "secret", "client_secret", "auth", "private_token", "x-amz-signature", "x-amz-credential")
#: URL users that are not credentials (``ssh://git@host/…``, the user of every git hosting service)
URL_USERS_OK = ("git",)

_CLASS = (frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"),
          frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-"),
          frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"))
_WORD = _CLASS[WORD]
#: RFC 7235 token68, what follows ``Bearer``/``Basic``
_TOKEN68 = _WORD | frozenset("._~+/=")
_BLANK = frozenset(" \t")
_BLANK_OR_QUOTE = frozenset(" \t\"'")
#: ASCII-only lower case (str.lower would change lengths on some non-ASCII letters; the C side lowers ASCII only)
_LOWER = {c: c + 32 for c in range(65, 91)}
#: where a URL's user info (or a scheme-less ``user:pass@``) ends
_URL_STOP = frozenset("/@?# \t\r\n")
#: every ASCII character that is not a word character, mapped to a space (``split`` then yields the runs of word
#: characters, non-ASCII ones counted in: a precheck may only pass too often); the shortest run a token shape or a
#: JWT part can have
_NON_WORD = {c: 32 for c in range(128) if chr(c) not in _WORD}
_SHORTEST_RUN = min(min(n for _p, _c, n, _l in TOKEN_SHAPES), 10)


def _run(value: str, start: int, chars: frozenset[str]) -> int:
    """How many characters of ``chars`` follow ``value[start:]``."""
    end = start
    while end < len(value) and value[end] in chars:
        end += 1
    return end - start


def _word_start(value: str, i: int) -> bool:
    return i == 0 or value[i - 1] not in _WORD


def _userinfo(value: str) -> bool:
    """A URL's user info (``scheme://user[:pw]@``; not ``git@``), or a scheme-less ``user:pw@host`` at the start."""
    start = value.find("://")
    while start >= 0:
        q = start + 3
        while q < len(value) and value[q] not in _URL_STOP:
            q += 1
        if q < len(value) and value[q] == "@" and q > start + 3 and value[start + 3:q] not in URL_USERS_OK:
            return True
        start = value.find("://", start + 3)
    q = 0
    colon = False
    while q < len(value) and value[q] not in _URL_STOP:
        colon = colon or value[q] == ":"
        q += 1
    return colon and q < len(value) and value[q] == "@"


def _at(text: str, needle: str) -> Iterator[int]:
    """Every index where ``needle`` starts in ``text`` (overlapping ones too)."""
    i = text.find(needle)
    while i >= 0:
        yield i
        i = text.find(needle, i + 1)


def _token(value: str) -> str | None:
    for prefix, cls, shortest, label in TOKEN_SHAPES:
        for i in _at(value, prefix):
            if _word_start(value, i) and _run(value, i + len(prefix), _CLASS[cls]) >= shortest:
                return label
    return None


def _jwt(value: str) -> bool:
    """``eyJ…​.eyJ…​.`` (a JSON header and payload, base64url: every JWT starts so)."""
    for i in _at(value, "eyJ"):
        a = i + 3 + _run(value, i + 3, _WORD)
        if _word_start(value, i) and a - i >= 10 and value.startswith(".eyJ", a):
            b = a + 4 + _run(value, a + 4, _WORD)
            if b - a - 1 >= 10 and b < len(value) and value[b] == ".":
                return True
    return False


def _header(low: str) -> bool:
    """A key of HEADER_NAMES followed (after blanks and quotes) by ``:`` or ``=``."""
    for name in HEADER_NAMES:
        for i in _at(low, name):
            j = i + len(name)
            j += _run(low, j, _BLANK_OR_QUOTE)
            if j < len(low) and low[j] in ":=":
                return True
    return False


def _scheme(low: str) -> bool:
    """``bearer``/``basic`` at a word start, blanks, then at least 8 token68 characters."""
    for name in AUTH_SCHEMES:
        for i in _at(low, name):
            j = i + len(name)
            spaces = _run(low, j, _BLANK)
            if _word_start(low, i) and spaces and _run(low, j + spaces, _TOKEN68) >= 8:
                return True
    return False


def _query(low: str) -> bool:
    """``?name=value`` (or ``&``, ``;``) for a name of QUERY_NAMES and a value that is not empty."""
    for name in QUERY_NAMES:
        for i in _at(low, name):
            j = i + len(name)
            if i > 0 and low[i - 1] in "?&;" and low.startswith("=", j) and j + 1 < len(low) \
                    and low[j + 1] not in "& \t#":
                return True
    return False


def credential(value: str) -> str | None:
    """What kind of credential ``value`` looks like (never part of the value), or None.

    Cheap prechecks first (the Python launcher runs this on every inherited variable): a token or a JWT needs a run
    of at least :data:`_SHORTEST_RUN` word characters, a header ``:`` or ``=``, a query ``=`` after ``?``/``&``/``;``."""
    if "-----BEGIN " in value:
        return "PEM block"
    if "@" in value and _userinfo(value):
        return "URL user-info"
    if len(value) >= _SHORTEST_RUN and max(map(len, value.translate(_NON_WORD).split())) >= _SHORTEST_RUN:
        label = _token(value)
        if label is not None:
            return label
        if _jwt(value):
            return "JWT"
    if ":" not in value and "=" not in value and " " not in value and "\t" not in value:
        return None
    low = value.translate(_LOWER)
    if _header(low):
        return "credential header"
    if _scheme(low):
        return "Bearer/Basic credential"
    if "=" in low and _query(low):
        return "credential in a URL query"
    return None


class Names:
    """A list of names and ``*`` globs, case-insensitive, compiled for the launcher's hot loop: exact names in a set,
    ``PREFIX*``, ``*SUFFIX`` and ``*PART*`` as tuples (one ``startswith``/``endswith``, a few ``in``), the rest matched
    in full. Names are passed upper-cased."""

    __slots__ = ("exact", "prefixes", "suffixes", "parts", "other")

    def __init__(self, patterns: Iterable[str]) -> None:
        exact, prefixes, suffixes, parts, other = set(), [], [], [], []
        for p in patterns:
            up = p.upper()
            inner = up[1:-1]
            if "*" not in up:
                exact.add(up)
            elif up.endswith("*") and "*" not in up[:-1]:
                prefixes.append(up[:-1])
            elif up.startswith("*") and "*" not in up[1:]:
                suffixes.append(up[1:])
            elif len(up) > 2 and up[0] == up[-1] == "*" and "*" not in inner:
                parts.append(inner)
            else:
                other.append(up)
        self.exact = frozenset(exact)
        self.prefixes = tuple(prefixes)
        self.suffixes = tuple(suffixes)
        self.parts = tuple(parts)
        self.other = tuple(other)

    def has(self, up: str) -> bool:
        """Whether the upper-cased name ``up`` matches one of the patterns."""
        if up in self.exact or up.startswith(self.prefixes) or up.endswith(self.suffixes):
            return True
        for part in self.parts:
            if part in up:
                return True
        return bool(self.other) and any(glob_match(p, up) for p in self.other)

    def which(self, up: str) -> str | None:
        """The pattern (upper case) the upper-cased name ``up`` matches, or None."""
        if up in self.exact:
            return up
        found = ([p + "*" for p in self.prefixes if up.startswith(p)] + ["*" + p for p in self.suffixes if up.endswith(p)]
                 + ["*" + p + "*" for p in self.parts if p in up] + [p for p in self.other if glob_match(p, up)])
        return found[0] if found else None


def glob_match(pattern: str, name: str) -> bool:
    """``fnmatch`` for ``*`` only, case-insensitive (fnmatch would cost the launcher ``re`` and ``functools``)."""
    parts = pattern.upper().split("*")
    name = name.upper()
    if len(parts) == 1:
        return name == parts[0]
    if not name.startswith(parts[0]) or not name.endswith(parts[-1]) or len(name) < len(parts[0]) + len(parts[-1]):
        return False
    pos = len(parts[0])
    end = len(name) - len(parts[-1])
    for middle in parts[1:-1]:
        found = name.find(middle, pos, end)
        if found < 0:
            return False
        pos = found + len(middle)
    return True


_compiled: list[Names] = []


def _lists() -> list[Names]:
    """ENV_CORE, ENV_ALLOW and SECRET_ENV compiled, once (not at import: the engine imports this module on every
    shell call for :func:`launcher_options` and needs none of it)."""
    if not _compiled:
        _compiled.extend((Names(ENV_CORE), Names(ENV_ALLOW), Names(SECRET_ENV)))
    return _compiled


class Rule:
    """The rule for one launch: the policy's ``env_keep`` and ``env_scrub`` (None: the built-in SECRET_ENV)."""

    __slots__ = ("keep_exact", "keep", "scrub", "core", "allow")

    def __init__(self, keep: Iterable[str] = (), scrub: Iterable[str] | None = None) -> None:
        keep = list(keep)
        self.keep_exact = frozenset(k.upper() for k in keep if "*" not in k)
        self.keep = Names(k for k in keep if "*" in k)
        self.core, self.allow, secret = _lists()
        self.scrub = secret if scrub is None else Names(scrub)

    def reason(self, name: str, value: str) -> str | None:
        """None when a sandboxed command inherits ``name=value``, else why not (never the value)."""
        up = name.upper()
        if up in self.keep_exact:
            return None
        if up not in self.core.exact:
            if not self.allow.has(up) and not self.keep.has(up):
                return "not on the allow-list"
            if self.scrub.has(up):
                return f"name matches sandbox.env_scrub pattern {self.scrub.which(up)}"
        label = credential(value)
        return None if label is None else f"value looks like a credential ({label})"


def dropped(env: Mapping[str, str], keep: Iterable[str] = (), scrub: Iterable[str] | None = None) -> dict[str, str]:
    """name -> why, for every variable of ``env`` a sandboxed command does not inherit."""
    rule = Rule(keep, scrub)
    out = {}
    for name, value in env.items():
        why = rule.reason(name, value)
        if why is not None:
            out[name] = why
    return out


def launcher_options(policy: object) -> list[str]:
    """The launcher's options for policy ``sandbox.env_scrub`` / ``env_keep`` / ``pid_namespace``: none while they
    are the defaults (the launcher knows them: the spec stays short)."""
    sb = getattr(policy, "sandbox", None)
    scrub = list(getattr(sb, "env_scrub", SECRET_ENV) or ())
    opts: list[str] = []
    if scrub != list(SECRET_ENV):
        opts += [o for pat in scrub for o in ("--env-scrub", pat)] or ["--env-scrub", ""]
    for name in getattr(sb, "env_keep", ()) or ():
        opts += ["--env-keep", name]
    if not getattr(sb, "pid_namespace", True):
        opts += ["--pidns", "off"]  # processes a command leaves running outlive it (docs/security.md)
    return opts


def dropped_by(policy: object, env: Mapping[str, str]) -> dict[str, str]:
    """name -> why, for each variable of ``env`` a sandboxed command would not inherit under ``policy`` (orch
    explain; the reason never holds the value)."""
    sb = getattr(policy, "sandbox", None)
    return dropped(env, list(getattr(sb, "env_keep", ()) or ()), list(getattr(sb, "env_scrub", SECRET_ENV) or ()))


def c_header() -> str:
    """These lists as C arrays, the header launcher.c includes (``envpolicy.h``, generated at build time)."""

    def s(text: str) -> str:
        if any(c in text for c in '"\\') or not text.isascii() or not text.isprintable():
            raise ValueError(f"not a plain C string: {text!r}")
        return f'"{text}"'

    def strings(name: str, items: Iterable[str]) -> str:
        return f"static const char *const {name}[] = {{" + ", ".join(s(i) for i in items) + ", NULL};\n"

    shapes = "".join(f"    {{{s(p)}, {cls}, {n}, {s(label)}}},\n" for p, cls, n, label in TOKEN_SHAPES)
    return ("/* generated from orchestrator/sandbox/envpolicy.py (c_header) at build time: do not edit */\n"
            + strings("ENV_CORE", ENV_CORE) + strings("ENV_ALLOW", ENV_ALLOW) + strings("SECRET_ENV", SECRET_ENV)
            + f"enum {{ CLS_ALNUM = {ALNUM}, CLS_WORD = {WORD}, CLS_UPPER = {UPPER} }};\n"
            + "struct token_shape { const char *prefix; int cls; int shortest; const char *label; };\n"
            + "static const struct token_shape TOKEN_SHAPES[] = {\n" + shapes + "    {NULL, 0, 0, NULL}};\n"
            + strings("HEADER_NAMES", HEADER_NAMES) + strings("AUTH_SCHEMES", AUTH_SCHEMES)
            + strings("QUERY_NAMES", QUERY_NAMES) + strings("URL_USERS_OK", URL_USERS_OK))


__all__ = ["ENV_ALLOW", "ENV_CORE", "SECRET_ENV", "TOKEN_SHAPES", "Rule", "c_header", "credential", "dropped",
           "dropped_by", "glob_match", "launcher_options"]
