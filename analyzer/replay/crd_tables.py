"""Server-side Table rows for the custom resources, from each CRD's `additionalPrinterColumns`.

The API server serves a custom resource's table as apiextensions-apiserver's tableconvertor does
(pkg/registry/customresource/tableconvertor/tableconvertor.go): a Name column, then the CRD's columns in order,
each cell the first result of the column's JSONPath, converted by its type (cellForJSONValue): `string` printed as
the JSONPath printer prints it, `integer` only from a number, `date` as an age (ConvertToHumanReadableDateType),
nothing found → no cell (kubectl prints it empty). A CRD with no columns gets Age alone (serveDefaultColumnsIfEmpty):
that is tables.DEFAULT_TABLE, so kinds whose CRD declares none (Kueue's ResourceFlavor, Cohort, AdmissionCheck,
Topology; KAI's PodGroup; the ProvisioningRequest, whose only column is Age) are not listed here.

The columns are copied from the projects' CRDs, the version the catalog serves:
  kubernetes-sigs/karpenter pkg/apis/crds/karpenter.sh_{nodepools,nodeclaims}.yaml (v1)
  volcano-sh/volcano config/crd/volcano/bases/scheduling.volcano.sh_{queues,podgroups}.yaml (v1beta1) and
      batch.volcano.sh_jobs.yaml (v1alpha1)
  NVIDIA/KAI-Scheduler deployments/kai-scheduler/crds/scheduling.run.ai_queues.yaml (v2)
  kubernetes-sigs/kueue config/components/crd/bases/kueue.x-k8s.io_{workloads,localqueues,clusterqueues}.yaml
      (v1beta2; LocalQueue and ClusterQueue declare no Age column, so the server shows none)
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Callable

from analyzer.bundle.catalog import (CLUSTERQUEUES, KAI_QUEUES, LOCALQUEUES, NODECLAIMS, NODEPOOLS, PODGROUPS,
                                     VOLCANO_JOBS, VOLCANO_QUEUES, WORKLOADS)
from analyzer.replay.cells import Column, Row, as_str, column, dig
from analyzer.replay.humantime import since
from analyzer.replay.store import parse_time

NAME = ("Name", "string", 0)
_MISSING = object()


@dataclass(frozen=True, kw_only=True)
class PrinterColumn:
    """One entry of a CRD's additionalPrinterColumns; `fallback`: a second path read when the first finds nothing
    (ClusterQueue's cohort moved from spec.cohort to spec.cohortName; a bundle may hold either)."""

    name: str
    json_path: str
    type: str = "string"
    priority: int = 0
    fallback: str | None = None


# A step of the simple JSONPath a CRD may use: a field (dots inside a key escaped as `\.`), or a filter
# `[?(@.field=="value")]` keeping the list items whose field equals the value.
_STEP = re.compile(r"""\.((?:\\\.|[^.\[\\])+)|\[\?\(@\.([A-Za-z0-9_]+)\s*==\s*(?:"([^"]*)"|'([^']*)')\)\]""")


def _steps(path: str) -> list[tuple[str, str | None]]:
    steps, at = [], 0
    while at < len(path):
        m = _STEP.match(path, at)
        if m is None:
            raise ValueError(f"unsupported JSONPath {path!r} at {at}")
        if m.group(1) is not None:
            steps.append((m.group(1).replace("\\.", "."), None))
        else:
            steps.append((m.group(2), m.group(3) if m.group(3) is not None else m.group(4)))
        at = m.end()
    return steps


def find_first(obj: Any, path: str) -> Any:
    """The first result of `path` in obj (results[0][0] in the tableconvertor), or _MISSING."""
    found = [obj]
    for key, equals in _steps(path):
        nxt: list[Any] = []
        for value in found:
            if equals is None:
                if isinstance(value, dict) and key in value:
                    nxt.append(value[key])
            elif isinstance(value, list):
                nxt.extend(v for v in value if isinstance(v, dict) and _printed(v.get(key, _MISSING)) == equals)
        found = nxt
    return found[0] if found else _MISSING


def _printed(value: Any) -> str | None:
    """What the JSONPath printer writes for a value (Go's fmt for the decoded JSON)."""
    if value is _MISSING:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if value is None:
        return "<nil>"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{_printed(value[k])}" for k in sorted(value)) + "]"
    if isinstance(value, list):
        return "[" + " ".join(as_str(_printed(v)) for v in value) + "]"
    return str(value)


def cell(col: PrinterColumn, item: dict, now: datetime) -> Any:
    """cellForJSONValue, or the string printer for a `string` column; None where the server sends no cell."""
    value = find_first(item, col.json_path)
    if value is _MISSING and col.fallback is not None:
        value = find_first(item, col.fallback)
    if value is _MISSING or value is None:
        return None
    if col.type == "string":
        return _printed(value)
    if col.type == "integer":
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return int(value)
        return None
    if col.type == "date":
        if not isinstance(value, str):
            return None
        return since(value, now) if parse_time(value) is not None else "<invalid>"
    return value if col.type == "boolean" and isinstance(value, bool) else None


