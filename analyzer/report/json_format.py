"""`-o json`: one JSON document, written verdict by verdict as they are produced.

Shape (schemas/verdicts.schema.json):

    {"gpu_triage_version": "0.1.0", "verdicts": [ {..., "funnel": "f1", "fit": "f1", "evidence": {"queue": "q1"}}, ... ],
     "funnels": {"f1": [ {"stage", "nodes_in", "nodes_out", "removed": [{"reason", "count", "nodes", "more"}]} ]},
     "fits": {"f1": {"rows": [...], "fragmented": bool, "too_large": [...]}},
     "queues": {"q1": {"system", "workload", "clusterQueue", "flavors": [...], ...}}}

Pods of one shape share one funnel (classify.py builds it once per shape), so each distinct funnel and
fit is written once, after the verdicts that name it; a verdict's "funnel"/"fit" is that id or null. A queue's
evidence (its chain, flavors, what is reserved and by whom) is written once per distinct chain the same way.
Removed nodes come grouped by reason with their count and at most 20 names (every name for
`why -o json`), "more" saying how many are not named: the classifier builds them so (classify.NODE_LIMIT). The verdicts array
is written as it goes: only the distinct funnels (already held by the classifier) wait for the end.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TextIO

import orjson

from analyzer import __version__
from analyzer.output_format import ANALYZE, RenderFunction
from analyzer.text import json_text
from analyzer.verdict import Verdict


def _indent(text: str, by: str) -> str:
    return text.replace("\n", "\n" + by)


class JsonWriter:
    """Write verdicts into one JSON document as they come; close() writes the shared funnels and fits."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.count = 0
        # Shared funnels and fits are written once, keyed by their content: verdicts of one shape share one
        # object, and two shapes whose funnels read the same (their pods differ only where no stage looks) are
        # two equal objects, still one entry. id(object) -> its id in the document (the object held, so the id
        # is not reused while the document is written).
        self._ids: dict[int, tuple[str, object]] = {}
        self._funnels: dict[bytes, tuple[str, object]] = {}
        self._fits: dict[bytes, tuple[str, object]] = {}
        self._queues: dict[bytes, tuple[str, object]] = {}  # a workload's queue chain: its pods share one
        out.write('{\n  "gpu_triage_version": ' + orjson.dumps(__version__).decode() + ',\n  "verdicts": [')

    def _funnel_id(self, stages: list[dict] | None) -> str | None:
        return None if stages is None else self._shared_id(stages, self._funnels, lambda: stages)

    def _fit_id(self, v: Verdict) -> str | None:
        fit = v.fit
        return None if fit is None else self._shared_id(fit, self._fits, fit.as_data)

    def _shared_id(self, shared: object, table: dict[bytes, tuple[str, object]], doc_of: Callable[[], object],
                   prefix: str = "f") -> str:
        known = self._ids.get(id(shared))
        if known is None:
            doc = doc_of()
            key = orjson.dumps(doc, default=str)
            entry = table.get(key)
            if entry is None:
                entry = table[key] = (f"{prefix}{len(table) + 1}", doc)
            known = self._ids[id(shared)] = (entry[0], shared)
        return known[0]

    def write(self, v: Verdict) -> None:
        d = v.to_dict()
        d["funnel"] = self._funnel_id(v.funnel)
        d["fit"] = self._fit_id(v)
        queue = v.evidence.get("queue")
        if isinstance(queue, dict):  # written once in `queues`: 15,000 pods of one ClusterQueue name it by id
            d["evidence"] = {**d["evidence"], "queue": self._shared_id(queue, self._queues, lambda: queue, "q")}
        del d["fragmented"], d["too_large"]  # in the fit they belong to
        self.out.write(",\n    " if self.count else "\n    ")
        self.out.write(_indent(json_text(d), "    "))
        self.count += 1

    def close(self) -> None:
        self.out.write("\n  ],\n" if self.count else "],\n")
        self.out.write('  "funnels": ')
        funnels = {fid: stages for fid, stages in self._funnels.values()}
        self.out.write(_indent(json_text(funnels), "  "))
        self.out.write(',\n  "fits": ')
        self.out.write(_indent(json_text({fid: fit_doc for fid, fit_doc in self._fits.values()}), "  "))
        self.out.write(',\n  "queues": ')
        self.out.write(_indent(json_text({qid: chain for qid, chain in self._queues.values()}), "  "))
        self.out.write("\n}\n")


def render(verdicts: Iterable[Verdict], out: TextIO) -> None:
    writer = JsonWriter(out)
    for v in verdicts:
        writer.write(v)
    writer.close()


FORMAT = RenderFunction("json", ANALYZE, render)
