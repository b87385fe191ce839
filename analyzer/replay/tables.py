"""Server-side Table rows (`Accept: application/json;as=Table;v=v1;g=meta.k8s.io`).

Columns and cells follow kubernetes pkg/printers/internalversion/printers.go (AddHandlers and the
print<Kind> functions); every column (wide ones too, priority 1) is always filled: kubectl hides
priority-1 columns unless `-o wide`. Ages count from the bundle's collection time.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Callable

from analyzer.replay.humantime import human_duration, since
from analyzer.replay.store import parse_time

Column = tuple[str, str, int]  # name, type, priority
Row = list[Any]


def _col(name: str, typ: str = "string", priority: int = 0) -> Column:
    return (name, typ, priority)


def _d(obj: Any, *path: str) -> Any:
    cur = obj
    for p in path:
        if not isinstance(cur, dict):
            return None
        cur = cur.get(p)
    return cur


def _list(value: Any) -> list:
    return value if isinstance(value, list) else []


def _dict(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ("" if value is None else str(value))


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _age(item: dict, now: datetime) -> str:
    return since(_d(item, "metadata", "creationTimestamp"), now)


def format_labels(labels: Any) -> str:
    """labels.FormatLabels: sorted k=v joined by ',', '<none>' when empty."""
    d = _dict(labels)
    return ",".join(f"{k}={d[k]}" for k in sorted(d)) or "<none>"


def format_label_selector(selector: Any) -> str:
    """metav1.FormatLabelSelector."""
    sel = _dict(selector)
    if not sel:
        return "<none>"
    parts = [f"{k}={v}" for k, v in sorted(_dict(sel.get("matchLabels")).items())]
    for expr in _list(sel.get("matchExpressions")):
        expr = _dict(expr)
        op, key, values = _str(expr.get("operator")), _str(expr.get("key")), [_str(v) for v in _list(expr.get("values"))]
        if op == "In":
            parts.append(f"{key} in ({','.join(values)})")
        elif op == "NotIn":
            parts.append(f"{key} notin ({','.join(values)})")
        elif op == "Exists":
            parts.append(key)
        elif op == "DoesNotExist":
            parts.append(f"!{key}")
    return ",".join(parts) or "<none>"


def layout_container_cells(containers: Any) -> tuple[str, str]:
    cs = [_dict(c) for c in _list(containers)]
    return ",".join(_str(c.get("name")) for c in cs), ",".join(_str(c.get("image")) for c in cs)


def _template_containers(item: dict) -> Any:
    return _d(item, "spec", "template", "spec", "containers")


# -- pods ---------------------------------------------------------------------------------------

def _restartable(container: dict | None) -> bool:
    return bool(container) and container.get("restartPolicy") == "Always"  # podutil.IsRestartableInitContainer


def _has_condition(status: dict, ctype: str) -> bool:
    return any(_dict(c).get("type") == ctype and _dict(c).get("status") == "True" for c in _list(status.get("conditions")))


def _initialized_true(status: dict) -> bool:
    for c in _list(status.get("conditions")):
        if _dict(c).get("type") == "Initialized":
            return _dict(c).get("status") == "True"
    return False


def pod_row(pod: dict, now: datetime) -> Row:
    """printers.go printPod: READY, STATUS (the reason kubectl shows), RESTARTS, AGE, and the wide cells."""
    spec, status, meta = _dict(pod.get("spec")), _dict(pod.get("status")), _dict(pod.get("metadata"))
    restarts = 0
    sidecar_restarts = 0
    total = len(_list(spec.get("containers")))
    ready = 0
    last_restart: datetime | None = None
    last_sidecar_restart: datetime | None = None
    phase = _str(status.get("phase"))
    reason = _str(status.get("reason")) or phase
    for cond in _list(status.get("conditions")):
        if _dict(cond).get("type") == "PodScheduled" and _dict(cond).get("reason") == "SchedulingGated":
            reason = "SchedulingGated"
    init_specs = {_str(_dict(c).get("name")): _dict(c) for c in _list(spec.get("initContainers"))}
    total += sum(1 for c in init_specs.values() if _restartable(c))

    def terminated_at(cs: dict) -> datetime | None:
        return parse_time(_d(cs, "lastState", "terminated", "finishedAt"))

    initializing = False
    init_statuses = _list(status.get("initContainerStatuses"))
    for i, raw in enumerate(init_statuses):
        cs = _dict(raw)
        restarts += _int(cs.get("restartCount"))
        t = terminated_at(cs)
        if t and (last_restart is None or t > last_restart):
            last_restart = t
        sidecar = _restartable(init_specs.get(_str(cs.get("name"))))
        if sidecar:
            sidecar_restarts += _int(cs.get("restartCount"))
            if t and (last_sidecar_restart is None or t > last_sidecar_restart):
                last_sidecar_restart = t
        state = _dict(cs.get("state"))
        term, waiting = state.get("terminated"), state.get("waiting")
        if isinstance(term, dict) and _int(term.get("exitCode")) == 0:
            continue
        if sidecar and cs.get("started") is True:
            if cs.get("ready") is True:
                ready += 1
            continue
        if isinstance(term, dict):
            if not _str(term.get("reason")):
                reason = (f"Init:Signal:{_int(term.get('signal'))}" if _int(term.get("signal"))
                          else f"Init:ExitCode:{_int(term.get('exitCode'))}")
            else:
                reason = "Init:" + _str(term.get("reason"))
        elif isinstance(waiting, dict) and _str(waiting.get("reason")) and waiting.get("reason") != "PodInitializing":
            reason = "Init:" + _str(waiting.get("reason"))
        else:
            reason = f"Init:{i}/{len(init_specs)}"
        initializing = True
        break

    if not initializing or _initialized_true(status):
        restarts = sidecar_restarts
        last_restart = last_sidecar_restart
        has_running = False
        for raw in reversed(_list(status.get("containerStatuses"))):
            cs = _dict(raw)
            restarts += _int(cs.get("restartCount"))
            t = terminated_at(cs)
            if t and (last_restart is None or t > last_restart):
                last_restart = t
            state = _dict(cs.get("state"))
            waiting, term = _dict(state.get("waiting")), state.get("terminated")
            if state.get("waiting") is not None and _str(waiting.get("reason")):
                reason = _str(waiting.get("reason"))
            elif isinstance(term, dict) and _str(term.get("reason")):
                reason = _str(term.get("reason"))
            elif isinstance(term, dict):
                reason = (f"Signal:{_int(term.get('signal'))}" if _int(term.get("signal"))
                          else f"ExitCode:{_int(term.get('exitCode'))}")
            elif cs.get("ready") is True and state.get("running") is not None:
                has_running = True
                ready += 1
        if reason == "Completed" and has_running:
            reason = "Running" if _has_condition(status, "Ready") else "NotReady"

    if meta.get("deletionTimestamp") and status.get("reason") == "NodeLost":
        reason = "Unknown"
    elif meta.get("deletionTimestamp") and phase not in ("Succeeded", "Failed"):
        reason = "Terminating"

    restarts_text = str(restarts)
    if restarts and last_restart is not None:
        restarts_text = f"{restarts} ({human_duration((now - last_restart).total_seconds())} ago)"

    pod_ips = _list(status.get("podIPs"))
    ip = _str(_dict(pod_ips[0]).get("ip")) if pod_ips else ""
    gates = _list(spec.get("readinessGates"))
    gates_text = "<none>"
    if gates:
        true = 0
        for gate in gates:
            for cond in _list(status.get("conditions")):
                if _dict(cond).get("type") == _dict(gate).get("conditionType"):
                    true += _dict(cond).get("status") == "True"
                    break
        gates_text = f"{true}/{len(gates)}"
    return [_str(meta.get("name")), f"{ready}/{total}", reason, restarts_text, _age(pod, now),
            ip or "<none>", _str(spec.get("nodeName")) or "<none>",
            _str(status.get("nominatedNodeName")) or "<none>", gates_text]


# -- nodes --------------------------------------------------------------------------------------

def _node_roles(labels: dict) -> list[str]:
    roles = set()
    for k, v in labels.items():
        if k.startswith("node-role.kubernetes.io/"):
            role = k[len("node-role.kubernetes.io/"):]
            if role:
                roles.add(role)
        elif k == "kubernetes.io/role" and v:
            roles.add(_str(v))
    return sorted(roles)


def _node_address(node: dict, kind: str) -> str:
    for a in _list(_d(node, "status", "addresses")):
        if _dict(a).get("type") == kind:
            return _str(_dict(a).get("address"))
    return "<none>"


def node_row(node: dict, now: datetime) -> Row:
    """printers.go printNode: Ready/NotReady/Unknown, SchedulingDisabled when cordoned."""
    conditions = {_dict(c).get("type"): _dict(c) for c in _list(_d(node, "status", "conditions"))}
    states = []
    if "Ready" in conditions:
        states.append("Ready" if conditions["Ready"].get("status") == "True" else "NotReady")
    if not states:
        states.append("Unknown")
    if _d(node, "spec", "unschedulable") is True:
        states.append("SchedulingDisabled")
    info = _dict(_d(node, "status", "nodeInfo"))
    return [_str(_d(node, "metadata", "name")), ",".join(states),
            ",".join(_node_roles(_dict(_d(node, "metadata", "labels")))) or "<none>", _age(node, now),
            _str(info.get("kubeletVersion")), _node_address(node, "InternalIP"), _node_address(node, "ExternalIP"),
            _str(info.get("osImage")) or "<unknown>", _str(info.get("kernelVersion")) or "<unknown>",
            _str(info.get("containerRuntimeVersion")) or "<unknown>"]


# -- events -------------------------------------------------------------------------------------

def event_row(ev: dict, now: datetime) -> Row:
    """printers.go printEvent (the wide cells are the same list's priority-1 columns)."""
    first = since(ev.get("firstTimestamp"), now) if parse_time(ev.get("firstTimestamp")) else since(ev.get("eventTime"), now)
    last = since(ev.get("lastTimestamp"), now) if parse_time(ev.get("lastTimestamp")) else first
    count = _int(ev.get("count"))
    series = ev.get("series")
    if isinstance(series, dict):
        last = since(series.get("lastObservedTime"), now)
        count = _int(series.get("count"))
    elif count == 0:
        count = 1  # singleton events carry no count in the new API
    obj = _dict(ev.get("involvedObject"))
    kind = _str(obj.get("kind")).lower()
    target = f"{kind}/{_str(obj.get('name'))}" if _str(obj.get("name")) else kind
    source = _dict(ev.get("source"))
    component = _str(source.get("component")) or _str(ev.get("reportingComponent"))
    instance = _str(source.get("host")) or _str(ev.get("reportingInstance"))
    source_text = f"{component}, {instance}" if instance else component
    return [last, _str(ev.get("type")), _str(ev.get("reason")), target, _str(obj.get("fieldPath")), source_text,
            _str(ev.get("message")).strip(), first, count, _str(_d(ev, "metadata", "name"))]


# -- the rest -----------------------------------------------------------------------------------

def quota_row(q: dict, now: datetime) -> Row:
    """printers.go printResourceQuota: 'resource: used/hard' sorted, limits.* in the LIMIT column."""
    hard, used = _dict(_d(q, "status", "hard")), _dict(_d(q, "status", "used"))
    request, limit = [], []
    for name in sorted(hard):
        cell = f"{name}: {_str(used.get(name)) or '0'}/{_str(hard[name])}"
        (limit if name.split(".")[0] == "limits" and "." in name else request).append(cell)
    return [_str(_d(q, "metadata", "name")), _age(q, now), ", ".join(request), ", ".join(limit)]


def job_row(job: dict, now: datetime) -> Row:
    spec, status = _dict(job.get("spec")), _dict(job.get("status"))
    succeeded = _int(status.get("succeeded"))
    if isinstance(spec.get("completions"), int):
        completions = f"{succeeded}/{spec['completions']}"
    else:
        par = _int(spec.get("parallelism"))
        completions = f"{succeeded}/1 of {par}" if par > 1 else f"{succeeded}/1"
    start, done = parse_time(status.get("startTime")), parse_time(status.get("completionTime"))
    duration = ""
    if start and not done:
        duration = human_duration((now - start).total_seconds())
    elif start and done:
        duration = human_duration((done - start).total_seconds())

    def cond(t: str) -> bool:
        for c in _list(status.get("conditions")):
            if _dict(c).get("type") == t:
                return _dict(c).get("status") == "True"
        return False
    if cond("Complete"):
        state = "Complete"
    elif cond("Failed"):
        state = "Failed"
    elif _d(job, "metadata", "deletionTimestamp"):
        state = "Terminating"
    elif cond("Suspended"):
        state = "Suspended"
    elif cond("FailureTarget"):
        state = "FailureTarget"
    else:
        state = "Running"
    names, images = layout_container_cells(_template_containers(job))
    return [_str(_d(job, "metadata", "name")), state, completions, duration, _age(job, now), names, images,
            format_label_selector(spec.get("selector"))]


def replicaset_row(rs: dict, now: datetime) -> Row:
    names, images = layout_container_cells(_template_containers(rs))
    replicas = _d(rs, "spec", "replicas")
    return [_str(_d(rs, "metadata", "name")), replicas if isinstance(replicas, int) else 1,
            _int(_d(rs, "status", "replicas")), _int(_d(rs, "status", "readyReplicas")), _age(rs, now),
            names, images, format_label_selector(_d(rs, "spec", "selector"))]


def statefulset_row(ss: dict, now: datetime) -> Row:
    names, images = layout_container_cells(_template_containers(ss))
    replicas = _d(ss, "spec", "replicas")
    desired = replicas if isinstance(replicas, int) else 1
    return [_str(_d(ss, "metadata", "name")), f"{_int(_d(ss, 'status', 'readyReplicas'))}/{desired}", _age(ss, now),
            names, images]


def daemonset_row(ds: dict, now: datetime) -> Row:
    st = _dict(ds.get("status"))
    names, images = layout_container_cells(_template_containers(ds))
    return [_str(_d(ds, "metadata", "name")), _int(st.get("desiredNumberScheduled")),
            _int(st.get("currentNumberScheduled")), _int(st.get("numberReady")), _int(st.get("updatedNumberScheduled")),
            _int(st.get("numberAvailable")), format_labels(_d(ds, "spec", "template", "spec", "nodeSelector")),
            _age(ds, now), names, images, format_label_selector(_d(ds, "spec", "selector"))]


def claim_state(claim: dict) -> str:
    """printers.go resourceClaimState."""
    states = []
    deleted = bool(_d(claim, "metadata", "deletionTimestamp"))
    if deleted:
        states.append("deleted")
    if not _d(claim, "status", "allocation"):
        if not deleted:
            states.append("pending")
    else:
        states.append("allocated")
        if _list(_d(claim, "status", "reservedFor")):
            states.append("reserved")
    return ",".join(states)


def _name_age(item: dict, now: datetime) -> Row:
    return [_str(_d(item, "metadata", "name")), _age(item, now)]


NAME = ("Name", "string", 0)
AGE = _col("Age")

TABLES: dict[str, tuple[list[Column], Callable[[dict, datetime], Row]]] = {
    "pods": ([NAME, _col("Ready"), _col("Status"), _col("Restarts"), AGE, _col("IP", priority=1),
              _col("Node", priority=1), _col("Nominated Node", priority=1), _col("Readiness Gates", priority=1)], pod_row),
    "nodes": ([NAME, _col("Status"), _col("Roles"), AGE, _col("Version"), _col("Internal-IP", priority=1),
               _col("External-IP", priority=1), _col("OS-Image", priority=1), _col("Kernel-Version", priority=1),
               _col("Container-Runtime", priority=1)], node_row),
    "events": ([_col("Last Seen"), _col("Type"), _col("Reason"), _col("Object"), _col("Subobject", priority=1),
                _col("Source", priority=1), _col("Message"), _col("First Seen", priority=1),
                _col("Count", priority=1), _col("Name", priority=1)], event_row),
    "namespaces": ([NAME, _col("Status"), AGE],
                   lambda ns, now: [_str(_d(ns, "metadata", "name")), _str(_d(ns, "status", "phase")), _age(ns, now)]),
    "resourcequotas": ([NAME, AGE, _col("Request"), _col("Limit")], quota_row),
    "runtimeclasses": ([NAME, _col("Handler"), AGE],
                       lambda rc, now: [_str(_d(rc, "metadata", "name")), _str(rc.get("handler")), _age(rc, now)]),
    "replicasets": ([NAME, _col("Desired", "integer"), _col("Current", "integer"), _col("Ready", "integer"), AGE,
                     _col("Containers", priority=1), _col("Images", priority=1), _col("Selector", priority=1)],
                    replicaset_row),
    "statefulsets": ([NAME, _col("Ready"), AGE, _col("Containers", priority=1), _col("Images", priority=1)],
                     statefulset_row),
    "daemonsets": ([NAME, _col("Desired", "integer"), _col("Current", "integer"), _col("Ready", "integer"),
                    _col("Up-to-date", "integer"), _col("Available", "integer"), _col("Node Selector"), AGE,
                    _col("Containers", priority=1), _col("Images", priority=1), _col("Selector", priority=1)],
                   daemonset_row),
    "jobs": ([NAME, _col("Status"), _col("Completions"), _col("Duration"), AGE, _col("Containers", priority=1),
              _col("Images", priority=1), _col("Selector", priority=1)], job_row),
    "resourceclaims": ([NAME, _col("State"), AGE],
                       lambda c, now: [_str(_d(c, "metadata", "name")), claim_state(c), _age(c, now)]),
    "resourceclaimtemplates": ([NAME, AGE], _name_age),
    "deviceclasses": ([NAME, AGE], _name_age),
    "resourceslices": ([NAME, _col("Node"), _col("Driver"), _col("Pool"), AGE],
                       lambda s, now: [_str(_d(s, "metadata", "name")), _str(_d(s, "spec", "nodeName")),
                                       _str(_d(s, "spec", "driver")), _str(_d(s, "spec", "pool", "name")), _age(s, now)]),
}


def column_definitions(resource: str) -> list[dict]:
    columns, _ = TABLES[resource]
    out = []
    for name, typ, priority in columns:
        col: dict[str, Any] = {"name": name, "type": typ, "format": "name" if name == "Name" else "",
                               "description": "", "priority": priority}
        out.append(col)
    return out


def cells(resource: str, item: dict, now: datetime) -> Row:
    return TABLES[resource][1](item, now)
