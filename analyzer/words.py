"""The cause words: the contract of causes.md (version 4, 37 rows), defined once.

The words are an API (alert routing keys on them). Every other module refers
to these constants. ROWS holds the contract's rows in its order; the classifier walks
rules/order.py, whose rules give these words in the same order (tests/test_order.py).
"""

from __future__ import annotations

from dataclasses import dataclass

NO_RUNTIMECLASS = "no-runtimeclass"
INVALID_SPEC = "invalid-spec"
LIMIT_RANGE = "limit-range"
ADMISSION_DENIED = "admission-denied"
ADMISSION_UNAVAILABLE = "admission-unavailable"
QUOTA_EXCEEDED = "quota-exceeded"
NO_GPU_REQUEST = "no-gpu-request"
QUEUE_MISCONFIGURED = "queue-misconfigured"
QUEUE_QUOTA = "queue-quota"
QUEUE_TOPOLOGY = "queue-topology"
SCHEDULING_GATED = "scheduling-gated"
NO_SCHEDULER = "no-scheduler"
IMAGE_PULL = "image-pull"
VOLUME_MOUNT = "volume-mount"
NUMA_UNALIGNED = "numa-unaligned"
NODE_RUNTIME = "node-runtime"
NODE_SIDE = "node-side"
NO_RESOURCECLAIM = "no-resourceclaim"
NO_DEVICECLASS = "no-deviceclass"
NO_VOLUMECLAIM = "no-volumeclaim"
VOLUME_UNBOUND = "volume-unbound"
SELECTOR_MISMATCH = "selector-mismatch"
RESOURCE_NAME_MISMATCH = "resource-name-mismatch"
NO_GPU_NODE = "no-gpu-node"
DEVICE_SELECTOR_MISMATCH = "device-selector-mismatch"
VOLUME_NODE_CONFLICT = "volume-node-conflict"
CORDONED = "cordoned"
NODE_UNHEALTHY = "node-unhealthy"
UNTOLERATED_TAINT = "untolerated-taint"
ALLOCATABLE_ZERO = "allocatable-zero"
POD_AFFINITY = "pod-affinity"
TOPOLOGY_SPREAD = "topology-spread"
EXHAUSTED = "exhausted"
SCALING_UP = "scaling-up"
SCALE_UP_BLOCKED = "scale-up-blocked"
UNCLASSIFIED = "unclassified"
FITS_NOW = "fits-now"
# Not part of the order: answers for pods asked about by name, and for a
# question the bundle cannot decide.
RUNNING = "running"
INSUFFICIENT_EVIDENCE = "insufficient-evidence"


@dataclass(frozen=True, kw_only=True)
class Word:
    word: str
    row: int | None  # the row of causes.md; None for the two answers outside the order
    holds_when: str
    next_action: str


