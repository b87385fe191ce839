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
    required: bool = False  # a bundle without it cannot be analysed (pods.json alone is fatal; see `alone`)
    # Without it nothing at all can be answered (every other file only limits some answers).
    fatal_when_missing: bool = False
    # The family of rules that cannot decide without this file: a target that needs it answers
    # insufficient-evidence naming the file ("" when its absence just means "none of these").
    needed_by: str = ""
    owns_pods: bool = False  # a controller whose FailedCreate refusals become targets (targets/owners.py)
    version: str = "v1"  # the API version served by default (replay); a List's items may carry another
    short_names: tuple[str, ...] = ()  # as `kubectl api-resources` lists them
    categories: tuple[str, ...] = ()  # `kubectl get all` includes the "all" category
    # Read only this one object (namespace, name), by field selector: the cluster-autoscaler's status ConfigMap is
    # the one ConfigMap ever read, and no other can be listed by mistake.
    only: tuple[str, str] | None = None
    # The field kubectl prints first in each item (it sorts keys): the layout split (bundle/layout.py) searches
    # the item separator followed by it, a run three times faster to find. "" where a field may sort before
    # apiVersion (an Event's `action`, a StorageClass's `allowVolumeExpansion`). A wrong value costs time, never
    # an answer: two items read as one do not parse, and the file is read again by the plain split.
    first_field: str = "apiVersion"

    @property
    def name(self) -> str:
        return self.file.removesuffix(".json")

    @property
    def schema_def(self) -> str:
        """The definition its items are checked against: a custom resource's kind is qualified by its group
        (Volcano's Job is not batch's Job)."""
        return f"{self.item_kind}.{self.group}" if self.group and self.name.endswith("." + self.group) else self.item_kind

    @property
    def command(self) -> tuple[str, ...]:
        """The kubectl command that makes the file (as the collector runs it, without context flags)."""
        if self.only is not None:
            namespace, name = self.only
            return ("kubectl", "get", self.resource, "-n", namespace, "--field-selector", f"metadata.name={name}",
                    "-o", "json")
        return ("kubectl", "get", self.resource, *(("-A",) if self.namespaced else ()), "-o", "json")


DRA_GROUP = "resource.k8s.io"
STORAGE_GROUP = "storage.k8s.io"
KUEUE_GROUP = "kueue.x-k8s.io"
VOLCANO_GROUP = "scheduling.volcano.sh"
VOLCANO_BATCH_GROUP = "batch.volcano.sh"
KAI_GROUP = "scheduling.run.ai"
KARPENTER_GROUP = "karpenter.sh"
ADMISSION_GROUP = "admissionregistration.k8s.io"
DISCOVERY_GROUP = "discovery.k8s.io"
PROVREQ_GROUP = "autoscaling.x-k8s.io"
CA_STATUS = ("kube-system", "cluster-autoscaler-status")  # cluster-autoscaler's --status-config-map-name default


def _custom(plural: str, group: str, item_kind: str, *, namespaced: bool, version: str) -> Kind:
    """A custom resource: collected and stored by its qualified plural (`<plural>.<group>.json`), so another
    CRD with the same short name can never answer instead."""
    return Kind(file=f"{plural}.{group}.json", resource=f"{plural}.{group}", group=group, item_kind=item_kind,
                namespaced=namespaced, version=version)


CLAIMS = "claims"  # needed_by: the DRA rules (a pod with resource claims)
VOLUMES = "volumes"  # needed_by: the volume rules (a pod with a PersistentVolumeClaim)

PODS = Kind(
    file="pods.json", resource="pods", group="", item_kind="Pod", namespaced=True, required=True,
    fatal_when_missing=True, short_names=("po",), categories=("all",))
NODES = Kind(
    file="nodes.json", resource="nodes", group="", item_kind="Node", namespaced=False, required=True,
    short_names=("no",))
RESOURCEQUOTAS = Kind(
    file="resourcequotas.json", resource="resourcequotas", group="", item_kind="ResourceQuota", namespaced=True,
    short_names=("quota",))
