"""Everyday work through the egress proxy, with no person asked: ``pip install``, ``npm install``, ``git fetch`` and
``git push`` against local stand-ins for a registry and a git remote, allowed because the person's own
configuration names them (``PIP_INDEX_URL``, ``npm_config_registry``, the repository's ``remote.origin.url``), not
because orchestrator's policy does. And what a command configures for itself does not widen its plan.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import http.server
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import threading
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.sandbox.conftest import Host, needs_landlock
from tests.sandbox.test_pidns import _can_isolate

pytestmark = [needs_landlock, pytest.mark.skipif(not _can_isolate(), reason="the kernel refuses namespaces here")]
NAME = "orch-egress-demo"
GIT_ENV = {"GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@x", "GIT_COMMITTER_NAME": "a", "GIT_COMMITTER_EMAIL": "a@x"}


class Server:
    """A threaded HTTP server on 127.0.0.2 (a host of its own: not the loopback name the sandbox reaches directly)
    serving ``directory``; every request path is recorded."""

    def __init__(self, directory: Path, handler: type[http.server.BaseHTTPRequestHandler] | None = None) -> None:
        self.paths: list[str] = []
        seen = self.paths

        class Handler(handler or http.server.SimpleHTTPRequestHandler):  # type: ignore[misc,valid-type]
            def log_message(self, *args: object) -> None:
                seen.append(self.path)

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.2", 0), functools.partial(Handler,
                                                                                          directory=str(directory)))
        self.url = f"http://127.0.0.2:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def wheel(directory: Path) -> Path:
    """A pure-Python wheel of :data:`NAME`, made by hand (no build backend, no network)."""
    module, dist = NAME.replace("-", "_"), NAME.replace("-", "_") + "-1.0.dist-info"
    files = {f"{module}/__init__.py": b"VALUE = 'installed through the egress proxy'\n",
             f"{dist}/METADATA": f"Metadata-Version: 2.1\nName: {NAME}\nVersion: 1.0\n".encode(),
             f"{dist}/WHEEL": b"Wheel-Version: 1.0\nGenerator: hand\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
    record = "".join(f"{n},sha256={base64.urlsafe_b64encode(hashlib.sha256(d).digest()).rstrip(b'=').decode()},"
                     f"{len(d)}\n" for n, d in files.items()) + f"{dist}/RECORD,,\n"
    path = directory / f"{module}-1.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as z:
        for n, d in files.items():
            z.writestr(n, d)
        z.writestr(f"{dist}/RECORD", record)
    return path


@pytest.fixture
def index(tmp_path: Path) -> Iterator[Server]:
    """A simple index (PEP 503) with one wheel."""
    root = tmp_path / "index"
    (root / "simple" / NAME).mkdir(parents=True)
    whl = wheel(root)
    digest = hashlib.sha256(whl.read_bytes()).hexdigest()
    (root / "simple" / NAME / "index.html").write_text(
        f'<html><body><a href="../../{whl.name}#sha256={digest}">{whl.name}</a></body></html>\n')
    server = Server(root)
    yield server
    server.close()


def test_pip_installs_from_the_configured_index(sws: Path, index: Server, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PIP_INDEX_URL", index.url + "/simple/")
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    monkeypatch.delenv("PIP_FIND_LINKS", raising=False)
    proc = Host(sws).run(f"{sys.executable} -m pip install --no-cache-dir --disable-pip-version-check --target "
                         f"build/pkgs {NAME}")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.verdict.decision == "allow"  # type: ignore[attr-defined]
    assert "through the egress proxy" in (sws / "build" / "pkgs" / NAME.replace("-", "_") / "__init__.py").read_text()
    assert f"/simple/{NAME}/" in index.paths


def test_an_index_the_command_names_itself_is_not_allowed(sws: Path, index: Server,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """The plan comes from the person's configuration when the hook decides: a command that points pip elsewhere
    gets no further (the proxy refuses, and the person sees which key would allow it)."""
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    monkeypatch.delenv("PIP_FIND_LINKS", raising=False)
    monkeypatch.delenv("PIP_INDEX_URL", raising=False)
    proc = Host(sws).run(f"PIP_INDEX_URL={index.url}/simple/ {sys.executable} -m pip install --no-cache-dir "
                         f"--disable-pip-version-check --retries 0 --target build/pkgs {NAME}")
    assert proc.returncode != 0
    assert not index.paths
    assert "127.0.0.2" in proc.stderr and "sandbox.network.allow" in proc.stderr


def npm_registry(root: Path, url_of: str) -> None:
    """A registry stand-in: the packument at /NAME and the tarball beside it."""
    data = io.BytesIO()
    with tarfile.open(fileobj=data, mode="w:gz") as tar:
        for name, text in (("package/package.json", json.dumps({"name": NAME, "version": "1.0.0",
                                                                 "main": "index.js"})),
                           ("package/index.js", "module.exports = 'installed through the egress proxy';\n")):
            info = tarfile.TarInfo(name)
            body = text.encode()
            info.size = len(body)
            tar.addfile(info, io.BytesIO(body))
    tgz = data.getvalue()
    (root / NAME / "-").mkdir(parents=True)
    (root / NAME / "-" / f"{NAME}-1.0.0.tgz").write_bytes(tgz)
    packument = {"name": NAME, "dist-tags": {"latest": "1.0.0"}, "versions": {"1.0.0": {
        "name": NAME, "version": "1.0.0", "main": "index.js",
        "dist": {"tarball": f"{url_of}/{NAME}/-/{NAME}-1.0.0.tgz", "shasum": hashlib.sha1(tgz).hexdigest(),
                 "integrity": "sha512-" + base64.b64encode(hashlib.sha512(tgz).digest()).decode()}}}}
    (root / NAME / "index.html").write_text(json.dumps(packument))


class Packuments(http.server.SimpleHTTPRequestHandler):
    """/NAME is a directory whose index.html is the packument (served as JSON)."""

    def guess_type(self, path: str | os.PathLike[str]) -> str:
        return "application/json" if str(path).endswith(".html") else super().guess_type(path)


@pytest.mark.skipif(shutil.which("npm") is None, reason="npm is not installed")
def test_npm_installs_from_the_configured_registry(sws: Path, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "registry"
    root.mkdir()
    server = Server(root, Packuments)
    try:
        npm_registry(root, server.url)
        npmrc = tmp_path / "npmrc"
        npmrc.write_text(f"registry={server.url}/\nfund=false\naudit=false\nupdate-notifier=false\n")
        monkeypatch.setenv("NPM_CONFIG_USERCONFIG", str(npmrc))  # the person's npmrc names the registry
        (sws / "build").mkdir(exist_ok=True)
        proc = Host(sws).run(f"npm install --prefix build --cache build/.npm-cache --no-audit --no-fund {NAME} && "
                             f"node -e \"console.log(require('./build/node_modules/{NAME}'))\"")
    finally:
        server.close()
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.strip().endswith("installed through the egress proxy")
    assert f"/{NAME}" in server.paths and f"/{NAME}/-/{NAME}-1.0.0.tgz" in server.paths


class GitHttp(http.server.BaseHTTPRequestHandler):
    """git's smart HTTP: each request through ``git http-backend`` (CGI), fetch and push."""

    protocol_version = "HTTP/1.0"

    def __init__(self, *args: object, directory: str = "", **kw: object) -> None:
        self.project_root = directory
        super().__init__(*args, **kw)  # type: ignore[arg-type]

    def _body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            out = b""
            while True:
                size = int(self.rfile.readline().split(b";")[0], 16)
                if not size:
                    self.rfile.readline()
                    return out
                out += self.rfile.read(size)
                self.rfile.readline()
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def _cgi(self) -> None:
        path, _, query = self.path.partition("?")
        env = {"GIT_PROJECT_ROOT": self.project_root, "GIT_HTTP_EXPORT_ALL": "1", "PATH_INFO": path,
               "QUERY_STRING": query, "REQUEST_METHOD": self.command, "REMOTE_ADDR": "127.0.0.1",
               "CONTENT_TYPE": self.headers.get("Content-Type", ""), "PATH": os.environ["PATH"]}
        if self.headers.get("Content-Encoding"):
            env["HTTP_CONTENT_ENCODING"] = self.headers["Content-Encoding"]
        if self.headers.get("Git-Protocol"):
            env["GIT_PROTOCOL"] = self.headers["Git-Protocol"]
        proc = subprocess.run(["git", "http-backend"], input=self._body() if self.command == "POST" else b"",
                              env=env, capture_output=True, check=False)
        head, _, body = proc.stdout.partition(b"\r\n\r\n")
        status = 200
        headers = []
        for line in head.decode("latin-1").split("\r\n"):
            name, _, value = line.partition(":")
            if name.lower() == "status":
                status = int(value.split()[0])
            elif name:
                headers.append((name, value.strip()))
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = _cgi