# The README's word table is generated from these (scripts/refresh_readme.py; tests/test_readme.py checks it).
# `next_action` is the contract's action column as a person reads it; where the contract adds a note for a
# sub-case ("too-large: ..."), the rule that decides the sub-case writes its own action (verdict.action).
ROWS: tuple[Word, ...] = (
    Word(word=NO_RUNTIMECLASS, row=1, holds_when="(never created) `spec.runtimeClassName` names no RuntimeClass",
         next_action="create the RuntimeClass or fix the name"),
    Word(word=INVALID_SPEC, row=2,
         holds_when="(never created) the API server's validation refuses the manifest (for an accelerator: a request "
                    "that differs from its limit, is not a whole number, or has no limit)",
         next_action="fix the named field (for an accelerator: set its limit, and the request equal to it, a whole number)"),
    Word(word=LIMIT_RANGE, row=3,
         holds_when="(never created) a LimitRange in the namespace refuses it: a request or limit outside its min/max, "
                    "or over its maxLimitRequestRatio, after its defaults are filled in",
         next_action="fit the LimitRange, or ask its owner to change it"),
    Word(word=ADMISSION_DENIED, row=4,
         holds_when="(never created) a policy refused it: a validating webhook, a ValidatingAdmissionPolicy or Pod Security",
         next_action="change the pod to meet the policy, or ask the policy's owner for an exception"),
    Word(word=ADMISSION_UNAVAILABLE, row=5,
         holds_when="(never created) an admission webhook with `failurePolicy: Fail` that matches the pod could not be "
                    "called (its Service has no ready endpoint, connection refused, deadline exceeded)",
         next_action="restore the webhook's service, or fix its failurePolicy or namespaceSelector"),
    Word(word=QUOTA_EXCEEDED, row=6, holds_when="(never created) a ResourceQuota in the namespace would be exceeded",
         next_action="raise the quota or free usage in that namespace"),
    Word(word=NO_GPU_REQUEST, row=7,
         holds_when="GPU intent, but no container asks for an accelerator, the pod has no resource claim, and it asks for "
                    "no GPU the way a sharing scheduler reads it",
         next_action="add the accelerator limit (or a resource claim)"),
    Word(word=QUEUE_MISCONFIGURED, row=8,
         holds_when="a queue (Kueue, Volcano, KAI) holds the workload and can never admit it: its LocalQueue or "
                    "ClusterQueue is missing, stopped or inactive, or covers none of a resource it asks for",
         next_action="fix the queue (create it, resume it, add the missing flavor or resource), or the queue name"),
    Word(word=QUEUE_QUOTA, row=9,
         holds_when="a queue holds the workload and in every flavor it may use the free quota (nominal + borrowable "
                    "- reserved) is short (too-large: even with the queue empty)",
         next_action="wait for the queue, or raise the queue's quota"),
    Word(word=QUEUE_TOPOLOGY, row=10,
         holds_when="a queue holds the workload, quota would admit it, but its topology-aware placement finds no "
                    "topology domain where all the pods it must keep together fit",
         next_action="relax the required topology to preferred, shrink the pod set, or free a domain"),
    Word(word=SCHEDULING_GATED, row=11,
         holds_when="`spec.schedulingGates` is non-empty and no queue row holds",
         next_action="look at the controller that owns the gate"),
    Word(word=NO_SCHEDULER, row=12,
         holds_when="`spec.schedulerName` names a scheduler other than `default-scheduler` that nothing in the bundle "
                    "runs, and no scheduler has looked at the pod although it is older than a minute",
         next_action="install or start the scheduler named, or fix `schedulerName`"),
    Word(word=IMAGE_PULL, row=13, holds_when="bound, and a container waits because its image cannot be pulled",
         next_action="fix the image reference or the pull secret, or the node's access to the registry"),
    Word(word=VOLUME_MOUNT, row=14,
         holds_when="bound, no container started, and the latest events say a volume could not be attached or mounted",
         next_action="fix the volume: detach it from the other node, or repair the mount"),
    Word(word=NUMA_UNALIGNED, row=15,
         holds_when="the kubelet rejected it with `TopologyAffinityError`: its Topology Manager could not place the "
                    "pod's devices (and CPUs) on one NUMA node",
         next_action="ask for devices that fit one NUMA node, relax the node's topology manager policy, or run where "
                     "one NUMA node has them free"),
    Word(word=NODE_RUNTIME, row=16,
         holds_when="bound, and the node's runtime or GPU stack refused it (kubelet admission for its devices, sandbox "
                    "or container creation or start)",
         next_action="repair the node's GPU stack (driver, container toolkit, device plugin or DRA driver), "
                     "then recreate the pod"),
    Word(word=NODE_SIDE, row=17,
         holds_when="`spec.nodeName` is set and the pod is still `Pending` for no reason the rows above it name",
         next_action="look at the node and its kubelet"),
    Word(word=NO_RESOURCECLAIM, row=18,
         holds_when="a ResourceClaim the pod names, or the ResourceClaimTemplate it names (no claim generated), is not in the bundle",
         next_action="create the claim or template, or fix the name"),
    Word(word=NO_DEVICECLASS, row=19,
         holds_when="a request of one of the pod's claims (or of its template) names a DeviceClass that is not in the bundle",
         next_action="create the DeviceClass or fix the name"),
    Word(word=NO_VOLUMECLAIM, row=20,
         holds_when="a PersistentVolumeClaim the pod names, or the StorageClass that claim names, is not in the bundle",
         next_action="create the PersistentVolumeClaim or StorageClass, or fix the name"),
    Word(word=VOLUME_UNBOUND, row=21,
         holds_when="a claim the pod uses is unbound and nothing binds it at scheduling time (Immediate and Pending, "
                    "or bound to a missing PersistentVolume)",
         next_action="look at the claim's provisioner (or create a matching PersistentVolume)"),
    Word(word=SELECTOR_MISMATCH, row=22, holds_when="no node satisfies nodeSelector together with required node affinity",
         next_action="fix the selector/affinity or the node labels"),
    Word(word=RESOURCE_NAME_MISMATCH, row=23,
         holds_when="no candidate advertises the accelerator name the pod asks for, but some advertises a sibling of the "
                    "same vendor (`nvidia.com/gpu.shared`, `nvidia.com/mig-<profile>`)",
         next_action="ask for the resource the nodes advertise, or change the device plugin's sharing or MIG "
                     "configuration"),
    Word(word=NO_GPU_NODE, row=24,
         holds_when="no candidate advertises the requested extended resource at all, or no ResourceSlice offers a candidate any device of a claim's DeviceClass",
         next_action="restore what advertises the devices: the device plugin, or the DRA driver"),
    Word(word=DEVICE_SELECTOR_MISMATCH, row=25,
         holds_when="candidates offer devices of the class, but none can satisfy a claim even with every device free (CEL selectors, constraints)",
         next_action="fix the claim's selectors, count or constraints (or the DeviceClass)"),
    Word(word=VOLUME_NODE_CONFLICT, row=26,
         holds_when="every remaining candidate is excluded because the pod's volumes cannot be used there (PersistentVolume "
                    "node affinity or zone; no volume or provisioner for a WaitForFirstConsumer claim)",
         next_action="put the data where the GPU nodes are (or GPU nodes where the data is)"),
    Word(word=CORDONED, row=27, holds_when="every remaining candidate is excluded only because it is cordoned",
         next_action="uncordon, or wait for the maintenance"),
    Word(word=NODE_UNHEALTHY, row=28,
         holds_when="every remaining candidate is excluded at the taint stage by a taint the node lifecycle controller or "
                    "the kubelet sets for a condition (not-ready, unreachable, memory/disk/pid pressure, network "
                    "unavailable, out of service)",
         next_action="repair the node's condition (free its disk, restart its kubelet, ...); a toleration is not the fix"),
    Word(word=UNTOLERATED_TAINT, row=29,
         holds_when="every remaining candidate has a NoSchedule/NoExecute taint (or cordon) the pod does not tolerate, or every device that could serve a claim there has an untolerated device taint",
         next_action="add the toleration, or fix the taint"),
    Word(word=ALLOCATABLE_ZERO, row=30, holds_when="the candidates that report the resource all have allocatable 0 (capacity > 0)",
         next_action="repair the node (driver, validation)"),
    Word(word=POD_AFFINITY, row=31,
         holds_when="every remaining candidate fails a required inter-pod rule (the pod's affinity or anti-affinity, or "
                    "an existing pod's anti-affinity)",
         next_action="relax the rule, or move the pods it counts"),
    Word(word=TOPOLOGY_SPREAD, row=32,
         holds_when="every remaining candidate would break a `DoNotSchedule` topology spread constraint",
         next_action="relax the constraint, or add capacity in the domain that lacks it"),
    Word(word=EXHAUSTED, row=33,
         holds_when="on every remaining candidate something is short once what is in use is counted (a resource, "
                    "devices of a claim, a host port, attachable volumes, a ReadWriteOncePod claim; too-large: even empty)",
         next_action="wait for free slots, or add capacity"),
    Word(word=SCALING_UP, row=34,
         holds_when="no node can take the pod now, and an autoscaler has started a node for it that has not arrived",
         next_action="wait for the new node"),
    Word(word=SCALE_UP_BLOCKED, row=35,
         holds_when="`no-gpu-node` or `exhausted` would answer, and the autoscaler has said no new node can help (or "
                    "the node it launched for the pod failed to launch)",
         next_action="raise the node group's maximum or the NodePool's limits, or offer an instance type with the GPU"),
    Word(word=UNCLASSIFIED, row=36, holds_when="nothing above holds and the pod depends on something not modelled",
         next_action="read the scheduler's own message (quoted in the evidence)"),
    Word(word=FITS_NOW, row=37, holds_when="nothing above holds: by this bundle some node can take the pod now",
         next_action="wait for the retry; compare the scheduler's message with the evidence"),
)

