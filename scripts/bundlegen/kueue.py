"""`--kueue`: the pods and Jobs Kueue holds, planned with the rest (scripts/generate_kueue.py writes Kueue's objects).

A fifth of the pods are Kueue pod groups (label `kueue.x-k8s.io/queue-name`, `kueue.x-k8s.io/pod-group-name`,
the scheduling gate `kueue.x-k8s.io/admission`), pending and holding nothing, so the rest of the world and its
scheduler messages stay as they are. Each group is built so that exactly one word holds (queues.md):
  quota       cq-train (h100, a100 flavors), its H100 quota all reserved and borrowing at its limit: queue-quota
  too-large   cq-sandbox (8 nominal H100), groups asking 16 or more: queue-quota (too-large)
  stopped     cq-serving, stopPolicy Hold: queue-misconfigured
  no-lq       a LocalQueue the namespace does not have: queue-misconfigured
  selector    cq-train, pods selecting L4 nodes (no flavor of the queue has them): selector-mismatch
  taint       cq-train, pods without the nvidia.com/gpu toleration (both flavors tainted): untolerated-taint
  checks      cq-research, quota reserved, admission check dws-prov pending: scheduling-gated
  topology    cq-tas (flavor h100-tas, Topology gpu-topology over the GPU pools' nodes, racks of RACK_SIZE nodes),
              more 8-GPU pods than a rack has nodes, required in one rack: queue-topology
The older bare gated pods (queue `h100-queue` in research) join cq-research's pending checks. Suspended Jobs
(no pods) wait in cq-train: queue-quota, answered per owner.
"""

from __future__ import annotations

from bundle_objects import P
from bundlegen.common import WORDS
from bundlegen.descs import sel_accel, sel_pool, trainer_desc, triton_desc
from bundlegen.model import Workload
from bundlegen.pools import H100, L4

ADMISSION_GATE = "kueue.x-k8s.io/admission"
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
GROUP_LABEL = "kueue.x-k8s.io/pod-group-name"
TOTAL_ANNOTATION = "kueue.x-k8s.io/pod-group-total-count"
TOPOLOGY_GATE = "kueue.x-k8s.io/topology"
REQUIRED_TOPOLOGY = "kueue.x-k8s.io/podset-required-topology"
BLOCK, RACK = "cloud.provider.com/topology-block", "cloud.provider.com/topology-rack"
RACK_SIZE, RACKS_PER_BLOCK = 8, 4  # nodes per rack: a group of more 8-GPU pods than that fits in no rack
KUEUE_SHARE = 0.2

# scenario -> (weight, namespaces, LocalQueue, the word, pods per group (lo, hi))
SCENARIOS = {
    "quota": (10, ("ml-training", "nlp", "vision"), "train", "queue-quota", (1, 4)),
    "too-large": (2, ("research",), "sandbox", "queue-quota", (2, 4)),
    "stopped": (3, ("ml-inference",), "serving", "queue-misconfigured", (1, 6)),
    "no-lq": (2, ("recsys",), "recsys-gpu", "queue-misconfigured", (1, 4)),
    "selector": (2, ("nlp",), "train", "selector-mismatch", (1, 3)),
    "taint": (2, ("vision",), "train", "untolerated-taint", (1, 3)),
    "checks": (3, ("research",), "h100-queue", "scheduling-gated", (1, 4)),
    "topology": (2, ("ml-training",), "tas", "queue-topology", (RACK_SIZE + 1, RACK_SIZE + 4)),
}


def _desc(scenario: str, queue: str) -> dict:
    gate = {"gates": [ADMISSION_GATE]}
    if scenario in ("stopped", "no-lq"):
        d = triton_desc(None, 1, sel_pool("l4-pool"), False, "6", "24Gi", **gate)
    elif scenario == "selector":
        d = trainer_desc(None, 4, {**sel_accel(L4), **sel_pool("l4-pool")}, True, "16", "96Gi", **gate)
    elif scenario == "taint":
        d = trainer_desc(None, 4, None, False, "16", "96Gi", **gate)
    elif scenario == "topology":
        d = trainer_desc(None, 8, sel_accel(H100), True, "24", "200Gi", gates=[ADMISSION_GATE, TOPOLOGY_GATE])
        d["annotations"] = {**(d.get("annotations") or {}), REQUIRED_TOPOLOGY: RACK}
    else:
        d = trainer_desc(None, 8, sel_accel(H100), True, "24", "200Gi", **gate)
    d["labels"] = {**d["labels"], QUEUE_LABEL: queue, GROUP_LABEL: P("app"), "kueue.x-k8s.io/managed": "true"}
    d["annotations"] = {**(d.get("annotations") or {}), TOTAL_ANNOTATION: P("gcount")}
    return d


class KueuePods:
    """Part of Generator (bundlegen/generator.py): its attributes and helpers are the Generator's."""

    def kueue_budget(self) -> int:
        return round(self.M * KUEUE_SHARE) if self.kueue else 0

    def make_kueue(self, budget: int) -> None:
        """Pod groups of every scenario, weighted, `budget` pods in all; and a few suspended Jobs."""
        rng = self.rng
        self.kueue_groups: list[tuple[Workload, str]] = []
        self.kueue_suspended: list[tuple[str, str, int]] = []  # (namespace, Job, parallelism)
        if not self.kueue:
            return
        names = list(SCENARIOS)
        weights = [SCENARIOS[s][0] for s in names]
        made = 0
        while made < budget:
            scenario = rng.choices(names, weights)[0] if made else "quota"
            _, namespaces, queue, word, (lo, hi) = SCENARIOS[scenario]
            count = min(budget - made, rng.randint(lo, hi))
            if scenario == "too-large" and count < 2 or scenario == "topology" and count <= RACK_SIZE:
                scenario, (_, namespaces, queue, word, _) = "quota", SCENARIOS["quota"]
            ns = rng.choice(namespaces)
            shape = self.shape(f"kueue/{scenario}", lambda s=scenario, q=queue: _desc(s, q))
            base = f"{scenario.split('-')[0]}-{rng.choice(WORDS)}-{rng.choice(WORDS)}"
            wl = self.new_workload("Pod", ns, base, shape)
            wl.vals["gcount"] = str(count)
            for i in range(count):
                self.pending(wl, word, "gated", name=self.unique_pod_name(ns, wl.name, str(i)))
            self.kueue_groups.append((wl, scenario))
            made += count
        for _ in range(max(1, budget // 50)):
            ns = "ml-training"  # a namespace no ResourceQuota is short in: `quota-exceeded` would answer first
            name = self.workload_name(ns, f"sweep-{rng.choice(WORDS)}")
            self.kueue_suspended.append((ns, name, rng.randint(1, 4)))
            self.truth[f"{ns}/job/{name}"] = "queue-quota"
