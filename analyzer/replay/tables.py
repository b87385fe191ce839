"""Server-side Table rows (`Accept: application/json;as=Table;v=v1;g=meta.k8s.io`).

Columns and cells follow kubernetes pkg/printers/internalversion/printers.go (AddHandlers and the
print<Kind> functions); every column (wide ones too, priority 1) is always filled: kubectl hides
priority-1 columns unless `-o wide`. Ages count from the bundle's collection time.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Callable

from analyzer.bundle.catalog import (CA_STATUS_CONFIGMAP, DAEMONSETS, EVENTS, JOBS, NAMESPACES, NODES, PODS, REPLICASETS, RESOURCECLAIMS,
                                     RESOURCEQUOTAS, RESOURCESLICES, RUNTIMECLASSES, STATEFULSETS)
from analyzer.replay.humantime import human_duration, since
from analyzer.replay.store import parse_time
from analyzer.replay.cells import (Column, Row, age, as_dict, as_int, as_list, as_str, column, dig, format_label_selector,
                                   format_labels, layout_container_cells, template_containers)
from analyzer.replay.pod_table import pod_row
from analyzer.replay.admission_tables import ADMISSION_TABLES
from analyzer.replay.crd_tables import CRD_TABLES
from analyzer.replay.storage_tables import STORAGE_TABLES


# -- nodes --------------------------------------------------------------------------------------

def _node_roles(labels: dict) -> list[str]:
    roles = set()
    for k, v in labels.items():
        if k.startswith("node-role.kubernetes.io/"):
            role = k[len("node-role.kubernetes.io/"):]
            if role:
                roles.add(role)
        elif k == "kubernetes.io/role" and v:
            roles.add(as_str(v))
    return sorted(roles)


def _node_address(node: dict, kind: str) -> str:
    for a in as_list(dig(node, "status", "addresses")):
        if as_dict(a).get("type") == kind:
            return as_str(as_dict(a).get("address"))
    return "<none>"


def node_row(node: dict, now: datetime) -> Row:
    """printers.go printNode: Ready/NotReady/Unknown, SchedulingDisabled when cordoned."""
    conditions = {as_dict(c).get("type"): as_dict(c) for c in as_list(dig(node, "status", "conditions"))}
    states = []
    if "Ready" in conditions:
        states.append("Ready" if conditions["Ready"].get("status") == "True" else "NotReady")
    if not states:
        states.append("Unknown")
    if dig(node, "spec", "unschedulable") is True:
        states.append("SchedulingDisabled")
    info = as_dict(dig(node, "status", "nodeInfo"))
    return [as_str(dig(node, "metadata", "name")), ",".join(states),
            ",".join(_node_roles(as_dict(dig(node, "metadata", "labels")))) or "<none>", age(node, now),
            as_str(info.get("kubeletVersion")), _node_address(node, "InternalIP"), _node_address(node, "ExternalIP"),
            as_str(info.get("osImage")) or "<unknown>", as_str(info.get("kernelVersion")) or "<unknown>",
            as_str(info.get("containerRuntimeVersion")) or "<unknown>"]


# -- events -------------------------------------------------------------------------------------

def event_row(ev: dict, now: datetime) -> Row:
    """printers.go printEvent (the wide cells are the same list's priority-1 columns)."""
    first = since(ev.get("firstTimestamp"), now) if parse_time(ev.get("firstTimestamp")) else since(ev.get("eventTime"), now)
    last = since(ev.get("lastTimestamp"), now) if parse_time(ev.get("lastTimestamp")) else first
    count = as_int(ev.get("count"))
    series = ev.get("series")
    if isinstance(series, dict):
        last = since(series.get("lastObservedTime"), now)
        count = as_int(series.get("count"))
    elif count == 0:
        count = 1  # singleton events carry no count in the new API
    obj = as_dict(ev.get("involvedObject"))
    kind = as_str(obj.get("kind")).lower()
    target = f"{kind}/{as_str(obj.get('name'))}" if as_str(obj.get("name")) else kind
    source = as_dict(ev.get("source"))
    component = as_str(source.get("component")) or as_str(ev.get("reportingComponent"))
    instance = as_str(source.get("host")) or as_str(ev.get("reportingInstance"))
    source_text = f"{component}, {instance}" if instance else component
    return [last, as_str(ev.get("type")), as_str(ev.get("reason")), target, as_str(obj.get("fieldPath")), source_text,
            as_str(ev.get("message")).strip(), first, count, as_str(dig(ev, "metadata", "name"))]


# -- the rest -----------------------------------------------------------------------------------

def quota_row(q: dict, now: datetime) -> Row:
    """printers.go printResourceQuota: 'resource: used/hard' sorted, limits.* in the LIMIT column."""
    hard, used = as_dict(dig(q, "status", "hard")), as_dict(dig(q, "status", "used"))
    request, limit = [], []
    for name in sorted(hard):
        cell = f"{name}: {as_str(used.get(name)) or '0'}/{as_str(hard[name])}"
        (limit if name.split(".")[0] == "limits" and "." in name else request).append(cell)
    return [as_str(dig(q, "metadata", "name")), age(q, now), ", ".join(request), ", ".join(limit)]


def job_row(job: dict, now: datetime) -> Row:
    spec, status = as_dict(job.get("spec")), as_dict(job.get("status"))
    succeeded = as_int(status.get("succeeded"))
    if isinstance(spec.get("completions"), int):
        completions = f"{succeeded}/{spec['completions']}"
    else:
        par = as_int(spec.get("parallelism"))
        completions = f"{succeeded}/1 of {par}" if par > 1 else f"{succeeded}/1"
    start, done = parse_time(status.get("startTime")), parse_time(status.get("completionTime"))
    duration = ""
    if start and not done:
        duration = human_duration((now - start).total_seconds())
    elif start and done:
        duration = human_duration((done - start).total_seconds())

    def cond(t: str) -> bool:
        for c in as_list(status.get("conditions")):
            if as_dict(c).get("type") == t:
                return as_dict(c).get("status") == "True"
        return False
    if cond("Complete"):
        state = "Complete"
    elif cond("Failed"):
        state = "Failed"
    elif dig(job, "metadata", "deletionTimestamp"):
        state = "Terminating"
    elif cond("Suspended"):
        state = "Suspended"
    elif cond("FailureTarget"):
        state = "FailureTarget"
    else:
        state = "Running"
    names, images = layout_container_cells(template_containers(job))
    return [as_str(dig(job, "metadata", "name")), state, completions, duration, age(job, now), names, images,
            format_label_selector(spec.get("selector"))]


def replicaset_row(rs: dict, now: datetime) -> Row:
    names, images = layout_container_cells(template_containers(rs))
    replicas = dig(rs, "spec", "replicas")
    return [as_str(dig(rs, "metadata", "name")), replicas if isinstance(replicas, int) else 1,
            as_int(dig(rs, "status", "replicas")), as_int(dig(rs, "status", "readyReplicas")), age(rs, now),
            names, images, format_label_selector(dig(rs, "spec", "selector"))]


def statefulset_row(ss: dict, now: datetime) -> Row:
    names, images = layout_container_cells(template_containers(ss))
    replicas = dig(ss, "spec", "replicas")
    desired = replicas if isinstance(replicas, int) else 1
    return [as_str(dig(ss, "metadata", "name")), f"{as_int(dig(ss, 'status', 'readyReplicas'))}/{desired}", age(ss, now),
            names, images]


def daemonset_row(ds: dict, now: datetime) -> Row:
    st = as_dict(ds.get("status"))
    names, images = layout_container_cells(template_containers(ds))
    return [as_str(dig(ds, "metadata", "name")), as_int(st.get("desiredNumberScheduled")),
            as_int(st.get("currentNumberScheduled")), as_int(st.get("numberReady")), as_int(st.get("updatedNumberScheduled")),
            as_int(st.get("numberAvailable")), format_labels(dig(ds, "spec", "template", "spec", "nodeSelector")),
            age(ds, now), names, images, format_label_selector(dig(ds, "spec", "selector"))]


def claim_state(claim: dict) -> str:
    """printers.go resourceClaimState."""
    states = []
    deleted = bool(dig(claim, "metadata", "deletionTimestamp"))
    if deleted:
        states.append("deleted")
    if not dig(claim, "status", "allocation"):
        if not deleted:
            states.append("pending")
    else:
        states.append("allocated")
        if as_list(dig(claim, "status", "reservedFor")):
            states.append("reserved")
    return ",".join(states)


def _name_age(item: dict, now: datetime) -> Row:
    return [as_str(dig(item, "metadata", "name")), age(item, now)]


NAME = ("Name", "string", 0)
AGE = column("Age")

TABLES: dict[str, tuple[list[Column], Callable[[dict, datetime], Row]]] = {
    PODS.name: ([NAME, column("Ready"), column("Status"), column("Restarts"), AGE, column("IP", priority=1),
              column("Node", priority=1), column("Nominated Node", priority=1), column("Readiness Gates", priority=1)], pod_row),
    NODES.name: ([NAME, column("Status"), column("Roles"), AGE, column("Version"), column("Internal-IP", priority=1),
               column("External-IP", priority=1), column("OS-Image", priority=1), column("Kernel-Version", priority=1),
               column("Container-Runtime", priority=1)], node_row),
    EVENTS.name: ([column("Last Seen"), column("Type"), column("Reason"), column("Object"), column("Subobject", priority=1),
                column("Source", priority=1), column("Message"), column("First Seen", priority=1),
                column("Count", priority=1), column("Name", priority=1)], event_row),
    NAMESPACES.name: ([NAME, column("Status"), AGE],
                   lambda ns, now: [as_str(dig(ns, "metadata", "name")), as_str(dig(ns, "status", "phase")), age(ns, now)]),
    RESOURCEQUOTAS.name: ([NAME, AGE, column("Request"), column("Limit")], quota_row),
    RUNTIMECLASSES.name: ([NAME, column("Handler"), AGE],
                       lambda rc, now: [as_str(dig(rc, "metadata", "name")), as_str(rc.get("handler")), age(rc, now)]),
    REPLICASETS.name: ([NAME, column("Desired", "integer"), column("Current", "integer"), column("Ready", "integer"), AGE,
                     column("Containers", priority=1), column("Images", priority=1), column("Selector", priority=1)],
                    replicaset_row),
    STATEFULSETS.name: ([NAME, column("Ready"), AGE, column("Containers", priority=1), column("Images", priority=1)],
                     statefulset_row),
    DAEMONSETS.name: ([NAME, column("Desired", "integer"), column("Current", "integer"), column("Ready", "integer"),
                    column("Up-to-date", "integer"), column("Available", "integer"), column("Node Selector"), AGE,
                    column("Containers", priority=1), column("Images", priority=1), column("Selector", priority=1)],
                   daemonset_row),
    JOBS.name: ([NAME, column("Status"), column("Completions"), column("Duration"), AGE, column("Containers", priority=1),
              column("Images", priority=1), column("Selector", priority=1)], job_row),
    RESOURCECLAIMS.name: ([NAME, column("State"), AGE],
                       lambda c, now: [as_str(dig(c, "metadata", "name")), claim_state(c), age(c, now)]),
    RESOURCESLICES.name: ([NAME, column("Node"), column("Driver"), column("Pool"), AGE],
                       lambda s, now: [as_str(dig(s, "metadata", "name")), as_str(dig(s, "spec", "nodeName")),
                                       as_str(dig(s, "spec", "driver")), as_str(dig(s, "spec", "pool", "name")), age(s, now)]),
    CA_STATUS_CONFIGMAP.name: ([NAME, column("Data", "integer"), AGE],
                   lambda c, now: [as_str(dig(c, "metadata", "name")), len(c.get("data") or {}), age(c, now)]),
}


TABLES.update(STORAGE_TABLES)
TABLES.update(CRD_TABLES)
TABLES.update(ADMISSION_TABLES)

# A kind without its own columns is listed as kubectl lists a custom resource with no printer columns.
DEFAULT_TABLE: tuple[list[Column], Callable[[dict, datetime], Row]] = ([NAME, AGE], _name_age)


def column_definitions(resource: str) -> list[dict]:
    columns, _ = TABLES.get(resource, DEFAULT_TABLE)
    out = []
    for name, typ, priority in columns:
        col: dict[str, Any] = {"name": name, "type": typ, "format": "name" if name == "Name" else "",
                               "description": "", "priority": priority}
        out.append(col)
    return out


def cells(resource: str, item: dict, now: datetime) -> Row:
    return TABLES.get(resource, DEFAULT_TABLE)[1](item, now)
