"""`diff -o json`: the Diff as one object (records as dicts; JSON escapes every name)."""

from __future__ import annotations

from dataclasses import asdict
from typing import TextIO

import orjson

from analyzer import __version__
from analyzer.diff.records import Diff
from analyzer.output_format import DIFF, RenderFunction
from analyzer.text import json_text

SCHEMA_VERSION = 1


def to_dict(d: Diff) -> dict:
    doc = asdict(d)
    for row, rec in zip(doc["pools"], d.pools):
        row["changed"] = rec.changed
    return {"schemaVersion": SCHEMA_VERSION, "gpu_triage_version": __version__, **doc}


def render(d: Diff, out: TextIO) -> None:
    out.write(json_text(to_dict(d), orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS) + "\n")


FORMAT = RenderFunction("json", DIFF, render)