EXTRA: tuple[Word, ...] = (
    Word(word=RUNNING, row=None, holds_when="(asked by name) the pod is bound and past Pending",
         next_action="nothing to fix at scheduling; look inside the pod"),
    Word(word=INSUFFICIENT_EVIDENCE, row=None, holds_when="a rule needs a file the bundle lacks or that is invalid (named)",
         next_action="collect the named file and run again"),
)

ALL: tuple[Word, ...] = ROWS + EXTRA
BY_WORD: dict[str, Word] = {w.word: w for w in ALL}
# The rows whose target was never created: the API server refuses the pod (admission, the top of causes.md).
NEVER_CREATED: frozenset[str] = frozenset(w.word for w in ROWS if w.holds_when.startswith("(never created)"))
VOCABULARY: tuple[str, ...] = tuple(w.word for w in ALL)


def next_action(word: str) -> str:
    return BY_WORD[word].next_action


def summary_action(word: str, own: set[str], elsewhere: str, *, each_own: bool = False) -> str:
    """A summary line's action for a word: its targets' own when they all share one (one quota, one missing
    Secret), else the contract's, and `elsewhere` says where each target's own is. `each_own`: the targets'
    actions differ even where `own` holds one (a report shape whose pods each name their own node)."""
    if len(own) == 1 and "" not in own and not each_own:
        return next(iter(own))
    general = BY_WORD[word].next_action if word in BY_WORD else ""
    return general + (f"; {elsewhere}" if each_own or len(own - {""}) > 1 else "")


def readme_table(decided: frozenset[str]) -> str:
    """The README's word table, from the definitions above; `decided` holds the words rules/order.py gives
    (a contract row not modelled yet is listed, marked, so the table is the whole contract)."""
    lines = ["| # | word | holds when | next action |", "|---|---|---|---|"]
    for w in ALL:
        holds = w.holds_when if w.word in decided or w.row is None else f"*(not modelled yet)* {w.holds_when}"
        lines.append(f"| {w.row if w.row is not None else '–'} | `{w.word}` | {holds} | {w.next_action} |")
    return "\n".join(lines) + "\n"
