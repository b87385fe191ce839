"""The kinds catalog: every file of a bundle the analyzer reads, in one table.

Everything that needs the list of kinds reads it from here: the loader, the
schema maker, the sealer, the bundle generator and the tests. The collector
(scripts/collect.py) keeps its own copy because it must stay one stdlib-only
file a customer can copy; tests/test_catalog.py pins that copy to this table.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, kw_only=True)
class Kind:
    file: str  # "<name>.json" in the bundle; also the schema's name (schemas/<name>.schema.json)
    resource: str  # what the collector asks kubectl for (qualified where a CRD of the same name could shadow it)
    group: str  # API group ("" for the core group)
    item_kind: str  # the kind of one item ("Pod")
    namespaced: bool
    required: bool = False  # a bundle without it cannot be analysed
    # Read only this one object (namespace, name), by field selector: the cluster-autoscaler's status ConfigMap is
    # the one ConfigMap ever read, and no other can be listed by mistake.
    only: tuple[str, str] | None = None

    @property
    def name(self) -> str:
        return self.file.removesuffix(".json")

    @property
    def command(self) -> tuple[str, ...]:
        """The kubectl command that makes the file (as the collector runs it, without context flags)."""
        if self.only is not None:
            namespace, name = self.only
            return ("kubectl", "get", self.resource, "-n", namespace, "--field-selector", f"metadata.name={name}",
                    "-o", "json")
        return ("kubectl", "get", self.resource, *(("-A",) if self.namespaced else ()), "-o", "json")


DRA_GROUP = "resource.k8s.io"
KARPENTER_GROUP = "karpenter.sh"
PROVREQ_GROUP = "autoscaling.x-k8s.io"
CA_STATUS = ("kube-system", "cluster-autoscaler-status")  # cluster-autoscaler's --status-config-map-name default

KINDS: tuple[Kind, ...] = (
    Kind(file="pods.json", resource="pods", group="", item_kind="Pod", namespaced=True, required=True),
    Kind(file="nodes.json", resource="nodes", group="", item_kind="Node", namespaced=False, required=True),
    Kind(file="resourcequotas.json", resource="resourcequotas", group="", item_kind="ResourceQuota", namespaced=True),
    Kind(file="runtimeclasses.json", resource="runtimeclasses", group="node.k8s.io", item_kind="RuntimeClass",
         namespaced=False),
    Kind(file="events.json", resource="events", group="", item_kind="Event", namespaced=True),
    Kind(file="replicasets.json", resource="replicasets", group="apps", item_kind="ReplicaSet", namespaced=True),
    Kind(file="jobs.json", resource="jobs", group="batch", item_kind="Job", namespaced=True),
    Kind(file="statefulsets.json", resource="statefulsets", group="apps", item_kind="StatefulSet", namespaced=True),
    Kind(file="daemonsets.json", resource="daemonsets", group="apps", item_kind="DaemonSet", namespaced=True),
    Kind(file="namespaces.json", resource="namespaces", group="", item_kind="Namespace", namespaced=False),
    # Dynamic Resource Allocation (dra.md): v1, v1beta2 or v1beta1, whatever the server serves.
    Kind(file="resourceclaims.json", resource="resourceclaims.resource.k8s.io", group=DRA_GROUP, item_kind="ResourceClaim",
         namespaced=True),
    Kind(file="resourceclaimtemplates.json", resource="resourceclaimtemplates.resource.k8s.io", group=DRA_GROUP,
         item_kind="ResourceClaimTemplate", namespaced=True),
    Kind(file="resourceslices.json", resource="resourceslices.resource.k8s.io", group=DRA_GROUP, item_kind="ResourceSlice",
         namespaced=False),
    Kind(file="deviceclasses.json", resource="deviceclasses.resource.k8s.io", group=DRA_GROUP, item_kind="DeviceClass",
         namespaced=False),
    # Where served: each rule's taint is added to the devices it selects (model/dra/taint_rules.py).
    Kind(file="devicetaintrules.json", resource="devicetaintrules.resource.k8s.io", group=DRA_GROUP,
         item_kind="DeviceTaintRule", namespaced=False),
    # Autoscalers (autoscalers.md): Karpenter's and the ProvisioningRequest CRDs ("not served" where not installed),
    # and cluster-autoscaler's status ConfigMap, the only ConfigMap read.
    Kind(file="nodepools.karpenter.sh.json", resource="nodepools.karpenter.sh", group=KARPENTER_GROUP,
         item_kind="NodePool", namespaced=False),
    Kind(file="nodeclaims.karpenter.sh.json", resource="nodeclaims.karpenter.sh", group=KARPENTER_GROUP,
         item_kind="NodeClaim", namespaced=False),
    Kind(file="provisioningrequests.autoscaling.x-k8s.io.json", resource="provisioningrequests.autoscaling.x-k8s.io",
         group=PROVREQ_GROUP, item_kind="ProvisioningRequest", namespaced=True),
    Kind(file="configmaps.cluster-autoscaler-status.json", resource="configmap", group="", item_kind="ConfigMap",
         namespaced=True, only=CA_STATUS),
)

BY_NAME: dict[str, Kind] = {k.name: k for k in KINDS}
NAMES: tuple[str, ...] = tuple(k.name for k in KINDS)
REQUIRED: tuple[str, ...] = tuple(k.name for k in KINDS if k.required)
DRA: tuple[str, ...] = tuple(k.name for k in KINDS if k.group == DRA_GROUP)
# Groups a supported cluster may not serve at all: their kinds are "not served" there, which is not a failure.
MAY_BE_UNSERVED: tuple[str, ...] = (DRA_GROUP, KARPENTER_GROUP, PROVREQ_GROUP)

MANIFEST = "manifest.json"
VERSION = "version.json"
VERSION_COMMAND: tuple[str, ...] = ("kubectl", "version", "-o", "json")
