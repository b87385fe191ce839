"""`-o json`: a list of verdicts, as schemas/verdicts.schema.json describes."""

from __future__ import annotations

from typing import TextIO

import orjson

from analyzer.classify import Verdict


def render(verdicts: list[Verdict], out: TextIO) -> None:
    out.write("[")
    for i, v in enumerate(verdicts):
        out.write(",\n" if i else "\n")
        out.write(orjson.dumps(v.to_dict(), option=orjson.OPT_INDENT_2).decode())
    out.write("\n]\n" if verdicts else "]\n")
