"""``orch doctor``: what holds a sandboxed command's network here — its own namespace and the egress proxy, or the
TCP port rules where the kernel refuses a namespace — found by running a probe through the real launcher.

The probe, with the policy's plan: ``readlink /proc/self/ns/net`` (a namespace other than the host's?) and a
``CONNECT`` for a name no policy allows, over bash's ``/dev/tcp`` to ``127.0.0.1:3128`` (the proxy answers 403:
the way out is there and refuses what it should). It also lists the hosts the person's configuration allows and
the project files that were left out (agents can write them).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from typing import Any

PROBE = ("readlink /proc/self/ns/net; exec 3<>/dev/tcp/127.0.0.1/3128 && "
         "printf 'CONNECT orch-doctor.invalid:443 HTTP/1.1\\r\\n\\r\\n' >&3 && head -c 12 <&3; echo")


def probe(directory: str, options: list[str]) -> tuple[bool, bool, str]:
    """(own network namespace, the proxy refused the probe's host, what the probe printed)."""
    from orchestrator.sandbox import compiled

    if compiled.install(directory) is None:
        return False, False, "cannot write the launcher"
    spec = os.path.basename(compiled.write_spec(directory, ["-w", "/dev/null", *options]))[:-len(".spec")]
    try:
        proc = subprocess.run([os.path.join(directory, compiled.STUB), spec, "--", PROBE], capture_output=True,
                              text=True, timeout=30, check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        return False, False, str(exc)
    lines = proc.stdout.splitlines()
    own = bool(lines) and lines[0] != os.readlink("/proc/self/ns/net")
    return own, len(lines) > 1 and lines[1].startswith("HTTP/1.1 403"), (proc.stdout + proc.stderr).strip()


def check(ws: Any, policy: Any, abi: int) -> Iterator[Any]:
    from orchestrator.core.findings import Finding
    from orchestrator.egress import sources
    from orchestrator.egress.paths import egress_dir
    from orchestrator.sandbox import network

    value = network.effective(policy)
    if value == "allow":
        yield Finding("sandbox-network", "warn", "sandbox.network: allow: sandboxed commands reach any host on any "
                      "port (no network namespace, no egress proxy)",
                      "remove `network: allow` from .orchestration/policy.yaml (egress by host is the default)")
        return
    if isinstance(value, dict) and network.host_abstract(policy):
        yield Finding("sandbox-network", "warn", "sandbox.sockets.allow names an abstract socket: sandboxed commands "
                      "keep the host's network (abstract sockets belong to a network namespace) under the TCP port "
                      f"rules ({network.option(policy, None, abi) or 'none'}): any host on those ports",
                      "drop the @name from sandbox.sockets.allow to get egress by host back")
        return
    run_dir = str(ws.run_dir)
    options = network.launcher_options(policy, None, abi, str(ws.root), run_dir)
    if not getattr(getattr(policy, "sandbox", None), "pid_namespace", True):
        options += ["--pidns", "off"]  # no init to run the forwarder: no network namespace either
    own, refused, out = probe(os.path.join(run_dir, "sandbox"), options)
    ports = network.option(policy, None, abi) or "none"
    if not own:
        yield Finding("sandbox-network", "warn", "the kernel refused a network namespace here (nested in another "
                      "sandbox, user namespaces restricted, or sandbox.pid_namespace: false): sandboxed commands "
                      f"keep the host's network under the TCP port rules ({ports}): any host on those ports",
                      "allow unprivileged user namespaces, or set sandbox.network.ports to what the work needs")
        return
    if value == "deny":
        yield Finding("sandbox-network", "ok", "each sandboxed command in its own network namespace with no way out "
                      "(sandbox.network: deny)")
        return
    if not refused:
        yield Finding("sandbox-network", "fail", f"the egress proxy did not answer a sandboxed command ({out[-300:]}):"
                      " commands run with no network", f"see {egress_dir()}/out; docs/troubleshooting.md")
        return
    assert isinstance(value, dict)
    found = sources.configured(str(ws.root), cache_dir=os.path.join(run_dir, "cache")) if value["configured"] else None
    hosts = [p if isinstance(p, str) else p[0] for p in value["allow"]] + [h for h, _ in (found.entries if found else [])]
    yield Finding("sandbox-network", "ok", "each sandboxed command in its own network namespace; out only through the "
                  f"egress proxy ({egress_dir()}) to: {', '.join(dict.fromkeys(hosts)) or 'no host'}")
    for path, why in (found.ignored if found else []):
        yield Finding("sandbox-network", "info", f"not allowed automatically: {path} ({why})",
                      "name its registry in sandbox.network.allow if it is yours")
