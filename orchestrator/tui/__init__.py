"""The Textual approval console (``orch tui``). Imported only by that command: never on a hook's path."""
