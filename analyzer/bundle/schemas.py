"""Find and load the JSON Schemas in schemas/ (shipped inside the wheel as analyzer/_data/schemas).

The files are standard JSON Schema 2020-12 and refer to shared definitions in
k8s-defs.schema.json with ordinary relative `$ref`s. Both validation engines
get one self-contained schema per file: the shared definitions are merged into
its `$defs` and the refs rewritten to local ones, so no engine needs a
resolver or network access.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import orjson

DEFS_FILE = "k8s-defs.schema.json"


def schema_dir() -> Path:
    packaged = Path(__file__).resolve().parent.parent / "_data" / "schemas"
    if packaged.is_dir():
        return packaged
    source = Path(__file__).resolve().parent.parent.parent / "schemas"
    if source.is_dir():
        return source
    raise RuntimeError("gpu-triage is installed without its schemas/ directory")


def _load(name: str) -> dict:
    return orjson.loads((schema_dir() / name).read_bytes())


def _localise(node: object, defs_prefix: str) -> object:
    if isinstance(node, dict):
        out = {}
        for k, v in node.items():
            if k == "$ref" and isinstance(v, str) and v.startswith(defs_prefix):
                out[k] = "#" + v[len(defs_prefix):]
            else:
                out[k] = _localise(v, defs_prefix)
        return out
    if isinstance(node, list):
        return [_localise(v, defs_prefix) for v in node]
    return node


@lru_cache(maxsize=None)
def _shared_defs() -> dict:
    """The shared definitions with local refs, made once (every schema gets a copy of the dict, not of its values)."""
    found = _localise(_load(DEFS_FILE)["$defs"], DEFS_FILE + "#")
    assert isinstance(found, dict)  # $defs is an object in our own schema file
    return found


def _reachable(schema: dict, defs: dict) -> list[str]:
    """The definitions `schema` refers to, directly or through each other, in the order of `defs`."""
    seen: set[str] = set()
    todo: list[object] = [{k: v for k, v in schema.items() if k != "$defs"}]
    while todo:
        node = todo.pop()
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/"):
                name = ref[len("#/$defs/"):].split("/", 1)[0]
                if name not in seen and name in defs:
                    seen.add(name)
                    todo.append(defs[name])
            todo.extend(node.values())
        elif isinstance(node, list):
            todo.extend(node)
    return [k for k in defs if k in seen]


@lru_cache(maxsize=None)
def load_schema(name: str) -> dict:
    """The self-contained schema for `name` (e.g. "pods", "manifest", "verdicts"), with the shared definitions it
    uses and no others: a schema compiles in a fifth of the time without the fifty it never reaches (20 ms of
    every start over the kinds of a bundle)."""
    schema = _load(f"{name}.schema.json")
    merged = _localise(schema, DEFS_FILE + "#")
    assert isinstance(merged, dict)
    defs = dict(_shared_defs())
    defs.update(merged.get("$defs", {}))
    merged["$defs"] = {k: defs[k] for k in _reachable(merged, defs)}
    merged.pop("$id", None)  # the merged schema is no longer the file the $id names
    return merged


@lru_cache(maxsize=None)
def envelope_and_item(name: str) -> tuple[dict, dict] | None:
    """For a kubectl List schema: (envelope without item checks, item schema). None for other files. Both
    share the merged schema's parts (nothing compiles a schema by changing it): a copy of the 90 KB of shared
    definitions per kind was a quarter of a second at every start."""
    schema = load_schema(name)
    items = schema.get("properties", {}).get("items", {})
    if not (isinstance(items, dict) and items.get("type") == "array" and "items" in items):
        return None
    envelope = {**schema, "properties": {**schema["properties"], "items": {"type": "array"}}}
    item = {"$defs": schema["$defs"], **items["items"]}
    return envelope, item
