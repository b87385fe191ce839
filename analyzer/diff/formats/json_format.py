"""`diff -o json`: the Diff as one object (records as dicts; JSON escapes every name)."""

from __future__ import annotations

from dataclasses import asdict
from typing import TextIO

import orjson

from analyzer import __version__
from analyzer.diff.records import Diff
from analyzer.text import printable

SCHEMA_VERSION = 1


def to_dict(d: Diff) -> dict:
    doc = asdict(d)
    for row, rec in zip(doc["pools"], d.pools):
        row["changed"] = rec.changed
    return {"schemaVersion": SCHEMA_VERSION, "gpu_triage_version": __version__, **doc}


def _clean(node: object) -> object:
    if isinstance(node, str):
        return printable(node)  # only reached for lone surrogates, which UTF-8 cannot carry
    if isinstance(node, dict):
        return {_clean(k): _clean(v) for k, v in node.items()}
    if isinstance(node, (list, tuple)):
        return [_clean(x) for x in node]
    return node


def render(d: Diff, out: TextIO) -> None:
    doc = to_dict(d)
    try:
        data = orjson.dumps(doc, option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS)
    except orjson.JSONEncodeError:
        data = orjson.dumps(_clean(doc), option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS)
    out.write(data.decode() + "\n")
