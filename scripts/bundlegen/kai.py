"""`--kai`: a share of the GPU pods for KAI-Scheduler, its own pods, and the pods its queues and reservations stop.

Formats from NVIDIA/KAI-Scheduler's sources (pkg/common/constants/constants.go unless named):
- A KAI pod names `schedulerName: kai-scheduler` (DefaultSchedulerName), its queue in the label `kai.scheduler/queue`
  (DefaultQueueLabel) and its PodGroup in the annotation `pod-group-name` (PodGroupAnnotationForPod). The podgrouper
  names a Deployment's pod's group `pg-<pod>-<pod uid>` (pkg/podgrouper/podgrouper/plugins/deployment/
  deployment_grouper.go) and any other pod's `pg-<top owner>-<its uid>` (plugins/defaultgrouper/default_grouper.go).
- The operator deploys the scheduler in namespace `kai-scheduler` (DefaultKAINamespace) as Deployment
  `kai-scheduler-default` (pkg/operator/operands/scheduler/resources_for_shard.go deploymentName: scheduler name and
  shard), its container named as the Deployment with `--scheduler-name=kai-scheduler`, beside the binder,
  pod-grouper, queue-controller, podgroup-controller and admission (pkg/operator/operands/*/resources.go
  defaultResourceName; pkg/operator/operands/common/common.go), images `ghcr.io/nvidia/kai-scheduler/<name>`
  (pkg/apis/kai/v1/*: imageName).
- A GPU fraction (annotation `gpu-fraction`) is served by a reservation pod the binder creates in
  `kai-resource-reservation` (DefaultResourceReservationName): `gpu-reservation-<node>-<5 random>`, container
  `resource-reservation` asking one nvidia.com/gpu, labels `app` and `runai-gpu-group` (pkg/binder/binding/
  resourcereservation/resource_reservation.go). When it cannot run, binding fails and the scheduler marks the pod
  PodScheduled False, reason BindingError (pkg/scheduler/cache/status_updater/default_status_updater.go Bound).
- Over a queue's limit or quota the scheduler writes the PodGroup's scheduling condition and the pod's PodScheduled
  condition (reason Unschedulable, markTaskUnschedulable) with pkg/scheduler/api/unschedule_info.go's messages.

Every third pod asking nvidia.com/gpu of the default scheduler (after --hami took its half) becomes KAI's, in the leaf
Queue of its namespace under its team's department Queue; the quotas leave room for every pending one, so its word
stays. Besides, per 500 nodes (at least one set), in namespace `llm-research`: a preemptible job over its department's
limit and a non-preemptible one over its queue's quota (queue-quota), a job whose PodGroup names a queue that is gone
(queue-misconfigured), and a fraction pod whose reservation pod cannot pull its image (node-runtime; the reservation
pod itself image-pull). The Queues and PodGroups are written by scripts/generate_kai.py once the pods are written.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Iterator

import bundle_objects as bo
from bundle_objects import Tpl
from bundlegen.common import GPU, TEAMS, qty, ts

if TYPE_CHECKING:
    from bundlegen.generator import Generator

SCHEDULER = "kai-scheduler"
NAMESPACE = "kai-scheduler"
RESERVATION_NS = "kai-resource-reservation"
LAB_NS = "llm-research"
QUEUE_LABEL = "kai.scheduler/queue"
GROUP_ANNOTATION = "pod-group-name"
GPU_GROUP = "runai-gpu-group"
VERSION = "v0.9.3"
IMAGES = "ghcr.io/nvidia/kai-scheduler"
TRAIN_IMAGE = "nvcr.io/nvidia/pytorch:24.10-py3"
# The operator's Deployments in namespace kai-scheduler: (name, image name, arguments as the operator passes them:
# pkg/operator/operands/binder/resources.go, pod_grouper/resources.go, scheduler/resources_for_shard.go buildArgsList)
DEPLOYMENTS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("admission", "admission", ()),
    ("binder", "binder", ("--scheduler-name", SCHEDULER, "--resource-reservation-namespace", RESERVATION_NS)),
    ("kai-operator", "operator", ()),
    ("kai-scheduler-default", "scheduler", ("--scheduler-conf=/etc/config/config.yaml", f"--scheduler-name={SCHEDULER}",
                                            f"--namespace={NAMESPACE}", "--leader-elect=true")),
    ("pod-grouper", "podgrouper", ("--scheduler-name", SCHEDULER)),
    ("podgroup-controller", "podgroupcontroller", ()),
    ("queue-controller", "queuecontroller", ()),
)
LAB_DEPARTMENT = "dept-llm"
DEFAULT_QUEUE = "default-queue"  # docs/quickstart/default-queues.yaml, under default-parent-queue
LAB_QUEUE = "llm-research"
GONE_QUEUE = "llm-research-2025"
LAB_QUOTA = 1  # GPUs: the lab queue's guarantee, below what its non-preemptible job asks


def department(namespace: str) -> str:
    return f"dept-{TEAMS.get(namespace, 'platform')}"


@dataclass(kw_only=True)
class Group:
    """One PodGroup as the podgrouper made it, and what its pods hold or ask."""

    namespace: str
    name: str
    queue: str
    preemptible: bool
    owner: dict | None  # the ownerReference the PodGroup carries (its top owner's), None for a bare pod
    running: int = 0
    pending: int = 0
    gpus: float = 0.0  # held by its bound pods
    cpu: int = 0  # millicpu held
    memory: int = 0  # bytes held
    asked: float = 0.0  # GPUs its pending pods ask
    said: tuple[str, str, str] | None = None  # (condition type, reason, KAI's message) for a pending group


@dataclass(kw_only=True)
class KaiWorld:
    gen: Generator
    groups: dict[tuple[str, str], Group] = field(default_factory=dict)
    extras: list[tuple[tuple[str, str], dict]] = field(default_factory=list)  # (namespace, name) -> pod, sorted
    # The lab's pods refused by a queue: KAI's message names what the department holds, known once every generated
    # pod is written, so they come last in pods.json (as --stuck-daemonset's pods do).
    deferred: list[tuple[dict, Group]] = field(default_factory=list)
    count: int = 0

    @property
    def namespaces(self) -> set[str]:
        return {NAMESPACE, RESERVATION_NS, LAB_NS}

    # -- the share of the generated GPU pods --------------------------------------------------------------
    def pod(self, text: str) -> str:
        """A generated pod's text, KAI's when it is one of every third default-scheduler pod asking nvidia.com/gpu."""
        if f'"{GPU}": "' not in text or '"schedulerName": "default-scheduler"' not in text:  # asked, not tolerated
            return text
        if "schedulingGates" in text or "kueue.x-k8s.io/" in text or '"kind": "DaemonSet"' in text:
            return text  # gated and Kueue's pods keep their rows; a DaemonSet's pods are not grouped
        self.count += 1
        if self.count % 3:
            return text
        obj = json.loads(text)
        status = obj.get("status") or {}
        meta, spec = obj["metadata"], obj["spec"]
        ns = meta["namespace"]
        if status.get("phase") not in ("Running", "Pending") or self.gen.truth.get(f"{ns}/{meta['name']}") == "fits-now":
            # A pod some node takes now is fits-now only for kube-scheduler, whose retry the analyzer models; for
            # another scheduler's it answers unclassified, its fit depending on that scheduler.
            return text
        owners = meta.get("ownerReferences") or []
        owner = owners[0] if owners else None
        if owner is None or owner["kind"] == "ReplicaSet":  # deployment_grouper.go: one group per pod
            group_name, top = f"pg-{meta['name']}-{meta['uid']}", None
        else:
            group_name, top = f"pg-{owner['name']}-{owner['uid']}", owner
        g = self.groups.get((ns, group_name))
        if g is None:
            g = self.groups[(ns, group_name)] = Group(
                namespace=ns, name=group_name, queue=ns, preemptible=owner is not None and owner["kind"] == "Job",
                owner=top)
        gpus = cpu = memory = 0
        for c in spec.get("containers") or ():
            requests = (c.get("resources") or {}).get("requests") or {}
            gpus += int(((c.get("resources") or {}).get("limits") or {}).get(GPU, 0))
            cpu += qty("cpu", requests.get("cpu", "0"))
            memory += qty("memory", requests.get("memory", "0"))
        if spec.get("nodeName"):
            g.running += 1
            g.gpus += gpus
            g.cpu += cpu
            g.memory += memory
        else:
            g.pending += 1
            g.asked += gpus
            for cond in status.get("conditions") or ():
                if cond.get("type") == "PodScheduled" and cond.get("message"):
                    g.said = ("UnschedulableOnNodePool", "Unschedulable", cond["message"])
        spec["schedulerName"] = SCHEDULER
        meta.setdefault("labels", {})[QUEUE_LABEL] = ns
        meta.setdefault("annotations", {})[GROUP_ANNOTATION] = group_name
        prefix = text[:len(text) - len(text.lstrip(" "))]
        return "\n".join(prefix + line for line in json.dumps(obj, indent=4).split("\n"))

    # -- KAI's own pods and the lab's, merged into pods.json in the API server's order ---------------------
    def plan(self) -> None:
        """KAI's pods, and per 500 nodes a set of the lab's targets (their truth in gen.truth)."""
        g = self.gen
        system = sorted((n for n in g.nodes if n.pool["name"] == "system-pool" and n.state == "ok"), key=lambda n: n.name)
        for i, (name, image, args) in enumerate(DEPLOYMENTS):
            node = system[i % len(system)].name if system else ""
            suffix = bo.suffix_from(g.h("kai", name), 10)
            pod = self._pod(NAMESPACE, f"{name}-{suffix[:9]}-{suffix[5:]}", node=node, created=ts(30 * 86400),
                            labels={"app": name, "pod-template-hash": suffix[:9]}, annotations={},
                            owner={"kind": "ReplicaSet", "name": f"{name}-{suffix[:9]}"},
                            container={"name": name, "image": f"{IMAGES}/{image}:{VERSION}", "args": list(args),
                                       "resources": {"requests": {"cpu": "50m", "memory": "200Mi"}}})
            pod["status"] = _running(name, f"{IMAGES}/{image}:{VERSION}", ts(30 * 86400 - 20))
            self.extras.append(((NAMESPACE, pod["metadata"]["name"]), pod))
        reservable = sorted((n for n in g.nodes if n.state == "ok" and n.pool["gpu"] and not n.pool["noplugin"]
                             and not n.pool["gpu"].get("mig") and n.alloc[GPU] - n.used[GPU] > 0),
                            key=lambda n: (-(n.alloc[GPU] - n.used[GPU]), n.name))
        for k in range(max(1, len(g.nodes) // 500)):
            self._lab_set(k, reservable[k % len(reservable)].name if reservable else "")
        self.extras.sort(key=lambda e: e[0])

    def _lab_set(self, k: int, node: str) -> None:
        g = self.gen
        created = ts(3600 + 60 * k)
        train = {"name": "train", "image": TRAIN_IMAGE, "command": ["torchrun", "train.py"],
                 "resources": {"limits": {GPU: "1"}, "requests": {"cpu": "8", "memory": "64Gi", GPU: "1"}}}

        def pod_name(job: str) -> str:
            return f"{job}-{bo.suffix_from(g.h('kai-pod', job))}"

        def add(name: str, word: str, *, queue: str, preemptible: bool, gpus: int = 1, annotations: dict | None = None,
                labels: dict | None = None, said: tuple[str, str, str] | None = None) -> None:
            container = json.loads(json.dumps(train))
            if gpus:
                container["resources"]["limits"][GPU] = container["resources"]["requests"][GPU] = str(gpus)
            else:
                del container["resources"]["limits"], container["resources"]["requests"][GPU]
            job = {"kind": "Job", "name": name, "apiVersion": "batch/v1", "uid": g.uid("kai-job", name)}
            group = f"pg-{name}-{job['uid']}"
            pod = self._pod(LAB_NS, pod_name(name), created=created, owner=job, container=container,
                            labels={QUEUE_LABEL: queue, "job-name": name, **(labels or {})},
                            annotations={GROUP_ANNOTATION: group, **(annotations or {})})
            pod["spec"]["schedulerName"] = SCHEDULER
            pod["status"] = {"phase": "Pending", "qosClass": "Burstable"}
            if said is not None and said[1] != "QueueDoesNotExist":  # a group KAI cannot snapshot marks no pod
                pod["status"]["conditions"] = [{"lastProbeTime": None, "lastTransitionTime": created, "message": said[2],
                                                "reason": said[1], "status": "False", "type": "PodScheduled"}]
            made = self.groups[(LAB_NS, group)] = Group(namespace=LAB_NS, name=group, queue=queue,
                                                        preemptible=preemptible, owner=job, pending=1,
                                                        asked=float(gpus) or float((annotations or {}).get("gpu-fraction", 0)),
                                                        said=said)
            if word == "queue-quota":
                self.deferred.append((pod, made))
            else:
                self.extras.append(((LAB_NS, pod_name(name)), pod))
            g.truth[f"{LAB_NS}/{pod_name(name)}"] = word

        # The two quota refusals get KAI's messages in rest(), when what the department holds is known.
        add(f"finetune-over-limit-{k}", "queue-quota", queue=LAB_QUEUE, preemptible=True, gpus=2)
        add(f"serve-eval-over-quota-{k}", "queue-quota", queue=LAB_QUEUE, preemptible=False, gpus=2)
        add(f"sweep-old-queue-{k}", "queue-misconfigured", queue=GONE_QUEUE, preemptible=True,
            said=("UnschedulableOnNodePool", "QueueDoesNotExist", f"Queue '{GONE_QUEUE}' does not exist"))
        if not node:
            return
        gpu_group = bo.uid_from(g.h("kai-gpu-group", str(k)))
        reservation = f"gpu-reservation-{node}-{bo.suffix_from(g.h('kai-reservation', str(k)))}"
        image = f"{IMAGES}/resource-reservation:{VERSION}"
        notebook = f"notebook-half-gpu-{k}"
        failed = (f"Failed to bind pod {LAB_NS}/{pod_name(notebook)} to node {node}. failed waiting for GPU reservation "
                  f"pod to allocate: {RESERVATION_NS}/{reservation}")
        add(notebook, "node-runtime", queue=DEFAULT_QUEUE, preemptible=True, gpus=0, annotations={"gpu-fraction": "0.5"},
            labels={GPU_GROUP: gpu_group}, said=("UnschedulableOnNodePool", "BindingError", failed))
        res = self._pod(RESERVATION_NS, reservation, node=node, created=created, owner=None,
                        labels={"app": RESERVATION_NS, GPU_GROUP: gpu_group},
                        annotations={"karpenter.sh/do-not-disrupt": "true"},
                        container={"name": "resource-reservation", "image": image, "imagePullPolicy": "IfNotPresent",
                                   "resources": {"limits": {GPU: "1"}, "requests": {GPU: "1"}}})
        res["spec"]["serviceAccountName"] = RESERVATION_NS  # (no runtimeClassName: the bundle's is nvidia-cdi)
        res["status"] = {"phase": "Pending", "qosClass": "BestEffort", "startTime": created,
                         "containerStatuses": [{"image": image, "imageID": "", "lastState": {}, "name": "resource-reservation",
                                                "ready": False, "restartCount": 0, "started": False,
                                                "state": {"waiting": {"reason": "ImagePullBackOff",
                                                                      "message": f'Back-off pulling image "{image}"'}}}]}
        self.extras.append(((RESERVATION_NS, reservation), res))
        g.truth[f"{RESERVATION_NS}/{reservation}"] = "image-pull"

    def _pod(self, ns: str, name: str, *, created: str, labels: dict, annotations: dict, container: dict,
             owner: dict | None, node: str = "") -> dict:
        meta: dict = {"creationTimestamp": created, "labels": labels, "name": name, "namespace": ns,
                      "resourceVersion": self.gen.rv("kai", ns, name), "uid": self.gen.uid("kai-pod", ns, name)}
        if annotations:
            meta["annotations"] = annotations
        if owner is not None:
            meta["ownerReferences"] = [{"apiVersion": owner.get("apiVersion", "apps/v1"), "blockOwnerDeletion": True,
                                        "controller": True, "kind": owner["kind"], "name": owner["name"],
                                        "uid": owner.get("uid") or self.gen.uid(owner["kind"], ns, owner["name"])}]
        spec: dict = {"containers": [container], "dnsPolicy": "ClusterFirst", "enableServiceLinks": True,
                      "preemptionPolicy": "PreemptLowerPriority", "priority": 0, "restartPolicy": "Always",
                      "schedulerName": "default-scheduler", "securityContext": {}, "serviceAccountName": "default",
                      "terminationGracePeriodSeconds": 30,
                      "tolerations": [{"effect": "NoSchedule", "key": GPU, "operator": "Exists"}]}
        if node:
            spec["nodeName"] = node
        return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}

    def before(self, key: tuple[str, str]) -> Iterator[tuple[str, Tpl]]:
        """The planned pods that sort before `key` and have not been written yet (all of them for None)."""
        while self.extras and self.extras[0][0] < key:
            _, pod = self.extras.pop(0)
            tpl = Tpl(pod)
            yield tpl.render({}), tpl

    def rest(self) -> Iterator[tuple[str, Tpl]]:
        """The planned pods not written yet, then the lab's pods a queue refuses, with KAI's words."""
        yield from self.before(("\U0010ffff", ""))
        lab = self.lab_department()
        for pod, group in self.deferred:
            if group.preemptible:
                group.asked = lab.asks
                resources = pod["spec"]["containers"][0]["resources"]
                resources["limits"][GPU] = resources["requests"][GPU] = number(lab.asks)
            group.said = ("UnschedulableOnNodePool", *_refusal(group, lab))
            pod["status"]["conditions"] = [{"lastProbeTime": None, "lastTransitionTime": pod["metadata"]["creationTimestamp"],
                                            "message": group.said[2], "reason": "Unschedulable", "status": "False",
                                            "type": "PodScheduled"}]
            tpl = Tpl(pod)
            yield tpl.render({}), tpl

    def lab_department(self) -> Lab:
        """Where the lab's queue goes: the department holding the most GPUs among those whose waiting groups ask at
        most 7 GPUs; its limit is what it holds plus the most one of them asks (each still fits under it), and the
        lab's preemptible job asks one GPU more than that (at least 2), so it alone is over the limit."""
        held: dict[str, float] = {}
        most: dict[str, float] = {}
        for g in self.groups.values():
            if g.namespace != LAB_NS:
                name = department(g.queue)
                held[name] = held.get(name, 0.0) + g.gpus
                most[name] = max(most.get(name, 0.0), g.asked)
        fits = [(gpus, name) for name, gpus in held.items() if most[name] < 8]
        gpus, name = max(fits, default=(0.0, LAB_DEPARTMENT))
        return Lab(department=name, held=gpus, limit=gpus + most.get(name, 0.0), asks=max(2.0, most.get(name, 0.0) + 1))