RUNTIMECLASSES = Kind(
    file="runtimeclasses.json", resource="runtimeclasses", group="node.k8s.io", item_kind="RuntimeClass",
    namespaced=False)
EVENTS = Kind(
    file="events.json", resource="events", group="", item_kind="Event", namespaced=True, short_names=("ev",),
    first_field="")
REPLICASETS = Kind(
    file="replicasets.json", resource="replicasets", group="apps", item_kind="ReplicaSet", namespaced=True,
    owns_pods=True, short_names=("rs",), categories=("all",))
JOBS = Kind(
    file="jobs.json", resource="jobs", group="batch", item_kind="Job", namespaced=True, owns_pods=True,
    categories=("all",))
STATEFULSETS = Kind(
    file="statefulsets.json", resource="statefulsets", group="apps", item_kind="StatefulSet", namespaced=True,
    owns_pods=True, short_names=("sts",), categories=("all",))
DAEMONSETS = Kind(
    file="daemonsets.json", resource="daemonsets", group="apps", item_kind="DaemonSet", namespaced=True,
    owns_pods=True, short_names=("ds",), categories=("all",))
NAMESPACES = Kind(
    file="namespaces.json", resource="namespaces", group="", item_kind="Namespace", namespaced=False,
    short_names=("ns",))
# Dynamic Resource Allocation (dra.md): v1, v1beta2 or v1beta1, whatever the server serves.
RESOURCECLAIMS = Kind(
    file="resourceclaims.json", resource="resourceclaims.resource.k8s.io", group=DRA_GROUP, item_kind="ResourceClaim",
    namespaced=True, needed_by=CLAIMS)
RESOURCECLAIMTEMPLATES = Kind(
    file="resourceclaimtemplates.json", resource="resourceclaimtemplates.resource.k8s.io", group=DRA_GROUP,
    item_kind="ResourceClaimTemplate", namespaced=True, needed_by=CLAIMS)
RESOURCESLICES = Kind(
    file="resourceslices.json", resource="resourceslices.resource.k8s.io", group=DRA_GROUP, item_kind="ResourceSlice",
    namespaced=False, needed_by=CLAIMS)
DEVICECLASSES = Kind(
    file="deviceclasses.json", resource="deviceclasses.resource.k8s.io", group=DRA_GROUP, item_kind="DeviceClass",
    namespaced=False, needed_by=CLAIMS)
# Where served: each rule's taint is added to the devices it selects (model/dra/taint_rules.py); where not
# served no rule applies, as in the scheduler.
DEVICETAINTRULES = Kind(
    file="devicetaintrules.json", resource="devicetaintrules.resource.k8s.io", group=DRA_GROUP,
    item_kind="DeviceTaintRule", namespaced=False, version="v1beta2")

# Volumes (filters.md): claims and volumes, their classes, CSI limits and storage capacity.
PERSISTENTVOLUMECLAIMS = Kind(
    file="persistentvolumeclaims.json", resource="persistentvolumeclaims", group="", item_kind="PersistentVolumeClaim",
    namespaced=True, needed_by=VOLUMES, short_names=("pvc",))
PERSISTENTVOLUMES = Kind(
    file="persistentvolumes.json", resource="persistentvolumes", group="", item_kind="PersistentVolume",
    namespaced=False, short_names=("pv",))
STORAGECLASSES = Kind(
    file="storageclasses.json", resource="storageclasses.storage.k8s.io", group=STORAGE_GROUP, item_kind="StorageClass",
    namespaced=False, short_names=("sc",), first_field="")
CSINODES = Kind(
    file="csinodes.json", resource="csinodes.storage.k8s.io", group=STORAGE_GROUP, item_kind="CSINode", namespaced=False)
CSIDRIVERS = Kind(
    file="csidrivers.json", resource="csidrivers.storage.k8s.io", group=STORAGE_GROUP, item_kind="CSIDriver",
    namespaced=False)
CSISTORAGECAPACITIES = Kind(
    file="csistoragecapacities.json", resource="csistoragecapacities.storage.k8s.io", group=STORAGE_GROUP,
    item_kind="CSIStorageCapacity", namespaced=True)
