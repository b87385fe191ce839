"""One thing to answer: a pod, an attempt (a manifest judged against the bundle) or a refused owner."""

from __future__ import annotations

from dataclasses import dataclass, field

from analyzer.bundle.validation import Violation


@dataclass(frozen=True, kw_only=True)
class ServerText:
    """What the API server said about a pod it refused (or admitted), reduced to the rule it speaks for."""

    says: str  # runtimeclass | quota | other-refusal | admitted
    text: str  # verbatim
    detail: dict = field(default_factory=dict)


@dataclass(kw_only=True)
class Target:
    """One thing to answer: a pod, an attempt (a manifest judged against the bundle) or a refused owner."""

    kind: str  # "Pod", "Attempt", or the owner's kind ("ReplicaSet", "Job", ...)
    namespace: str
    name: str
    spec: dict | None
    created: bool
    source: str  # "pods.json $.items[3]" etc.: where a person finds it
    phase: str | None = None
    node_name: str = ""
    status: dict = field(default_factory=dict)
    server_text: ServerText | None = None  # the API server's own answer, when the bundle has it
    answer: dict | None = None  # an attempt's stored dry-run answer
    owner: dict | None = None  # desired/existing replicas, events, for controller refusals
    invalid: list[Violation] = field(default_factory=list)
    controller: str | None = None  # a pod's controlling owner as "Kind namespace/name" (ownerReferences)
    queue_hints: dict[str, str] = field(default_factory=dict)  # Kueue's queue-name label, Volcano's PodGroup
    workload: str = ""  # a queue target's Kueue Workload or Volcano PodGroup (namespace/name)
    labels: dict = field(default_factory=dict)  # metadata.labels (inter-pod affinity and spread match on them)
    uid: str = ""  # metadata.uid (a generic ephemeral volume's claim must be owned by its pod)
    annotations: dict[str, str] = field(default_factory=dict)  # only those a rule reads (the ProvisioningRequest it consumes)
    controller_uid: str | None = None  # the controlling owner's uid (its name when the uid is missing)
    created_at: str = ""  # metadata.creationTimestamp as written (a rejected pod's replacement is created later)

    @property
    def key(self) -> str:
        if self.kind in ("Pod", "Attempt"):
            return f"{self.namespace}/{self.name}"
        return f"{self.namespace}/{self.kind.lower()}/{self.name}"


