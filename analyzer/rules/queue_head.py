"""Head of line (queues.md, queue-quota): in a ClusterQueue with `queueingStrategy: StrictFIFO` Kueue only ever
tries the workload at the head; one that does not fit blocks every workload behind it, even one whose own request
would fit now (with BestEffortFIFO the head is set aside and the next tried, so this does not arise).

Kueue v0.19: pkg/cache/queue/cluster_queue.go (the heap, ordered by priority, then the queue ordering timestamp:
the creation time unless evicted; a StrictFIFO head that does not fit is pushed back, not set aside) and
pkg/workload/workload.go (GetQueueOrderTimestamp). A workload stuck behind the head carries no QuotaReserved
condition at all: Kueue never tried it, so there is no message of Kueue's to quote for it.
"""

from __future__ import annotations

from collections.abc import Callable

from analyzer import words
from analyzer import prose
from analyzer.model.queue_world import QueueWorld
from analyzer.model.queues import ClusterQueue, Workload
from analyzer.rules.case import Decision

__all__ = ["head_of_line"]


def _pending(cq: ClusterQueue, world: QueueWorld) -> list[Workload]:
    """The ClusterQueue's waiting workloads in Kueue's order (built once per ClusterQueue)."""
    key = ("pending", cq.name)
    if key not in world.memo:
        k = world.kueue
        waiting = [w for w in k.workloads
                   if w.active and not w.finished and not w.holds("QuotaReserved")
                   and (lq := k.local_queues.get((w.namespace, w.queue))) is not None and lq.cluster_queue == cq.name]
        world.memo[key] = sorted(waiting, key=lambda w: (-w.priority, w.created, w.key))
    return world.memo[key]


def head_of_line(w: Workload, cq: ClusterQueue, world: QueueWorld, fails: Callable[[Workload], str | None],
                 evidence: dict) -> Decision | None:
    """queue-quota naming the head when `w` would fit but waits behind a head that does not; `fails` says why a
    workload does not fit now (Kueue's message), None when it would."""
    if cq.strategy != "StrictFIFO":
        return None
    queue = _pending(cq, world)
    if not queue or queue[0].key == w.key:
        return None
    head = queue[0]
    why = fails(head)
    if why is None:
        return None  # by the bundle the head would be admitted now: Kueue has not yet got to it
    position = next((i for i, other in enumerate(queue) if other.key == w.key), len(queue))
    evidence["head_of_line"] = {"clusterQueue": cq.name, "head": head.key, "priority": head.priority,
                          "created": head.created, "waits_for": why, "ahead": position}
    return Decision(word=words.QUEUE_QUOTA,
                    reason=f"ClusterQueue {cq.name} is StrictFIFO and Workload {head.key} at its head does not fit "
                           f"({why}); nothing behind it is admitted first, though this workload's own request fits "
                           f"now: wait for {head.key}, or raise the quota, or make the queue BestEffortFIFO")


@prose.says("head_of_line")
def _says_head(value: object) -> list[str]:
    h = value if isinstance(value, dict) else {}
    return [f"ClusterQueue {h.get('clusterQueue')} admits in strict order (StrictFIFO); "
            f"{h.get('ahead')} workload(s) wait ahead of this one.",
            f"At the head: Workload {h.get('head')} (priority {h.get('priority')}, created {h.get('created')}), "
            f"which waits because {h.get('waits_for')}."]
