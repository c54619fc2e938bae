"""Vendored from upstream `textcase` 1.2.0 — do not edit here; update upstream and re-vendor."""


def title(text: str) -> str:
    return " ".join(word.capitalize() for word in text.split())
