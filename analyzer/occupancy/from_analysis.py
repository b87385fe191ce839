"""The occupancy picture from an analysis that already read the bundle (streamed): the report and `nodes`
share it, so neither parses pods.json a second time nor holds it whole."""

from __future__ import annotations

from typing import TYPE_CHECKING

from analyzer.model.podspec import effective_requests
from analyzer.occupancy import Occupancy, PodUse, compute, node_facts

if TYPE_CHECKING:
    from analyzer.pipeline import Analysis


def occupancy_of(analysis: "Analysis") -> "Occupancy | None":
    """analyzer.occupancy's picture, fed from what the analysis already built: raw node items (few), the
    effective requests of every counted pod per node (not parsed again: 150,000 pods cost seconds), the
    nodes whose usage an invalid pod hides, and the unbound targets with their own requests."""
    c = analysis.cluster
    nodes_doc = analysis.loaded.documents.get("nodes")
    if nodes_doc is None or not analysis.loaded.has("pods"):
        return None
    problems: list[str] = []
    facts = []
    seen: set[str] = set()
    for i, item in enumerate(nodes_doc.items):
        try:
            f = node_facts(item, nodes_doc.item_path(i))
        except (ValueError, TypeError) as exc:
            problems.append(f"{nodes_doc.file}: {exc} (node left out)")
            continue
        if f.name not in seen:
            seen.add(f.name)
            facts.append(f)
    uses = []
    accelerator: dict[str, bool] = {}  # resource name -> is it an accelerator (asked once per name)

    def holds_accelerator(requests: dict[str, int]) -> bool:
        for r, units in requests.items():
            if units > 0:
                known = accelerator.get(r)
                if known is None:
                    known = accelerator[r] = c.config.is_accelerator(r)
                if known:
                    return True
        return False
    # Only pods holding an accelerator can appear in the picture: the DaemonSet and CPU pods (most of
    # 150,000) are not turned into records at all.
    for node, held in c.pods_on.items():
        for h in held:
            if not holds_accelerator(h.requests):
                continue
            uses.append(PodUse(namespace=h.namespace, name=h.name, node=node, phase=h.phase, requests=h.requests))
    for node in c.unknown_usage:
        uses.append(PodUse(namespace="?", name="?", node=node, readable=False))
    for t in c.pod_targets:
        if t.spec is not None and not t.node_name and not t.invalid:
            try:
                requests = effective_requests(t.spec)
            except Exception:  # noqa: BLE001 - the target's own verdict already names the unusable quantity
                continue
            selector = t.spec.get("nodeSelector") or {}
            uses.append(PodUse(namespace=t.namespace, name=t.name, phase=t.phase, requests=requests,
                               node_selector={str(k): str(v) for k, v in selector.items()} if isinstance(selector, dict) else {}))
    return compute(facts, uses, c.config, problems=problems)
