"""greeter: say hello (an example project for `orch demo`)."""

from greeter.core import greet

__all__ = ["greet"]
