"""What is said of bytes orjson refuses, for a whole file or for one item of a List read alone.

A List whose items are found (bundle/layout.py's split) loses only the item that does not parse: it becomes a
finding at `FILE: $.items[N]` naming the object when its name can still be read from the bytes, and a stub of
what could be read (name, namespace, node, phase) goes to the sink as an invalid item, so a pod that cannot be
read is answered insufficient-evidence and the node it runs on has unknown usage, as for any invalid pod.
"""

from __future__ import annotations

import codecs
import mmap
import re

import orjson

_CHUNK = 1 << 20

# kubectl's layout: an item's fields at 12 spaces, their fields at 16 (bundle/layout.py). A raw newline cannot
# occur inside a JSON string, so these runs are structure.
_SECTION = {name: re.compile(rb'\n {12}"' + name.encode() + rb'": \{\n(.*?)\n {12}\}', re.S)
            for name in ("metadata", "spec", "status")}
_FIELD = {name: re.compile(rb'\n {16}"' + name.encode() + rb'": ("(?:[^"\\\n]|\\.){0,400}")')
          for name in ("name", "namespace", "nodeName", "phase")}
_LABELS = re.compile(rb'\n {16}"labels": (\{.*?\n {16}\})', re.S)
_KIND = re.compile(rb'\n {12}"kind": ("[A-Za-z0-9]{1,63}")')
_STUB = (("metadata", "name"), ("metadata", "namespace"), ("spec", "nodeName"), ("status", "phase"))


def invalid_utf8_at(data: bytes | mmap.mmap | memoryview) -> int | None:
    """The offset of the first byte that is not UTF-8 (None: all of it is), read a chunk at a time."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    size = len(data)
    for at in range(0, max(size, 1), _CHUNK):
        pending = len(decoder.getstate()[0])
        try:
            decoder.decode(bytes(data[at:at + _CHUNK]), final=at + _CHUNK >= size)
        except UnicodeDecodeError as exc:
            return at - pending + exc.start
    return None


def not_json(data: bytes | mmap.mmap | memoryview, exc: orjson.JSONDecodeError, start: int | None = 0) -> str:
    """orjson's complaint in words a person can act on: where in the file (a byte offset from `start`, the
    bytes' place in it; None: where in the item), and for bad UTF-8 the byte itself rather than orjson's
    "surrogates not allowed"."""
    where = (lambda at: f"byte {at} of the item") if start is None else (lambda at: f"byte {start + at}")
    if "UTF-8" in exc.msg:
        bad = invalid_utf8_at(data)
        if bad is not None:
            return f"invalid UTF-8 at {where(bad)} (0x{data[bad]:02x}): kubectl writes UTF-8"
    return f"{exc.msg} at {where(_byte_offset(data, exc.pos))}"


def _byte_offset(data: bytes | mmap.mmap | memoryview, chars: int) -> int:
    """orjson counts characters; a byte offset is what `head -c`/`dd` take (equal for ASCII)."""
    head = bytes(data[:chars * 4])
    try:
        return len(head.decode("utf-8", errors="strict")[:chars].encode())
    except UnicodeDecodeError:
        return chars


def stub(raw: bytes | memoryview) -> dict | None:
    """What can still be read of an item that does not parse, in kubectl's layout: its name, namespace, node
    and phase, each a JSON string that parses alone. None when not even its name can be read."""
    out: dict[str, dict[str, str]] = {}
    data = bytes(raw)
    for section, key in _STUB:
        body = _SECTION[section].search(data)
        found = _FIELD[key].search(body.group(1)) if body else None
        if found is None:
            continue
        try:
            value = orjson.loads(found.group(1))
        except orjson.JSONDecodeError:
            continue
        out.setdefault(section, {})[key] = value
    if not out.get("metadata", {}).get("name"):
        return None
    # The labels, when their own block parses; else null: unknown, never "no labels" (a node whose labels
    # cannot be read may still match a pod's selector).
    metadata = _SECTION["metadata"].search(data)  # found: the name above was read from it
    labels = _LABELS.search(metadata.group(1)) if metadata else None
    try:
        out["metadata"]["labels"] = orjson.loads(labels.group(1)) if labels else None
    except orjson.JSONDecodeError:
        out["metadata"]["labels"] = None
    kind = _KIND.search(data[:4096])
    if kind is not None:
        out["kind"] = orjson.loads(kind.group(1))
    return out


def named(item: dict | None) -> str:
    """`Kind ns/name` of a stub, for the finding ("" when its name could not be read)."""
    if item is None:
        return ""
    meta = item["metadata"]
    key = f"{meta['namespace']}/{meta['name']}" if meta.get("namespace") else meta["name"]
    return f"{item.get('kind', 'item')} {key}"


def unreadable_item(raw: object, exc: orjson.JSONDecodeError, path: str,
                    start: int | None) -> tuple[dict | None, tuple[str, str, str]]:
    """(the stub, the finding) for one item that does not parse (`start`: its offset in the file, when known):
    the other items are read."""
    raw = memoryview(raw)  # a msgspec.Raw (the decoding split) is not sliceable, its memoryview is
    item = stub(raw)
    who = named(item)
    found = f"{who or 'an item'} that does not parse: {not_json(raw, exc, start)} (every other item is read)"
    return item, (path, "a JSON item", found)


__all__ = ["invalid_utf8_at", "not_json", "stub", "unreadable_item"]