def test_git_fetch_and_push_to_the_repositorys_own_remote(sws: Path, tmp_path: Path) -> None:
    remotes = tmp_path / "remotes"
    remotes.mkdir()
    env = {**os.environ, **GIT_ENV}
    subprocess.run(["git", "init", "-q", "--bare", str(remotes / "app.git")], check=True)
    subprocess.run(["git", "-C", str(remotes / "app.git"), "config", "http.receivepack", "true"], check=True)
    subprocess.run(["git", "-C", str(sws), "add", "-A"], check=True, env=env)
    subprocess.run(["git", "-C", str(sws), "commit", "-qm", "base"], check=True, env=env)
    subprocess.run(["git", "-C", str(sws), "push", "-q", str(remotes / "app.git"), "HEAD:refs/heads/main"],
                   check=True, env=env)
    server = Server(remotes, GitHttp)
    try:
        subprocess.run(["git", "-C", str(sws), "remote", "add", "origin", f"{server.url}/app.git"], check=True)
        host = Host(sws)
        fetch = host.run("git fetch origin", env=GIT_ENV)
        assert fetch.returncode == 0, fetch.stderr
        assert fetch.verdict.decision == "allow"  # type: ignore[attr-defined]
        (sws / "src" / "pushed.py").write_text("x = 2\n")
        push = host.run("git add src/pushed.py && git commit -qm pushed && git push origin HEAD:refs/heads/feature",
                        env=GIT_ENV)
        assert push.returncode == 0, push.stdout + push.stderr
    finally:
        server.close()
    shown = subprocess.run(["git", "-C", str(remotes / "app.git"), "show", "feature:src/pushed.py"],
                           capture_output=True, text=True, check=True)
    assert shown.stdout == "x = 2\n"
    assert any("git-receive-pack" in p for p in server.paths) and any("git-upload-pack" in p for p in server.paths), (server.paths, fetch.stdout, fetch.stderr)


