"""The API resources a bundle file can become: the names kubectl discovers and asks for."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, kw_only=True)
class Kind:
    resource: str  # plural, as in the URL and the bundle file name (<resource>.json)
    kind: str
    singular: str
    group: str  # "" for the core group
    version: str  # the default; DRA kinds take the version their items carry
    namespaced: bool
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()

    @property
    def file(self) -> str:
        return f"{self.resource}.json"

    def group_version(self, version: str | None = None) -> str:
        v = version or self.version
        return f"{self.group}/{v}" if self.group else v


# Short names and categories as the real API server advertises them (kubectl api-resources).
KINDS: tuple[Kind, ...] = (
    Kind(resource="pods", kind="Pod", singular="pod", group="", version="v1", namespaced=True,
         short_names=("po",), categories=("all",)),
    Kind(resource="nodes", kind="Node", singular="node", group="", version="v1", namespaced=False, short_names=("no",)),
    Kind(resource="events", kind="Event", singular="event", group="", version="v1", namespaced=True, short_names=("ev",)),
    Kind(resource="namespaces", kind="Namespace", singular="namespace", group="", version="v1", namespaced=False,
         short_names=("ns",)),
    Kind(resource="resourcequotas", kind="ResourceQuota", singular="resourcequota", group="", version="v1",
         namespaced=True, short_names=("quota",)),
    Kind(resource="runtimeclasses", kind="RuntimeClass", singular="runtimeclass", group="node.k8s.io", version="v1",
         namespaced=False),
    Kind(resource="replicasets", kind="ReplicaSet", singular="replicaset", group="apps", version="v1", namespaced=True,
         short_names=("rs",), categories=("all",)),
    Kind(resource="statefulsets", kind="StatefulSet", singular="statefulset", group="apps", version="v1",
         namespaced=True, short_names=("sts",), categories=("all",)),
    Kind(resource="daemonsets", kind="DaemonSet", singular="daemonset", group="apps", version="v1", namespaced=True,
         short_names=("ds",), categories=("all",)),
    Kind(resource="jobs", kind="Job", singular="job", group="batch", version="v1", namespaced=True,
         categories=("all",)),
    Kind(resource="resourceclaims", kind="ResourceClaim", singular="resourceclaim", group="resource.k8s.io",
         version="v1", namespaced=True),
    Kind(resource="resourceclaimtemplates", kind="ResourceClaimTemplate", singular="resourceclaimtemplate",
         group="resource.k8s.io", version="v1", namespaced=True),
    Kind(resource="resourceslices", kind="ResourceSlice", singular="resourceslice", group="resource.k8s.io",
         version="v1", namespaced=False),
    Kind(resource="deviceclasses", kind="DeviceClass", singular="deviceclass", group="resource.k8s.io", version="v1",
         namespaced=False),
)

BY_RESOURCE: dict[str, Kind] = {k.resource: k for k in KINDS}
