"""gpu-triage's word beside kubectl's view: annotations on the served pods (read-only, documented).

    gpu-triage.io/cause   the cause word (causes.md), e.g. exhausted
    gpu-triage.io/reason  the one-line reason the analysis gives

    kubectl get pods -A -o custom-columns='NAME:.metadata.name,CAUSE:.metadata.annotations.gpu-triage\\.io/cause'

Only pods the analysis answers (Pending or node-less) carry them; every other byte of a served
object is the bundle's own.
"""

from __future__ import annotations

from analyzer.replay.store import Store

CAUSE = "gpu-triage.io/cause"
REASON = "gpu-triage.io/reason"


def annotate(store: Store, words: dict[tuple[str, str], tuple[str, str]]) -> int:
    """Add the annotations in place on the store's pods; returns how many pods were annotated."""
    pods = store.served.get("pods")
    if pods is None:
        return 0
    count = 0
    for key, (word, reason) in words.items():
        item = pods.index.get(key)
        if item is None:
            continue
        meta = dict(item.get("metadata") or {})
        old = meta.get("annotations")
        meta["annotations"] = {**(old if isinstance(old, dict) else {}), CAUSE: word, REASON: reason}
        item["metadata"] = meta
        count += 1
    return count
