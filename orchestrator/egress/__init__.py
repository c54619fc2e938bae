"""Egress by host: the only way out of a sandboxed command's network namespace is this package's proxy.

Every sandboxed command runs in a network namespace of its own with only a loopback interface (the launchers:
``sandbox/launcher.c``, ``sandbox/netns.py``); a forwarder inside it listens on ``127.0.0.1:3128`` and relays each
connection to the workspace's proxy (:mod:`.server`) over a Unix socket. The proxy knows which command is asking by
the kernel's word (the connecting process's network namespace, registered by the launcher from outside the sandbox),
applies that command's plan (:mod:`.plans`: what the hook allowed when it planned the command, from the policy, the
intent and the person's own package-manager and git configuration, :mod:`.sources`), decides on the name before
resolving anything (:mod:`.hosts`), resolves it once, refuses loopback, private and metadata addresses unless they
are listed, and dials exactly an address it checked.

What it owns: the allow-list semantics, the proxy server and its wire protocols (:mod:`.wire`), where its sockets
live (:mod:`.paths`) and keeping it running (:mod:`.supervise`). What it may import: the standard library and the
leaf packages below it (``core``, ``state``, ``vcs``); never the sandbox, the engine or the configuration loaders
(the sandbox's planner calls into it, and the proxy process imports nothing heavier than asyncio).
"""
