"""The pod Table row, as kubernetes pkg/printers/internalversion/printers.go printPod computes it (READY,
STATUS with its init-container, sidecar, terminating and gated cases, RESTARTS with the last restart's age).
Apart from tables.py because it is the one printer with rules of its own."""

from __future__ import annotations

from datetime import datetime

from analyzer.replay.cells import Row, age, as_dict, as_int, as_list, as_str, dig
from analyzer.replay.humantime import human_duration
from analyzer.replay.store import parse_time


# -- pods ---------------------------------------------------------------------------------------

def _restartable(container: dict | None) -> bool:
    return bool(container) and container.get("restartPolicy") == "Always"  # podutil.IsRestartableInitContainer


def _has_condition(status: dict, ctype: str) -> bool:
    return any(as_dict(c).get("type") == ctype and as_dict(c).get("status") == "True" for c in as_list(status.get("conditions")))


def _initialized_true(status: dict) -> bool:
    for c in as_list(status.get("conditions")):
        if as_dict(c).get("type") == "Initialized":
            return as_dict(c).get("status") == "True"
    return False


def pod_row(pod: dict, now: datetime) -> Row:
    """printers.go printPod: READY, STATUS (the reason kubectl shows), RESTARTS, AGE, and the wide cells."""
    spec, status, meta = as_dict(pod.get("spec")), as_dict(pod.get("status")), as_dict(pod.get("metadata"))
    restarts = 0
    sidecar_restarts = 0
    total = len(as_list(spec.get("containers")))
    ready = 0
    last_restart: datetime | None = None
    last_sidecar_restart: datetime | None = None
    phase = as_str(status.get("phase"))
    reason = as_str(status.get("reason")) or phase
    for cond in as_list(status.get("conditions")):
        if as_dict(cond).get("type") == "PodScheduled" and as_dict(cond).get("reason") == "SchedulingGated":
            reason = "SchedulingGated"
    init_specs = {as_str(as_dict(c).get("name")): as_dict(c) for c in as_list(spec.get("initContainers"))}
    total += sum(1 for c in init_specs.values() if _restartable(c))

    def terminated_at(cs: dict) -> datetime | None:
        return parse_time(dig(cs, "lastState", "terminated", "finishedAt"))

    initializing = False
    init_statuses = as_list(status.get("initContainerStatuses"))
    for i, raw in enumerate(init_statuses):
        cs = as_dict(raw)
        restarts += as_int(cs.get("restartCount"))
        t = terminated_at(cs)
        if t and (last_restart is None or t > last_restart):
            last_restart = t
        sidecar = _restartable(init_specs.get(as_str(cs.get("name"))))
        if sidecar:
            sidecar_restarts += as_int(cs.get("restartCount"))
            if t and (last_sidecar_restart is None or t > last_sidecar_restart):
                last_sidecar_restart = t
        state = as_dict(cs.get("state"))
        term, waiting = state.get("terminated"), state.get("waiting")
        if isinstance(term, dict) and as_int(term.get("exitCode")) == 0:
            continue
        if sidecar and cs.get("started") is True:
            if cs.get("ready") is True:
                ready += 1
            continue
        if isinstance(term, dict):
            if not as_str(term.get("reason")):
                reason = (f"Init:Signal:{as_int(term.get('signal'))}" if as_int(term.get("signal"))
                          else f"Init:ExitCode:{as_int(term.get('exitCode'))}")
            else:
                reason = "Init:" + as_str(term.get("reason"))
        elif isinstance(waiting, dict) and as_str(waiting.get("reason")) and waiting.get("reason") != "PodInitializing":
            reason = "Init:" + as_str(waiting.get("reason"))
        else:
            reason = f"Init:{i}/{len(init_specs)}"
        initializing = True
        break

    if not initializing or _initialized_true(status):
        restarts = sidecar_restarts
        last_restart = last_sidecar_restart
        has_running = False
        for raw in reversed(as_list(status.get("containerStatuses"))):
            cs = as_dict(raw)
            restarts += as_int(cs.get("restartCount"))
            t = terminated_at(cs)
            if t and (last_restart is None or t > last_restart):
                last_restart = t
            state = as_dict(cs.get("state"))
            waiting, term = as_dict(state.get("waiting")), state.get("terminated")
            if state.get("waiting") is not None and as_str(waiting.get("reason")):
                reason = as_str(waiting.get("reason"))
            elif isinstance(term, dict) and as_str(term.get("reason")):
                reason = as_str(term.get("reason"))
            elif isinstance(term, dict):
                reason = (f"Signal:{as_int(term.get('signal'))}" if as_int(term.get("signal"))
                          else f"ExitCode:{as_int(term.get('exitCode'))}")
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

    pod_ips = as_list(status.get("podIPs"))
    ip = as_str(as_dict(pod_ips[0]).get("ip")) if pod_ips else ""
    gates = as_list(spec.get("readinessGates"))
    gates_text = "<none>"
    if gates:
        true = 0
        for gate in gates:
            for cond in as_list(status.get("conditions")):
                if as_dict(cond).get("type") == as_dict(gate).get("conditionType"):
                    true += as_dict(cond).get("status") == "True"
                    break
        gates_text = f"{true}/{len(gates)}"
    return [as_str(meta.get("name")), f"{ready}/{total}", reason, restarts_text, age(pod, now),
            ip or "<none>", as_str(spec.get("nodeName")) or "<none>",
            as_str(status.get("nominatedNodeName")) or "<none>", gates_text]