@dataclass(frozen=True, kw_only=True)
class Lab:
    department: str
    held: float  # GPUs its queues' running groups hold
    limit: float
    asks: float  # what the lab's preemptible job asks


def number(value: float) -> str:
    return f"{value:g}"


def _refusal(group: Group, lab: Lab) -> tuple[str, str]:
    """KAI's reason and message (pkg/scheduler/api/unschedule_info.go GetJobOverMaxAllowedMessageForQueue,
    GetBuildOverCapacityMessageForQueue): a preemptible job over the department's limit, a non-preemptible one
    over its queue's quota."""
    if group.preemptible:
        return "OverLimit", (f"{lab.department} quota has reached the allowable limit of GPUs. Limit is "
                             f"{number(lab.limit)} GPUs, currently {number(lab.held)} GPUs allocated and workload "
                             f"requested {number(group.asked)} GPUs")
    return "NonPreemptibleOverQuota", (f"Non-preemptible workload is over quota. Workload requested {number(group.asked)} "
                                       f"GPUs, but {LAB_QUEUE} quota is {LAB_QUOTA} GPUs, while 0 GPUs are already "
                                       "allocated for non-preemptible pods. Use a preemptible workload to go over quota.")


def _running(name: str, image: str, started: str) -> dict:
    return {"conditions": [{"lastProbeTime": None, "lastTransitionTime": started, "status": "True", "type": t}
                           for t in ("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled")],
            "containerStatuses": [{"image": image, "imageID": "", "lastState": {}, "name": name, "ready": True,
                                   "restartCount": 0, "started": True, "state": {"running": {"startedAt": started}}}],
            "phase": "Running", "qosClass": "Burstable", "startTime": started}