def _node_reads_proxy_variables() -> bool:
    """``NODE_USE_ENV_PROXY`` is honoured from Node 22.21 / 24.5 on (Node 20 here ignores it)."""
    try:
        out = subprocess.run(["node", "-p", "process.versions.node"], capture_output=True, text=True, check=False)
    except OSError:
        return False
    major, minor = (int(x) for x in out.stdout.strip().split(".")[:2])
    return (major == 22 and minor >= 21) or (major == 24 and minor >= 5) or major > 24


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_node_fetch_goes_through_the_proxy_or_nowhere(sws: Path, tmp_path: Path) -> None:
    (tmp_path / "www").mkdir()
    (tmp_path / "www" / "x.txt").write_text("fetched through the egress proxy\n")
    server = Server(tmp_path / "www")
    (sws / ".orchestration" / "policy.yaml").write_text(
        "version: 1\nsandbox:\n  writable: ['{tmp}']\n  network:\n    allow: ['127.0.0.2']\n")
    try:
        proc = Host(sws).run(f"node -e \"fetch('{server.url}/x.txt').then(r => r.text()).then(t => console.log(t))"
                             ".catch(e => console.log('ERR', e.cause && e.cause.code))\"")
    finally:
        server.close()
    if _node_reads_proxy_variables():
        assert proc.stdout.strip() == "fetched through the egress proxy", proc.stderr
    else:  # the direct connection stays in the namespace: nothing reaches any host
        assert proc.stdout.startswith("ERR") and not server.paths, proc.stdout
