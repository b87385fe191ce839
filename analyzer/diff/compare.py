"""Two Snapshots -> a Diff. Pure: no files, no classifier."""

from __future__ import annotations

from analyzer.diff.records import (Change, Collection, Diff, NodeChange, NodeGpu, PodState, PoolRow, QuotaChange, Snapshot,
                                   TargetChange)

from analyzer.kube import TERMINATED

COLLECTED = "collected"  # as diff/snapshot.py marks a file the bundle holds


def why_resolved(kind: str, pod: PodState | None) -> str:
    """Why a target of OLD (a pod, an attempt or a refused owner) is no longer one in NEW."""
    if kind not in ("Pod", "Attempt"):
        return f"no longer a target (the {kind} is not refused in the new bundle)"
    if pod is None:
        if kind == "Attempt":
            return "no longer a target (the attempt is not in the new bundle and no such pod exists)"
        return "deleted (not in the new pods.json)"
    if pod.phase in TERMINATED:
        return f"finished ({pod.phase}) on {pod.node}" if pod.node else f"finished ({pod.phase})"
    if pod.node:
        return f"now runs on {pod.node} (phase {pod.phase or 'unknown'})"
    return f"no longer a target (phase {pod.phase or 'unknown'})"


def _targets(old: Snapshot, new: Snapshot) -> tuple[tuple[TargetChange, ...], tuple[TargetChange, ...], tuple[TargetChange, ...]]:
    appeared = tuple(TargetChange(key=k, before=None, after=w, why=new.reasons.get(k, ""))
                     for k, w in sorted(new.words.items()) if k not in old.words)
    resolved = tuple(TargetChange(key=k, before=w, after=None, why=why_resolved(old.kinds.get(k, "Pod"), new.pods.get(k)))
                     for k, w in sorted(old.words.items()) if k not in new.words)
    changed = tuple(TargetChange(key=k, before=w, after=new.words[k], why=new.reasons.get(k, ""))
                    for k, w in sorted(old.words.items())
                    if k in new.words and new.words[k] != w)
    return appeared, resolved, changed


_FIELDS = ("capacity", "allocatable", "used", "usage_unknown", "taints", "cordoned", "ready", "gpu_labels")


def _node_changes(old: dict[str, NodeGpu], new: dict[str, NodeGpu]) -> tuple[NodeChange, ...]:
    out = []
    for name in sorted(set(old) | set(new)):
        a, b = old.get(name), new.get(name)
        if a is None:
            out.append(NodeChange(node=name, kind="added"))
        elif b is None:
            out.append(NodeChange(node=name, kind="removed"))
        else:
            changes = tuple(Change(field=f, before=getattr(a, f), after=getattr(b, f)) for f in _FIELDS
                            if getattr(a, f) != getattr(b, f))
            if changes:
                out.append(NodeChange(node=name, kind="changed", changes=changes))
    return tuple(out)


def _pools(old: Snapshot, new: Snapshot) -> tuple[PoolRow, ...]:
    keys = sorted(set(old.pools) | set(new.pools), key=lambda k: (k[1], k[0]))
    return tuple(PoolRow(pool=p, resource=r, before=old.pools.get((p, r)), after=new.pools.get((p, r))) for p, r in keys)


def _quotas(old: Snapshot, new: Snapshot) -> tuple[QuotaChange, ...] | None:
    if old.quotas is None and new.quotas is None:
        return None
    a, b = old.quotas or {}, new.quotas or {}
    return tuple(QuotaChange(namespace=ns, quota=q, key=k, before=a.get((ns, q, k)), after=b.get((ns, q, k)))
                 for ns, q, k in sorted(set(a) | set(b)) if a.get((ns, q, k)) != b.get((ns, q, k)))


def _collection(old: Snapshot, new: Snapshot) -> Collection:
    changed = tuple((f, old.files[f], new.files[f]) for f in sorted(set(old.files) & set(new.files))
                    if old.files[f] != new.files[f])
    # A file one bundle's manifest says it could not collect is not a file "only in" the other.
    tried = tuple((f, side, files[f]) for side, files, other in (("old", old.files, new.files), ("new", new.files, old.files))
                  for f in sorted(set(files) - set(other)) if files[f] != COLLECTED)
    return Collection(old_label=old.label, new_label=new.label, old_created=old.created, new_created=new.created,
                      old_context=old.context, new_context=new.context,
                      only_old=tuple(f for f in sorted(set(old.files) - set(new.files)) if old.files[f] == COLLECTED),
                      only_new=tuple(f for f in sorted(set(new.files) - set(old.files)) if new.files[f] == COLLECTED),
                      status_changed=changed, not_collected=tried)


def compare(old: Snapshot, new: Snapshot) -> Diff:
    appeared, resolved, changed = _targets(old, new)
    problems = tuple(f"{old.label}: {p}" for p in old.problems) + tuple(f"{new.label}: {p}" for p in new.problems)
    return Diff(collection=_collection(old, new), appeared=appeared, resolved=resolved, changed=changed,
                nodes=_node_changes(old.nodes, new.nodes), pools=_pools(old, new), quotas=_quotas(old, new),
                problems=problems,
                edited=tuple(f"{old.label}: {p}" for p in old.edited) + tuple(f"{new.label}: {p}" for p in new.edited))
