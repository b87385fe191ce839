"""Evidence as sentences: every evidence key a rule writes has one renderer that says it as plain prose.

A verdict's evidence is a map of key -> plain data (its `-o json` form). A person reads it as sentences: the
module that writes a key registers, next to the code that writes it, how the key reads (`@says("key")`); the
table, `why --explain`, the report and Markdown all print `lines(evidence)`, so a fact is worded once. JSON
appears only in `-o json`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

Render = Callable[[object], list[str]]

_RENDERERS: dict[str, Render] = {}


def says(key: str) -> Callable[[Render], Render]:
    """Register how the evidence key `key` reads: a function from its value to sentences (none to say nothing)."""

    def register(render: Render) -> Render:
        if key in _RENDERERS and _RENDERERS[key] is not render:
            raise ValueError(f"evidence key {key!r} already has a renderer")
        _RENDERERS[key] = render
        return render

    return register


def registered() -> dict[str, Render]:
    """Every key with a renderer, as registered so far (the writers of evidence register on import)."""
    return dict(_RENDERERS)


def lines(evidence: dict, *, skip: Iterable[str] = ()) -> list[str]:
    """The evidence's sentences in the order its keys were written; keys in `skip` are said elsewhere."""
    # Whoever made the evidence imported its writers, and they registered their keys then: the classifier
    # imports the order (every family) and the evidence makers. Nothing here reaches back up for them.
    renderers = _RENDERERS
    left_out = set(skip)
    out: list[str] = []
    for key, value in evidence.items():
        if key in left_out:
            continue
        render = renderers.get(key)
        out.extend(render(value) if render is not None else plain(key, value))
    return out


def plain(key: str, value: object) -> list[str]:
    """A key no renderer claims: text as it is, a flat list joined. Anything nested has no sentence yet and is
    said as `key: …` with its scalars only (never JSON)."""
    label = key.replace("_", " ")
    if value is None or value == "" or value == [] or value == {}:
        return []
    if isinstance(value, str):
        return [f"{label}: {value}"]
    if isinstance(value, bool):
        return [f"{label}: {'yes' if value else 'no'}"]
    if isinstance(value, (int, float)):
        return [f"{label}: {value}"]
    if isinstance(value, list) and all(isinstance(x, (str, int, float)) for x in value):
        return [f"{label}: " + ", ".join(map(str, value))]
    if isinstance(value, dict) and all(isinstance(x, (str, int, float, bool)) for x in value.values()):
        parts = [f"{k.replace('_', ' ')} {('yes' if x else 'no') if isinstance(x, bool) else x}" for k, x in value.items()]
        return [f"{label}: " + ", ".join(parts)]
    return [f"{label}: (see -o json)"]
