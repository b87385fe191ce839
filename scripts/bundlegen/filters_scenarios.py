"""Pending GPU pods held by the volume and inter-pod filters (filters.md), and the claims they need.

volume-node-conflict  a StatefulSet on L4 whose WaitForFirstConsumer claim (class local-nvme, no provisioner) can
                      only use local PersistentVolumes pinned to CPU nodes; Jobs on L4 in one zone whose shared
                      dataset claim is bound to a volume in another zone (by the volume's node affinity, and by its
                      zone label alone, an older in-tree disk)
pod-affinity          L4 replicas with required pod affinity to a label no pod has (app=feature-store)
exhausted             an A100 StatefulSet whose WaitForFirstConsumer claims (class balanced-wffc, a CSI
                      provisioner) can be provisioned anywhere, so the full pool decides; A100 trainers whose required
                      pod affinity (the GPU device plugin's pod on the same node) holds on every GPU node
fits-now              an L4 StatefulSet with provisionable claims and a stale message

The claims and volumes are written by scripts/generate_filters.py from `claim_plan` ((namespace, claim) -> what it is).
"""

from __future__ import annotations

from bundle_objects import P
from bundlegen.common import ZONES
from bundlegen.descs import sel_pool, trainer_desc, triton_desc

L4_POOL = "l4-pool"
ZONE = "topology.kubernetes.io/zone"
HOSTNAME = "kubernetes.io/hostname"


def _claim_volume(name: str, claim: str, read_only: bool = False) -> dict:
    pvc: dict = {"claimName": claim}
    if read_only:
        pvc["readOnly"] = True
    return {"name": name, "persistentVolumeClaim": pvc}


def _required(kind: str, term: dict) -> dict:
    return {kind: {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}


class FilterScenarios:
    """Part of Generator (bundlegen/generator.py): its attributes and helpers are the Generator's."""

    def make_filter_scenarios(self) -> None:
        rng = self.rng
        plan = dict(self.pending_plan())
        self.claim_plan: dict[tuple[str, str], dict] = {}
        cpu_ok = [n for n in self.by_pool["default-pool"] + self.by_pool["highmem-pool"] if n.state == "ok"]
        pinned = cpu_ok[:4]  # the nodes with local NVMe volumes (none has a GPU)

        # volume-node-conflict: local-nvme claims whose only volumes are on CPU nodes.
        extra = {"volume": "bind-conflict", "pinned": frozenset(n.name for n in pinned)}
        shape = self.shape("vc-wffc", lambda: triton_desc("StatefulSet", 1, sel_pool(L4_POOL), False, "4", "16Gi",
                                                          sts_service=P("app") + "-headless",
                                                          pod_volumes=[_claim_volume("scratch", "scratch-" + P("name"))],
                                                          claims=[("scratch", "375Gi", "local-nvme")]), extra)
        for k in self.chunks(plan["vc-wffc"], 3):
            wl = self.new_workload("StatefulSet", "recsys", "feature-cache", shape)
            for _ in range(k):
                pod = self.pending(wl, "volume-node-conflict")
                self.claim_plan[(wl.ns, f"scratch-{pod.name}")] = {
                    "class": "local-nvme", "size": "375Gi", "local_on": pinned[len(self.claim_plan) % len(pinned)].name}

        # volume-node-conflict: a dataset bound in zone a for pods that must run in zone b (two ways to say where).
        total = plan["vc-zone"]
        for how, count in (("pv-affinity", (total + 1) // 2), ("volume-zone", max(1, total // 2))):
            extra = {"volume": how, "zone": ZONES[0]}
            shape = self.shape(f"vc-zone-{how}", self._zoned_trainer, extra)
            for k in self.chunks(count, 4):
                wl = self.new_workload("Job", "vision", "eval-multimodal", shape, t0=rng.randint(600, 7200))
                self.claim_plan[(wl.ns, f"{wl.vals['app']}-dataset")] = {"class": "premium-rwo", "size": "500Gi",
                                                                          "zone": ZONES[0], "by": how}
                for _ in range(k):
                    self.pending(wl, "volume-node-conflict")

        # pod-affinity: required affinity to pods that do not exist.
        term = {"labelSelector": {"matchLabels": {"app": "feature-store"}}, "topologyKey": HOSTNAME}
        shape = self.shape("pa-missing", lambda: triton_desc("ReplicaSet", 1, sel_pool(L4_POOL), False, "4", "16Gi",
                                                             affinity=_required("podAffinity", term)), {"affinity": "missing"})
        for k in self.chunks(plan["pa-missing"], 4):
            wl = self.new_workload("Deployment", "search", "ranker-colocated", shape)
            for _ in range(k):
                self.pending(wl, "pod-affinity")

        # exhausted: claims a CSI provisioner can make anywhere; pod affinity that every GPU node satisfies.
        shape = self.shape("ex-wffc", lambda: triton_desc("StatefulSet", 4, sel_pool("a100-pool"), True, "10", "64Gi",
                                                          sts_service=P("app") + "-headless",
                                                          pod_volumes=[_claim_volume("index", "index-" + P("name"))],
                                                          claims=[("index", "200Gi", "balanced-wffc")]))
        self._provisioned(shape, plan["ex-wffc"], "a100-indexer", "exhausted", "exact")
        term = {"labelSelector": {"matchLabels": {"k8s-app": "nvidia-gpu-device-plugin-large-cos"}},
                "namespaces": ["kube-system"], "topologyKey": HOSTNAME}
        shape = self.shape("ex-affinity", lambda: trainer_desc("Job", 4, sel_pool("a100-pool"), True, "10", "64Gi",
                                                               affinity=_required("podAffinity", term)))
        for k in self.chunks(plan["ex-affinity"], 4):
            wl = self.new_workload("Job", "ml-training", "pretrain-colocated", shape, t0=rng.randint(600, 7200))
            for _ in range(k):
                self.pending(wl, "exhausted")

        # fits-now: a provisionable claim on L4, where there is room; the message is stale.
        shape = self.shape("fn-wffc", lambda: triton_desc("StatefulSet", 1, sel_pool(L4_POOL), False, "4", "16Gi",
                                                          sts_service=P("app") + "-headless",
                                                          pod_volumes=[_claim_volume("index", "index-" + P("name"))],
                                                          claims=[("index", "200Gi", "balanced-wffc")]))
        self._provisioned(shape, plan["fn-wffc"], "embed-cache", "fits-now", "stale")

    def _zoned_trainer(self) -> dict:
        d = trainer_desc("Job", 1, {**sel_pool(L4_POOL), ZONE: ZONES[1]}, False, "8", "32Gi")
        d["volumes"] = d["volumes"] + [_claim_volume("dataset", P("app") + "-dataset", read_only=True)]
        return d

    def _provisioned(self, shape, count: int, base: str, word: str, mode: str) -> None:
        for k in self.chunks(count, 3):
            wl = self.new_workload("StatefulSet", "recsys" if word == "exhausted" else "search", base, shape)
            for _ in range(k):
                pod = self.pending(wl, word, mode=mode)
                self.claim_plan[(wl.ns, f"index-{pod.name}")] = {"class": "balanced-wffc", "size": "200Gi"}