VOLUMEATTACHMENTS = Kind(
    file="volumeattachments.json", resource="volumeattachments.storage.k8s.io", group=STORAGE_GROUP,
    item_kind="VolumeAttachment", namespaced=False)

# Queueing systems (queues.md): Kueue (v1beta2 from v0.15, v1beta1 before; both read) and Volcano;
# "not served" where the CRD is not installed.
WORKLOADS = _custom("workloads", KUEUE_GROUP, "Workload", namespaced=True, version="v1beta2")
LOCALQUEUES = _custom("localqueues", KUEUE_GROUP, "LocalQueue", namespaced=True, version="v1beta2")
CLUSTERQUEUES = _custom("clusterqueues", KUEUE_GROUP, "ClusterQueue", namespaced=False, version="v1beta2")
RESOURCEFLAVORS = _custom("resourceflavors", KUEUE_GROUP, "ResourceFlavor", namespaced=False, version="v1beta2")
COHORTS = _custom("cohorts", KUEUE_GROUP, "Cohort", namespaced=False, version="v1beta2")
ADMISSIONCHECKS = _custom("admissionchecks", KUEUE_GROUP, "AdmissionCheck", namespaced=False, version="v1beta2")
# Topology-aware scheduling: a ResourceFlavor's spec.topologyName names one (queue-topology).
TOPOLOGIES = _custom("topologies", KUEUE_GROUP, "Topology", namespaced=False, version="v1beta2")
PODGROUPS = _custom("podgroups", VOLCANO_GROUP, "PodGroup", namespaced=True, version="v1beta1")
VOLCANO_QUEUES = _custom("queues", VOLCANO_GROUP, "Queue", namespaced=False, version="v1beta1")
VOLCANO_JOBS = _custom("jobs", VOLCANO_BATCH_GROUP, "Job", namespaced=True, version="v1alpha1")
# KAI-Scheduler (schedulers.md): its Queue is cluster-scoped (deployments/kai-scheduler/crds/scheduling.run.ai_queues.yaml).
KAI_QUEUES = _custom("queues", KAI_GROUP, "Queue", namespaced=False, version="v2")
KAI_PODGROUPS = _custom("podgroups", KAI_GROUP, "PodGroup", namespaced=True, version="v2alpha2")

# Autoscalers (autoscalers.md): Karpenter's and the ProvisioningRequest CRDs ("not served" where not installed),
# and cluster-autoscaler's status ConfigMap, the only ConfigMap read.
NODEPOOLS = _custom("nodepools", KARPENTER_GROUP, "NodePool", namespaced=False, version="v1")
NODECLAIMS = _custom("nodeclaims", KARPENTER_GROUP, "NodeClaim", namespaced=False, version="v1")
PROVISIONINGREQUESTS = _custom("provisioningrequests", PROVREQ_GROUP, "ProvisioningRequest", namespaced=True,
                               version="v1")
CA_STATUS_CONFIGMAP = Kind(
    file="configmaps.cluster-autoscaler-status.json", resource="configmap", group="", item_kind="ConfigMap",
    namespaced=True, only=CA_STATUS)

# Admission (admission.md): what refuses a pod before it exists. Absent: none of these (no LimitRange, no
# webhook, no policy); EndpointSlices tell whether a fail-closed webhook's Service can be called.
LIMITRANGES = Kind(
    file="limitranges.json", resource="limitranges", group="", item_kind="LimitRange", namespaced=True,
    short_names=("limits",))
VALIDATINGWEBHOOKCONFIGURATIONS = Kind(
    file="validatingwebhookconfigurations.json", resource="validatingwebhookconfigurations." + ADMISSION_GROUP,
    group=ADMISSION_GROUP, item_kind="ValidatingWebhookConfiguration", namespaced=False)
MUTATINGWEBHOOKCONFIGURATIONS = Kind(
    file="mutatingwebhookconfigurations.json", resource="mutatingwebhookconfigurations." + ADMISSION_GROUP,
    group=ADMISSION_GROUP, item_kind="MutatingWebhookConfiguration", namespaced=False)
