"""YAML from strangers, read safely: `safe_load` as Kubernetes reads YAML (into JSON), bounded.

Used for pod manifests (targets/attempts.py), for cluster-autoscaler's status, YAML inside a ConfigMap
(model/autoscalers.py), and for a must-gather's files (bundle/parts.py). A real document is a few hundred
nodes. YAML aliases let a few bytes stand for billions of nodes ("billion laughs"); Kubernetes' YAML reader refuses excessive aliasing too. The expanded size is counted
without expanding (a shared node is counted once per use, its size remembered).
"""

from __future__ import annotations

import functools
import math
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import yaml

MAX_NODES = 200_000
MAX_DEPTH = 100


class NotYaml(ValueError):
    """The text does not parse as YAML (the parser's first line)."""


class UnsafeYaml(ValueError):
    """It parses, but is not a usable document: too deep, too large through aliases, or not JSON-shaped."""


@functools.cache
def _loader() -> type:
    """safe_load, but as Kubernetes reads YAML (into JSON): a timestamp stays the string it was written as. With
    libyaml's parser where PyYAML has it: about ten times faster than the pure-Python one (a 1 MiB status took
    29 s), with the same safe constructor. Made at the first YAML read: most runs read none (PyYAML's import is
    15 ms of every start)."""
    import yaml

    # The C loader where PyYAML was built with it: a base chosen at run time, which type checkers cannot follow.
    class Loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
        pass

    Loader.yaml_implicit_resolvers = {
        ch: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
        for ch, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }
    return Loader


def _problem(exc: yaml.YAMLError) -> str:
    """PyYAML's problem with where it is (`line 3, column 9: expected ',' or '}', but got '<scalar>'`)."""
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None)
    if mark is not None and problem:
        context = getattr(exc, "context", None)
        return f"line {mark.line + 1}, column {mark.column + 1}: {problem}" + (f" ({context})" if context else "")
    return str(exc).splitlines()[0]


def _parse(text: str) -> list[object]:
    """Every document of the text (None documents left out), as parsed: aliases shared, nothing bounded yet."""
    import yaml

    try:
        return [d for d in yaml.load_all(text, Loader=_loader()) if d is not None]
    except yaml.YAMLError as exc:
        if "exceeded maximum nesting depth" in str(exc):  # libyaml's own bound (1000 levels)
            raise UnsafeYaml("nested too deeply") from None
        raise NotYaml(_problem(exc)) from None
    except RecursionError:
        raise UnsafeYaml("nested too deeply") from None


def load_all(text: str) -> list[object]:
    """Every document of the text (None documents left out). Raises NotYaml or UnsafeYaml."""
    docs = _parse(text)
    check_tree(docs)
    return docs


def load_unchecked(text: str) -> object:
    """The text's one document (several: a list of them), parsed but not yet bounded: the caller bounds each
    object of a large List on its own with check_tree (a must-gather's pods.yaml of a namespace holds thousands
    of pods, far past MAX_NODES as one tree, each pod far below it). Aliases are shared, not copied, while
    parsing, so an alias bomb costs nothing until it is checked. Raises NotYaml or UnsafeYaml (too deep)."""
    docs = _parse(text)
    if not docs:
        raise NotYaml("no document in it")
    return docs[0] if len(docs) == 1 else docs


def check_tree(doc: object) -> None:
    """Raises UnsafeYaml when the document nests over MAX_DEPTH, expands past MAX_NODES values, or holds
    what JSON cannot (a lone surrogate, NaN, a non-string key, a binary or set value)."""
    sizes: dict[int, int] = {}

    def size(node: object, depth: int) -> int:
        if depth > MAX_DEPTH:
            raise UnsafeYaml(f"nested more than {MAX_DEPTH} levels deep")
        if isinstance(node, str):
            try:
                node.encode("utf-8")
            except UnicodeEncodeError:
                raise UnsafeYaml("a string is not valid Unicode (lone surrogate)") from None
            return 1
        if node is None or isinstance(node, (bool, int)):
            return 1
        if isinstance(node, float):
            if not math.isfinite(node):
                raise UnsafeYaml(f"{node!r} is not a JSON number")
            return 1
        if not isinstance(node, (dict, list)):
            raise UnsafeYaml(f"a {type(node).__name__} value has no JSON form")
        if isinstance(node, dict) and not all(isinstance(k, str) for k in node):
            raise UnsafeYaml("a mapping key is not a string")
        known = sizes.get(id(node))
        if known is not None:
            return known
        children = list(node.items()) if isinstance(node, dict) else node
        total = 1
        for child in children:
            if isinstance(child, tuple):
                total += size(child[0], depth + 1) + size(child[1], depth + 1)
            else:
                total += size(child, depth + 1)
            if total > MAX_NODES:
                raise UnsafeYaml(f"expands to more than {MAX_NODES} values (too large, or excessive YAML aliasing)")
        sizes[id(node)] = total
        return total

    size(doc, 0)
