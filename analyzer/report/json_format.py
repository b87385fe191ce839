"""`-o json`: a list of verdicts, as schemas/verdicts.schema.json describes."""

from __future__ import annotations

from typing import TextIO

import orjson

from analyzer.verdict import Verdict
from analyzer.report import printable


def _clean(node: object) -> object:
    """Lone surrogates (from a hostile manifest) cannot be UTF-8; escape them rather than fail."""
    if isinstance(node, str):
        return printable(node)
    if isinstance(node, dict):
        return {_clean(k): _clean(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_clean(x) for x in node]
    return node


def _dump(v: Verdict) -> bytes:
    d = v.to_dict()
    try:
        return orjson.dumps(d, option=orjson.OPT_INDENT_2)
    except orjson.JSONEncodeError:
        return orjson.dumps(_clean(d), option=orjson.OPT_INDENT_2)


def render(verdicts: list[Verdict], out: TextIO) -> None:
    out.write("[")
    for i, v in enumerate(verdicts):
        out.write(",\n" if i else "\n")
        out.write(_dump(v).decode())
    out.write("\n]\n" if verdicts else "]\n")