VALIDATINGADMISSIONPOLICIES = Kind(
    file="validatingadmissionpolicies.json", resource="validatingadmissionpolicies." + ADMISSION_GROUP,
    group=ADMISSION_GROUP, item_kind="ValidatingAdmissionPolicy", namespaced=False)
VALIDATINGADMISSIONPOLICYBINDINGS = Kind(
    file="validatingadmissionpolicybindings.json", resource="validatingadmissionpolicybindings." + ADMISSION_GROUP,
    group=ADMISSION_GROUP, item_kind="ValidatingAdmissionPolicyBinding", namespaced=False)
ENDPOINTSLICES = Kind(
    file="endpointslices.json", resource="endpointslices." + DISCOVERY_GROUP, group=DISCOVERY_GROUP,
    item_kind="EndpointSlice", namespaced=True, first_field="")  # `addressType` sorts before apiVersion

# The order is the order files are read and listed in.
KINDS: tuple[Kind, ...] = (
    PODS, NODES, RESOURCEQUOTAS, RUNTIMECLASSES, EVENTS, REPLICASETS, JOBS, STATEFULSETS, DAEMONSETS, NAMESPACES,
    RESOURCECLAIMS, RESOURCECLAIMTEMPLATES, RESOURCESLICES, DEVICECLASSES, DEVICETAINTRULES,
    PERSISTENTVOLUMECLAIMS, PERSISTENTVOLUMES, STORAGECLASSES, CSINODES, CSIDRIVERS, CSISTORAGECAPACITIES,
    VOLUMEATTACHMENTS,
    NODEPOOLS, NODECLAIMS, PROVISIONINGREQUESTS, CA_STATUS_CONFIGMAP,
    LIMITRANGES, VALIDATINGWEBHOOKCONFIGURATIONS, MUTATINGWEBHOOKCONFIGURATIONS, VALIDATINGADMISSIONPOLICIES,
    VALIDATINGADMISSIONPOLICYBINDINGS, ENDPOINTSLICES,
    WORKLOADS, LOCALQUEUES, CLUSTERQUEUES, RESOURCEFLAVORS, COHORTS, ADMISSIONCHECKS, TOPOLOGIES,
    PODGROUPS, VOLCANO_QUEUES, VOLCANO_JOBS, KAI_QUEUES, KAI_PODGROUPS,
)

BY_NAME: dict[str, Kind] = {k.name: k for k in KINDS}
NAMES: tuple[str, ...] = tuple(k.name for k in KINDS)
REQUIRED: tuple[str, ...] = tuple(k.name for k in KINDS if k.required)
NEEDED_BY_CLAIMS: tuple[str, ...] = tuple(k.name for k in KINDS if k.needed_by == CLAIMS)
OWNERS: dict[str, str] = {k.item_kind: k.name for k in KINDS if k.owns_pods}  # controller kind -> its kind name

KUEUE: tuple[str, ...] = tuple(k.name for k in KINDS if k.group == KUEUE_GROUP)
VOLCANO: tuple[str, ...] = tuple(k.name for k in KINDS if k.group in (VOLCANO_GROUP, VOLCANO_BATCH_GROUP))
KAI: tuple[str, ...] = tuple(k.name for k in KINDS if k.group == KAI_GROUP)
# Groups a supported cluster may not serve at all (an older server, a CRD not installed): "not served" there.
MAY_BE_UNSERVED: tuple[str, ...] = (DRA_GROUP, KUEUE_GROUP, VOLCANO_GROUP, VOLCANO_BATCH_GROUP, KARPENTER_GROUP,
                                     PROVREQ_GROUP, KAI_GROUP)


def file_of(name: str) -> str:
    """The bundle file of a kind name (`pods` -> `pods.json`)."""
    return BY_NAME[name].file


MANIFEST = "manifest.json"
VERSION = "version.json"
VERSION_COMMAND: tuple[str, ...] = ("kubectl", "version", "-o", "json")