def _age() -> PrinterColumn:
    return PrinterColumn(name="Age", json_path=".metadata.creationTimestamp", type="date")


def _ready(name: str = "Ready") -> PrinterColumn:
    return PrinterColumn(name=name, json_path=f'.status.conditions[?(@.type=="{name}")].status')


PRINTER_COLUMNS: dict[str, tuple[PrinterColumn, ...]] = {
    NODEPOOLS.name: (
        PrinterColumn(name="NodeClass", json_path=".spec.template.spec.nodeClassRef.name"),
        PrinterColumn(name="Nodes", json_path=".status.nodes"),
        _ready(), _age(),
        PrinterColumn(name="Weight", json_path=".spec.weight", type="integer", priority=1),
        PrinterColumn(name="CPU", json_path=".status.resources.cpu", priority=1),
        PrinterColumn(name="Memory", json_path=".status.resources.memory", priority=1)),
    NODECLAIMS.name: (
        PrinterColumn(name="Type", json_path=r".metadata.labels.node\.kubernetes\.io/instance-type"),
        PrinterColumn(name="Capacity", json_path=r".metadata.labels.karpenter\.sh/capacity-type"),
        PrinterColumn(name="Zone", json_path=r".metadata.labels.topology\.kubernetes\.io/zone"),
        PrinterColumn(name="Node", json_path=".status.nodeName"),
        _ready(), _age(),
        PrinterColumn(name="ImageID", json_path=".status.imageID", priority=1),
        PrinterColumn(name="ID", json_path=".status.providerID", priority=1),
        PrinterColumn(name="NodePool", json_path=r".metadata.labels.karpenter\.sh/nodepool", priority=1),
        PrinterColumn(name="NodeClass", json_path=".spec.nodeClassRef.name", priority=1),
        PrinterColumn(name="Drifted", json_path='.status.conditions[?(@.type=="Drifted")].status', priority=1)),
    VOLCANO_QUEUES.name: (PrinterColumn(name="PARENT", json_path=".spec.parent"),),
    PODGROUPS.name: (
        PrinterColumn(name="STATUS", json_path=".status.phase"),
        PrinterColumn(name="minMember", json_path=".spec.minMember", type="integer"),
        PrinterColumn(name="RUNNINGS", json_path=".status.running", type="integer"),
        PrinterColumn(name="AGE", json_path=".metadata.creationTimestamp", type="date"),
        PrinterColumn(name="QUEUE", json_path=".spec.queue", priority=1)),
    VOLCANO_JOBS.name: (
        PrinterColumn(name="STATUS", json_path=".status.state.phase"),
        PrinterColumn(name="minAvailable", json_path=".status.minAvailable", type="integer"),
        PrinterColumn(name="RUNNINGS", json_path=".status.running", type="integer"),
        PrinterColumn(name="AGE", json_path=".metadata.creationTimestamp", type="date"),
        PrinterColumn(name="QUEUE", json_path=".spec.queue", priority=1)),
    KAI_QUEUES.name: (
        PrinterColumn(name="Priority", json_path=".spec.priority"),
        PrinterColumn(name="Parent", json_path=".spec.parentQueue"),
        PrinterColumn(name="Children", json_path=".status.childQueues"),
        PrinterColumn(name="DisplayName", json_path=".spec.displayName")),
    WORKLOADS.name: (
        PrinterColumn(name="Queue", json_path=".spec.queueName"),
        PrinterColumn(name="Reserved in", json_path=".status.admission.clusterQueue"),
        PrinterColumn(name="Admitted", json_path=".status.conditions[?(@.type=='Admitted')].status"),
        PrinterColumn(name="Finished", json_path=".status.conditions[?(@.type=='Finished')].status"),
        _age()),
    LOCALQUEUES.name: (
        PrinterColumn(name="ClusterQueue", json_path=".spec.clusterQueue"),
        PrinterColumn(name="Pending Workloads", json_path=".status.pendingWorkloads", type="integer"),
        PrinterColumn(name="Admitted Workloads", json_path=".status.admittedWorkloads", type="integer")),
    CLUSTERQUEUES.name: (
        PrinterColumn(name="Cohort", json_path=".spec.cohortName", fallback=".spec.cohort"),
        PrinterColumn(name="Strategy", json_path=".spec.queueingStrategy", priority=1),
        PrinterColumn(name="Pending Workloads", json_path=".status.pendingWorkloads", type="integer"),
        PrinterColumn(name="Admitted Workloads", json_path=".status.admittedWorkloads", type="integer", priority=1)),
}


def _table(columns: tuple[PrinterColumn, ...]) -> tuple[list[Column], Callable[[dict, datetime], Row]]:
    def row(item: dict, now: datetime) -> Row:
        return [as_str(dig(item, "metadata", "name"))] + [cell(c, item, now) for c in columns]
    return [NAME] + [column(c.name, c.type, c.priority) for c in columns], row


CRD_TABLES: dict[str, tuple[list[Column], Callable[[dict, datetime], Row]]] = {
    name: _table(columns) for name, columns in PRINTER_COLUMNS.items()}
