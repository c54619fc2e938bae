"""The Textual approval console (``orch tui``). Imported only by that command: never on a hook's path.

May import: everything up to ``views``; never the CLI.
"""
