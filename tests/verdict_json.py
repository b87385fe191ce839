"""The `-o json` document (funnels and fits given once by id, removed nodes counted) mapped back to the earlier
shape (a list of verdicts, each with its whole funnel and fit), so tests can compare words, reasons and
evidence with what the verdicts themselves say (Verdict.to_dict())."""

from __future__ import annotations


def old_shape(doc: dict) -> list[dict]:
    """The list of verdicts as Verdict.to_dict() gives them. Refuses a document that left names out
    (`more` > 0): then the earlier shape cannot be rebuilt, and the test must say so."""
    funnels = {}
    for fid, stages in doc["funnels"].items():
        out = []
        for st in stages:
            groups = []
            for g in st["removed"]:
                assert g["more"] == 0 and g["count"] == len(g["nodes"]), f"funnel {fid} names only some nodes: {g}"
                groups.append(g)
            out.append({**st, "removed": groups})
        funnels[fid] = out
    verdicts = []
    for v in doc["verdicts"]:
        fit = doc["fits"][v["fit"]] if v["fit"] is not None else None
        old = {}
        for k, value in v.items():
            if k == "funnel":
                old[k] = funnels[value] if value is not None else None
            elif k == "fit":
                old["fit"] = fit["rows"] if fit else None
                old["fragmented"] = fit["fragmented"] if fit else None
                old["too_large"] = fit["too_large"] if fit else None
            elif k == "evidence" and isinstance(value.get("queue"), str):
                old[k] = {**value, "queue": doc["queues"][value["queue"]]}
            else:
                old[k] = value
        verdicts.append(old)
    return verdicts
