"""The pending pods, one construction per cause word, and the refused owners."""

from __future__ import annotations

from bundle_objects import P
from bundlegen.common import GPU, MIG, WORDS
from bundlegen.descs import (
    api_desc,
    db_desc,
    etl_desc,
    notebook_desc,
    sandbox_desc,
    sel_accel,
    sel_pool,
    system_desc,
    trainer_desc,
    triton_desc,
    vllm_desc,
    worker_desc,
)
from bundlegen.model import Workload
from bundlegen.pools import H100, L4


class Scenarios:
    """Part of Generator (bundlegen/generator.py): its attributes and helpers are the Generator's."""

    def make_scenarios(self) -> None:
        """The pending pods, one construction per word (causes.md order; the first rule that holds wins):

        no-gpu-request     accelerator nodeSelector (no toleration, no GPU limit): unscheduled; and a bare pod
                           with runtimeClassName nvidia-cdi bound to an L4 node, still ContainerCreating
        scheduling-gated   bare Kueue pods with the kueue.x-k8s.io/admission gate (8 GPUs, tolerating)
        image-pull         bound and Pending: ImagePullBackOff on H100 (1 GPU)
        node-side          bound and Pending: Init:0/1 Job pods, a missing secret volume (ContainerCreating)
        selector-mismatch  nodeSelector gke-accelerator=nvidia-h200-141gb; required affinity gpu.product In [A10G]
        cordoned           kubernetes.io/hostname pin to a cordoned GPU node whose other taints it tolerates
        untolerated-taint  H100 accelerator selector without the nvidia.com/gpu toleration; MIG pool the same
        resource-name-mismatch  MIG request on the H100 pool (no MIG resource there, nvidia.com/gpu instead)
        no-gpu-node        the L4 spot pool (device plugin never up); hostname pin to a plugin-less H100 node
                           (when there is one)
        allocatable-zero   hostname pin to a node whose GPUs report allocatable 0
        exhausted          A100 pool (kept exactly full); 4 GPUs on L4 (each L4 node runs a reranker: at most
                           3 free, fragmented); 1Ti of memory, no selector
        unclassified       StatefulSet replica with an unbound claim; reranker with required pod anti-affinity
                           (one running per L4 node, the rest pending; a node fits by the funnel);
                           schedulerName volcano (no condition, no event; Volcano's scheduler pod runs)
        fits-now           L4 embedder and gVisor code-runner (spec.overhead) with a stale "Insufficient" message
        """
        rng = self.rng
        h100_ok = self.nodes_where("h100-pool")
        l4_ok = self.nodes_where("l4-pool")
        cpu_nodes = self.by_pool["default-pool"] + self.by_pool["highmem-pool"]
        cpu_ok = [n for n in cpu_nodes if n.state == "ok"]
        plan = dict(self.pending_plan())

        # Owners' running replicas first (they shape what is free): the anti-affinity reranker on
        # every schedulable L4 node (1 GPU each: no L4 node has all 4 free, yet each has room).
        anti = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": P("app")}}, "topologyKey": "kubernetes.io/hostname"}]}}
        rr_shape = self.shape("uc-anti", lambda: triton_desc("ReplicaSet", 1, sel_pool("l4-pool"), False, "6", "24Gi", affinity=anti))
        reranker = self.new_workload("Deployment", "search", "reranker", rr_shape)
        for node in l4_ok:
            assert node.fits(rr_shape.req)
            self.add_pod(reranker, "running", node)

        # no-gpu-request: GPU intent (an accelerator nodeSelector / the nvidia runtime) without an accelerator limit.
        shape = self.shape("nr-unsched", lambda: notebook_desc("ReplicaSet", 0, sel_accel(H100), False))
        for k in self.chunks(plan["nr-unsched"], 4):
            wl = self.new_workload("Deployment", "research", "notebook-h100", shape)
            for _ in range(k):
                self.pending(wl, "no-gpu-request")
        shape = self.shape("nr-bound", lambda: notebook_desc(None, 0, sel_accel(L4), False, runtime_class="nvidia-cdi", applied=True))
        for _ in range(plan["nr-bound"]):
            node = self.place(l4_ok, shape.req)
            if node is None:
                continue
            wl = self.new_workload("Pod", "research", f"cuda-smoke-{rng.choice(WORDS)}", shape)
            pod = self.add_pod(wl, "creating", node, t0=rng.randint(300, 3600), word="no-gpu-request")
            self.kubelet_event(pod, "FailedCreatePodSandBox", "Warning",
                               'Failed to create pod sandbox: rpc error: code = Unknown desc = failed to create containerd task: '
                               'failed to create shim task: OCI runtime create failed: runc create failed: unable to start container '
                               'process: error during container init: error running prestart hook #0: exit status 1, stdout: , '
                               'stderr: nvidia-container-cli: device error: void: unknown device: unknown', rng.randint(5, 40))

        # scheduling-gated: Kueue holds the pods (gate kueue.x-k8s.io/admission).
        shape = self.shape("gated", lambda: trainer_desc(None, 8, sel_accel(H100), True, "24", "200Gi", gates=["kueue.x-k8s.io/admission"],
                                                          annotations={"kueue.x-k8s.io/queue-name": "h100-queue"}, applied=True))
        for k in self.chunks(plan["gated"], 6):
            base = f"sweep-{rng.choice(WORDS)}"
            wl = self.new_workload("Pod", "research", base, shape)
            for i in range(k):
                self.pending(wl, "scheduling-gated", "gated", name=self.unique_pod_name("research", base, str(i)))

        # node-side: bound and still Pending.
        shape = self.shape("ns-imagepull", lambda: vllm_desc("ReplicaSet", 1, sel_accel(H100), True, "12", "96Gi",
                                                              image="vllm/vllm-openai:v0.6.3-post1"))
        for k in self.chunks(plan["ns-imagepull"], 4):
            wl = self.new_workload("Deployment", "ml-inference", "llm-canary", shape)
            for _ in range(k):
                node = self.place(h100_ok, shape.req)
                if node is None:
                    break
                pod = self.add_pod(wl, "imagepull", node, t0=rng.randint(600, 5400), word="image-pull")
                image = "vllm/vllm-openai:v0.6.3-post1"
                self.kubelet_event(pod, "Failed", "Warning",
                                   f'Failed to pull image "{image}": rpc error: code = NotFound desc = failed to pull and unpack image '
                                   f'"docker.io/{image}": failed to resolve reference "docker.io/{image}": docker.io/{image}: not found',
                                   rng.randint(3, 9), field="spec.containers{vllm}")
                self.kubelet_event(pod, "BackOff", "Normal", f'Back-off pulling image "{image}"', rng.randint(20, 120),
                                   field="spec.containers{vllm}")
        shape = self.shape("ns-init", lambda: etl_desc("2", "8Gi", wait=True))
        for k in self.chunks(plan["ns-init"], 3):
            wl = self.new_workload("Job", "data-pipeline", "backfill-warehouse", shape, t0=rng.randint(900, 7200))
            wl.job_state = "running"
            for _ in range(k):
                node = self.place(cpu_ok, shape.req)
                if node is None:
                    break
                self.add_pod(wl, "initrunning", node, t0=wl.t0 - 5, word="node-side")
        shape = self.shape("ns-mount", lambda: api_desc("500m", "1Gi", volumes=[{"name": "tls", "secret": {"defaultMode": 420, "secretName": P("app") + "-tls"}}]))
        for k in self.chunks(plan["ns-mount"], 3):
            wl = self.new_workload("Deployment", "payments", "report-api", shape)
            for _ in range(k):
                node = self.place(cpu_ok, shape.req)
                if node is None:
                    break
                pod = self.add_pod(wl, "creating", node, t0=rng.randint(300, 3600), word="node-side")
                self.kubelet_event(pod, "FailedMount", "Warning",
                                   f'MountVolume.SetUp failed for volume "tls" : secret "{wl.vals["app"]}-tls" not found',
                                   rng.randint(4, 30))

        # selector-mismatch: no node has the label.
        shape = self.shape("sm-accel", lambda: trainer_desc("Job", 8, {"cloud.google.com/gke-accelerator": "nvidia-h200-141gb"}, True, "24", "200Gi"))
        for k in self.chunks(plan["sm-accel"], 4):
            wl = self.new_workload("Job", "nlp", "eval-h200", shape, t0=rng.randint(600, 7200))
            for _ in range(k):
                self.pending(wl, "selector-mismatch")
        aff = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "nvidia.com/gpu.product", "operator": "In", "values": ["NVIDIA-A10G"]}]}]}}}
        shape = self.shape("sm-affinity", lambda: triton_desc("ReplicaSet", 1, {}, True, "4", "16Gi", affinity=aff))
        for k in self.chunks(plan["sm-affinity"], 4):
            wl = self.new_workload("Deployment", "vision", "detector-a10g", shape)
            for _ in range(k):
                self.pending(wl, "selector-mismatch")

        # cordoned: pinned (kubernetes.io/hostname) to a cordoned GPU node it otherwise tolerates.
        cordoned = [n for n in self.nodes if n.state == "cordoned" and n.pool["gpu"]]
        for i in range(plan["cordoned"]):
            node = cordoned[i % len(cordoned)]
            gpus = node.alloc[GPU]
            shape = self.shape(f"cordoned/{gpus}", lambda g=gpus: trainer_desc(None, g, {"kubernetes.io/hostname": P("pin")}, True, "16", "64Gi", applied=True))
            wl = self.new_workload("Pod", "ml-training", f"nccl-test-{node.name.rsplit('-', 1)[1]}", shape)
            self.pending(wl, "cordoned", pin=node.name)

        # untolerated-taint: the GPU pools' taint, not tolerated.
        shape = self.shape("ut-h100", lambda: vllm_desc("ReplicaSet", 1, sel_accel(H100), False, "8", "64Gi"))
        for k in self.chunks(plan["ut-h100"], 5):
            wl = self.new_workload("Deployment", "vision", "sdxl-serve", shape)
            for _ in range(k):
                self.pending(wl, "untolerated-taint")
        shape = self.shape("ut-mig", lambda: notebook_desc("Job", 1, sel_pool("a100-mig-pool"), False, res=MIG, restart="Never"))
        for k in self.chunks(plan["ut-mig"], 3):
            wl = self.new_workload("Job", "research", "mig-tune", shape, t0=rng.randint(600, 7200))
            for _ in range(k):
                self.pending(wl, "untolerated-taint")

        # no-gpu-node: every candidate lacks the resource in status.capacity.
        shape = self.shape("ng-spot", lambda: vllm_desc("ReplicaSet", 1, sel_pool("l4-spot-pool"), True, "4", "16Gi"))
        for k in self.chunks(plan["ng-spot"], 4):
            wl = self.new_workload("Deployment", "recsys", "batch-infer-spot", shape)
            for _ in range(k):
                self.pending(wl, "no-gpu-node")
        shape = self.shape("ng-mig", lambda: trainer_desc("Job", 1, sel_accel(H100), True, "4", "32Gi", res=MIG))
        for k in self.chunks(plan["ng-mig"], 3):
            wl = self.new_workload("Job", "nlp", "finetune-mig", shape, t0=rng.randint(600, 7200))
            for _ in range(k):  # the H100 nodes offer the vendor's GPUs as nvidia.com/gpu (`resource-name-mismatch`)
                self.pending(wl, "resource-name-mismatch")
        noplugin = [n for n in self.nodes if n.state == "noplugin"]
        for i in range(plan.get("ng-node", 0)):
            node = noplugin[i % len(noplugin)]
            shape = self.shape("ng-node", lambda: trainer_desc(None, 8, {"kubernetes.io/hostname": P("pin")}, True, "16", "64Gi", applied=True))
            wl = self.new_workload("Pod", "ml-training", f"dcgm-diag-{node.name.rsplit('-', 1)[1]}", shape)
            self.pending(wl, "no-gpu-node", pin=node.name)

        # allocatable-zero: pinned to a node that reports the GPUs with allocatable 0.
        zero = [n for n in self.nodes if n.state == "alloczero"]
        for i in range(plan["az"]):
            node = zero[i % len(zero)]
            shape = self.shape("az", lambda: trainer_desc(None, 1, {"kubernetes.io/hostname": P("pin")}, True, "8", "32Gi", applied=True))
            wl = self.new_workload("Pod", "ml-training", f"gpu-burn-{node.name.rsplit('-', 1)[1]}", shape)
            self.pending(wl, "allocatable-zero", pin=node.name)

        # exhausted: the A100 pool is full (fill_gpu keeps it so); 4-GPU pods on L4 (each L4 node holds a reranker).
        shape = self.shape("ex-a100", lambda: trainer_desc("Job", 4, sel_pool("a100-pool"), True, "10", "64Gi"))
        shape1 = self.shape("ex-a100-1", lambda: triton_desc("ReplicaSet", 1, sel_pool("a100-pool"), True, "4", "32Gi"))
        for k in self.chunks(plan["ex-a100"], 8):
            if rng.random() < 0.5:
                wl = self.new_workload("Job", "ml-training", "pretrain-queue", shape, t0=rng.randint(600, 7200))
            else:
                wl = self.new_workload("Deployment", "recsys", "ranker-a100", shape1)
            for _ in range(k):
                self.pending(wl, "exhausted")
        shape = self.shape("ex-frag", lambda: vllm_desc("ReplicaSet", 4, sel_pool("l4-pool"), False, "16", "64Gi"))
        for k in self.chunks(plan["ex-frag"], 4):
            wl = self.new_workload("Deployment", "ml-inference", "llm-70b-l4", shape)
            for _ in range(k):
                self.pending(wl, "exhausted")
        shape = self.shape("ex-memory", lambda: worker_desc("16", "1Ti", owner="Job", restart="Never"))
        for k in self.chunks(plan["ex-memory"], 2):
            wl = self.new_workload("Job", "analytics", "genome-assembly", shape, t0=rng.randint(600, 7200))
            for _ in range(k):
                self.pending(wl, "exhausted")

        # unclassified: fits by the funnel, but depends on what it does not model.
        shape = self.shape("uc-pvc", lambda: db_desc("milvus", "2", "8Gi"))
        for k in self.chunks(plan["uc-pvc"], 2):
            wl = self.new_workload("StatefulSet", "search", "milvus-querynode", shape)
            for _ in range(rng.randint(1, 3)):
                node = self.place(cpu_ok, shape.req)
                if node is not None:
                    self.add_pod(wl, "running", node)
            for _ in range(k):
                self.pending(wl, "volume-unbound", mode="pvc")  # its claim binds Immediate (generate_filters.py)
        for _ in range(plan["uc-anti"]):
            self.pending(reranker, "pod-affinity", mode="antiaffinity")
        if plan["uc-sched"]:  # Volcano's own scheduler runs (else its pods are no-scheduler); it models none of them
            vc = self.shape("sys/volcano-scheduler", lambda: system_desc("volcano-scheduler"))
            wl = self.new_workload("Deployment", "kube-system", "volcano-scheduler", vc, t0=380 * 86400)
            node = self.place([n for n in self.by_pool["system-pool"] if n.state == "ok"], vc.req) or self.place(cpu_ok, vc.req)
            if node is not None:
                self.add_pod(wl, "running", node)
        shape = self.shape("uc-sched", lambda: trainer_desc("Job", 1, sel_accel(L4), True, "4", "16Gi", scheduler="volcano"))
        for k in self.chunks(plan["uc-sched"], 3):
            wl = self.new_workload("Job", "research", "volcano-sweep", shape, t0=rng.randint(600, 7200))
            for _ in range(k):
                self.pending(wl, "unclassified", "nocond")

        # fits-now: the scheduler's last word is stale, a node has room now.
        shape = self.shape("fn-gpu", lambda: triton_desc("ReplicaSet", 1, sel_pool("l4-pool"), False, "4", "16Gi"))
        for k in self.chunks(plan["fn-gpu"], 6):
            wl = self.new_workload("Deployment", "search", "embedder", shape)
            for _ in range(k):
                self.pending(wl, "fits-now", mode="stale")
        shape = self.shape("fn-cpu", lambda: sandbox_desc("2", "4Gi"))
        for k in self.chunks(plan["fn-cpu"], 4):
            wl = self.new_workload("Deployment", "platform", "code-runner", shape)
            for _ in range(k):
                self.pending(wl, "fits-now", mode="stale")

    # -- admission refusals ----------------------------------------------------------------------
    def make_refusals(self) -> None:
        """ReplicaSets refused by a GPU quota and Jobs refused for a missing RuntimeClass (owners short of pods)."""
        rng = self.rng
        h100_ok = self.nodes_where("h100-pool")
        n = 1 + self.M // 60000
        self.quota_refused: list[Workload] = []
        for i, ns in enumerate(("vision", "nlp", "recsys", "research")[:n]):
            shape = self.shape("quota-rs", lambda: vllm_desc("ReplicaSet", 1, sel_accel(H100), True, "8", "64Gi"))
            wl = self.new_workload("Deployment", ns, "trainer" if i == 0 else "trainer-" + rng.choice(WORDS), shape,
                                   t0=rng.randint(3600, 86400))
            for _ in range(rng.randint(1, 3)):
                node = self.place(h100_ok, shape.req)
                if node is not None:
                    self.add_pod(wl, "running", node, t0=wl.t0 - 10)
            wl.refused = "quota"
            wl.missing = rng.randint(1, 2)
            self.quota_refused.append(wl)
            self.truth[f"{ns}/replicaset/{wl.rs_name}"] = "quota-exceeded"
        for i in range(n):
            shape = self.shape("rc-job", lambda: trainer_desc("Job", 1, sel_accel(L4), False, "4", "16Gi", runtime_class="nvidia"))
            wl = self.new_workload("Job", "batch", "batch-rc" if i == 0 else f"batch-rc-{rng.choice(WORDS)}", shape,
                                   t0=rng.randint(1800, 20000))
            wl.refused = "runtimeclass"
            wl.job_state = "refused"
            wl.missing = rng.randint(1, 4)  # parallelism; none exist
            self.truth[f"batch/job/{wl.name}"] = "no-runtimeclass"

    # -- filling the GPU pools -------------------------------------------------------------------
