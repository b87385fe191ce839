"""Reading the DRA kinds (and a pod's claims) from bundle items into the records of views.py.

Reads `resource.k8s.io/v1`, `v1beta2` (same shape) and `v1beta1` (requests flat, device attributes/capacity
under `basic`) into one shape. Separate from the records because it is the one place that walks untrusted
JSON: an item that cannot be read becomes a `Problem` (file, JSON path, message) and is left out; nothing
here raises on bundle data. The rules and the allocator only read the records.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable

from analyzer.model.dra.views import (ALL, CLAIMS_FILE, CLASSES_FILE, EXACT_COUNT, RULES_FILE, SLICES_FILE, TEMPLATES_FILE,
                                      V1BETA1, AllocatedDevice, Claim, ClaimSpec, Constraint, DeviceAsk, DeviceClass,
                                      DeviceRef, DeviceTaint, DraViews, PodClaimRef, PodClaims, Pool, Problem, Request, Slice,
                                      SliceDevice, TaintRule, Template)
from analyzer.model.matching import Taint, Toleration
from analyzer.model.podspec import names_claims


class _Bad(Exception):
    def __init__(self, path: str, message: str) -> None:
        super().__init__(message)
        self.path = path
        self.message = message



def pod_claims(pod: dict) -> PodClaims | None:
    """A pod's claims as the rules read them; None when the pod names no claims."""
    spec = pod.get("spec") if isinstance(pod.get("spec"), dict) else {}
    status = pod.get("status") if isinstance(pod.get("status"), dict) else {}
    meta = pod.get("metadata") if isinstance(pod.get("metadata"), dict) else {}
    if not names_claims(spec, status):
        return None
    refs = tuple(
        PodClaimRef(name=str(r.get("name") or ""), claim_name=r.get("resourceClaimName") or None,
                    template_name=r.get("resourceClaimTemplateName") or None)
        for r in _list(spec.get("resourceClaims")) if isinstance(r, dict)
    )
    ext = status.get("extendedResourceClaimStatus")
    extended = ext.get("resourceClaimName") if isinstance(ext, dict) else None
    generated = tuple(
        (str(s.get("name") or ""), s.get("resourceClaimName") or None)
        for s in _list(status.get("resourceClaimStatuses")) if isinstance(s, dict)
    )
    used = frozenset(
        str(c.get("name")) for group in ("initContainers", "containers")
        for ctr in _list(spec.get(group)) if isinstance(ctr, dict)
        for c in _list((ctr.get("resources") or {}).get("claims") if isinstance(ctr.get("resources"), dict) else None)
        if isinstance(c, dict) and c.get("name")
    )
    return PodClaims(namespace=str(meta.get("namespace") or "default"), name=str(meta.get("name") or ""),
                     refs=refs, generated=generated, extended_claim=extended, container_claims=used)


# ---- building -------------------------------------------------------------------------------------

def _list(value: Any) -> list:
    return value if isinstance(value, list) else []


def _array(value: Any, path: str) -> list:
    """A list the rules read: absent is empty, anything else but a list makes the object unreadable (a string
    where selectors belong must not read as "no selectors", which would let every device match)."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise _Bad(path, f"expected an array, found {type(value).__name__}")
    return value


def _dict(value: Any, path: str, what: str = "an object") -> dict:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise _Bad(path, f"expected {what}, found {type(value).__name__}")
    return value


def _str(value: Any, path: str) -> str:
    if not isinstance(value, str) or not value:
        raise _Bad(path, "expected a non-empty string")
    return value


def _selectors(raw: Any, path: str) -> tuple[str, ...]:
    out = []
    for i, s in enumerate(_array(raw, path)):
        cel = _dict(s, f"{path}[{i}]").get("cel")
        expr = _dict(cel, f"{path}[{i}].cel").get("expression")
        # A selector that is not CEL is an unknown future type; the allocator refuses it too (validateDeviceRequest).
        out.append(_str(expr, f"{path}[{i}].cel.expression"))
    return tuple(out)


def _tolerations(raw: Any, path: str) -> tuple[Toleration, ...]:
    out = []
    for i, t in enumerate(_array(raw, path)):
        t = _dict(t, f"{path}[{i}]")
        out.append(Toleration(str(t.get("key") or ""), str(t.get("operator") or "Equal"),
                              str(t.get("value") or ""), str(t.get("effect") or "")))
    return tuple(out)


def _ask(name: str, body: dict, path: str) -> DeviceAsk:
    mode = body.get("allocationMode") or EXACT_COUNT
    if mode not in (EXACT_COUNT, ALL):
        raise _Bad(f"{path}.allocationMode", f"unknown allocation mode {mode!r}")
    count = 0
    if mode == EXACT_COUNT:
        count = 1 if body.get("count") is None else body["count"]
        if isinstance(count, bool) or not isinstance(count, int) or count < 1:
            raise _Bad(f"{path}.count", f"expected a positive integer, found {count!r}")
    unmodelled = "consumable capacity (capacity.requests)" if body.get("capacity") else None
    return DeviceAsk(name=name, device_class=_str(body.get("deviceClassName"), f"{path}.deviceClassName"),
                     selectors=_selectors(body.get("selectors"), f"{path}.selectors"), mode=mode, count=count,
                     admin_access=body.get("adminAccess") is True,
                     tolerations=_tolerations(body.get("tolerations"), f"{path}.tolerations"), unmodelled=unmodelled)


def claim_spec(devices: Any, path: str, version: str) -> ClaimSpec:
    """`spec.devices` of a claim (or `spec.spec.devices` of a template) in any served version."""
    devices = _dict(devices, path)
    requests = []
    for i, r in enumerate(_array(devices.get("requests"), f"{path}.requests")):
        rpath = f"{path}.requests[{i}]"
        r = _dict(r, rpath)
        name = _str(r.get("name"), f"{rpath}.name")
        if r.get("firstAvailable"):
            subs = []
            for j, s in enumerate(_array(r.get("firstAvailable"), f"{rpath}.firstAvailable")):
                s = _dict(s, f"{rpath}.firstAvailable[{j}]")
                sub = _str(s.get("name"), f"{rpath}.firstAvailable[{j}].name")
                subs.append(_ask(f"{name}/{sub}", s, f"{rpath}.firstAvailable[{j}]"))
            requests.append(Request(name=name, alternatives=tuple(subs), first_available=True))
            continue
        # v1beta1 puts the request's fields on the request itself; v1/v1beta2 under `exactly`.
        body, bpath = (r, rpath) if version == V1BETA1 else (_dict(r.get("exactly"), f"{rpath}.exactly"), f"{rpath}.exactly")
        requests.append(Request(name=name, alternatives=(_ask(name, body, bpath),), first_available=False))
    constraints = []
    for i, c in enumerate(_array(devices.get("constraints"), f"{path}.constraints")):
        c = _dict(c, f"{path}.constraints[{i}]")
        attr = c.get("matchAttribute") or None
        unmodelled = None if attr else f"constraint #{i} is not matchAttribute ({', '.join(sorted(c)) or 'empty'})"
        constraints.append(Constraint(requests=tuple(str(x) for x in _array(c.get("requests"), f"{path}.constraints[{i}].requests")),
                                      match_attribute=attr, unmodelled=unmodelled))
    return ClaimSpec(requests=tuple(requests), constraints=tuple(constraints))


def _claim(item: dict, path: str) -> Claim:
    meta = _dict(item.get("metadata"), f"{path}.metadata")
    spec = claim_spec(_dict(item.get("spec"), f"{path}.spec").get("devices"), f"{path}.spec.devices", item.get("apiVersion", ""))
    status = _dict(item.get("status"), f"{path}.status")
    allocation = status.get("allocation")
    allocated = None
    node_selector = None
    if isinstance(allocation, dict):
        results = []
        apath = f"{path}.status.allocation.devices.results"
        for i, r in enumerate(_array(_dict(allocation.get("devices"), f"{path}.status.allocation.devices").get("results"), apath)):
            r = _dict(r, f"{apath}[{i}]")
            results.append(AllocatedDevice(
                request=str(r.get("request") or ""),
                ref=DeviceRef(driver=_str(r.get("driver"), f"{apath}[{i}].driver"), pool=_str(r.get("pool"), f"{apath}[{i}].pool"),
                              device=_str(r.get("device"), f"{apath}[{i}].device")),
                admin_access=r.get("adminAccess") is True))
        allocated = tuple(results)
        node_selector = allocation.get("nodeSelector") if isinstance(allocation.get("nodeSelector"), dict) else None
    reserved = tuple(str(r.get("name")) for r in _list(status.get("reservedFor"))
                     if isinstance(r, dict) and r.get("resource", "pods") == "pods" and r.get("name"))
    owner = next((o.get("name") for o in _list(meta.get("ownerReferences"))
                  if isinstance(o, dict) and o.get("kind") == "Pod" and o.get("controller")), None)
    return Claim(namespace=str(meta.get("namespace") or "default"), name=_str(meta.get("name"), f"{path}.metadata.name"),
                 spec=spec, allocated=allocated, node_selector=node_selector, reserved_for=reserved, owner_pod=owner,
                 source=path)


def _template(item: dict, path: str) -> Template:
    meta = _dict(item.get("metadata"), f"{path}.metadata")
    inner = _dict(_dict(item.get("spec"), f"{path}.spec").get("spec"), f"{path}.spec.spec")
    return Template(namespace=str(meta.get("namespace") or "default"), name=_str(meta.get("name"), f"{path}.metadata.name"),
                    spec=claim_spec(inner.get("devices"), f"{path}.spec.spec.devices", item.get("apiVersion", "")), source=path)


def _class(item: dict, path: str) -> DeviceClass:
    meta = _dict(item.get("metadata"), f"{path}.metadata")
    spec = _dict(item.get("spec"), f"{path}.spec")
    ext = spec.get("extendedResourceName")
    return DeviceClass(name=_str(meta.get("name"), f"{path}.metadata.name"),
                       selectors=_selectors(spec.get("selectors"), f"{path}.spec.selectors"),
                       extended_resource_name=ext if isinstance(ext, str) and ext else None,
                       created=str(meta.get("creationTimestamp") or ""), source=path)


def _device(driver: str, pool: str, raw: dict, path: str, version: str) -> SliceDevice:
    name = _str(raw.get("name"), f"{path}.name")
    body = _dict(raw.get("basic"), f"{path}.basic") if version == V1BETA1 else raw
    attributes = _dict(body.get("attributes"), f"{path}.attributes")
    capacity = _dict(body.get("capacity"), f"{path}.capacity")
    taints = []
    for i, t in enumerate(_array(body.get("taints"), f"{path}.taints")):
        t = _dict(t, f"{path}.taints[{i}]")
        taints.append(Taint(_str(t.get("key"), f"{path}.taints[{i}].key"), str(t.get("value") or ""), str(t.get("effect") or "")))
    unmodelled = None
    if body.get("consumesCounters"):
        unmodelled = "partitionable device (consumesCounters)"
    elif body.get("bindingConditions") or body.get("bindsToNode"):
        unmodelled = "binding conditions"
    elif body.get("allowMultipleAllocations"):
        unmodelled = "consumable capacity (allowMultipleAllocations)"
    elif any(k in body for k in ("nodeName", "nodeSelector", "allNodes")):
        unmodelled = "per-device node selection"
    return SliceDevice(ref=DeviceRef(driver=driver, pool=pool, device=name),
                       raw={"name": name, "attributes": attributes, "capacity": capacity},
                       taints=tuple(taints), unmodelled=unmodelled)


def _slice(item: dict, path: str) -> Slice:
    meta = _dict(item.get("metadata"), f"{path}.metadata")
    spec = _dict(item.get("spec"), f"{path}.spec")
    version = item.get("apiVersion", "")
    driver = _str(spec.get("driver"), f"{path}.spec.driver")
    pool = _dict(spec.get("pool"), f"{path}.spec.pool")
    pool_name = _str(pool.get("name"), f"{path}.spec.pool.name")
    generation, count = pool.get("generation", 0), pool.get("resourceSliceCount", 1)
    for key, value in (("generation", generation), ("resourceSliceCount", count)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise _Bad(f"{path}.spec.pool.{key}", f"expected a non-negative integer, found {value!r}")
    devices = tuple(_device(driver, pool_name, _dict(d, f"{path}.spec.devices[{i}]"), f"{path}.spec.devices[{i}]", version)
                    for i, d in enumerate(_array(spec.get("devices"), f"{path}.spec.devices")))
    per_device = spec.get("perDeviceNodeSelection") is True
    unmodelled = None
    if per_device:
        unmodelled = "per-device node selection (perDeviceNodeSelection)"
    elif spec.get("sharedCounters"):
        unmodelled = "partitionable devices (sharedCounters)"
    node_selector = spec.get("nodeSelector") if isinstance(spec.get("nodeSelector"), dict) else None
    return Slice(name=str(meta.get("name") or ""), driver=driver, pool=pool_name, generation=generation, slice_count=count,
                 node_name=spec.get("nodeName") or None, node_selector=node_selector, all_nodes=spec.get("allNodes") is True,
                 per_device_node_selection=per_device, devices=devices, unmodelled=unmodelled, source=path)


def _optional_str(value: Any, path: str) -> str | None:
    """A selector field: absent (or null) selects any; set, it must name something (API validation refuses "")."""
    return None if value is None else _str(value, path)


def _taint_rule(item: dict, path: str) -> TaintRule:
    """A DeviceTaintRule. v1alpha3 (v1.33/v1.34) also has deviceSelector.deviceClassName and .selectors (CEL); later
    versions tombstoned both (k8s.io/api resource/v1beta2 types.go DeviceTaintSelector), so a server never returns
    them there and reading them whenever present is exact."""
    meta = _dict(item.get("metadata"), f"{path}.metadata")
    name = _str(meta.get("name"), f"{path}.metadata.name")
    spec = _dict(item.get("spec"), f"{path}.spec")
    raw_taint = spec.get("taint")
    if raw_taint is None:
        raise _Bad(f"{path}.spec.taint", "a DeviceTaintRule needs a taint")
    t = _dict(raw_taint, f"{path}.spec.taint")
    # effect is required (k8s.io/api resource types.go DeviceTaint), value optional but a string when there: as
    # the schema says. Read as "" they would make a harmless taint of a rule the API server never stores.
    value, effect = t.get("value", ""), t.get("effect")
    if not isinstance(value, str):
        raise _Bad(f"{path}.spec.taint.value", f"expected a string, found {type(value).__name__}")
    if not isinstance(effect, str) or not effect:
        raise _Bad(f"{path}.spec.taint.effect", "a taint needs an effect" if effect in (None, "")
                   else f"expected a string, found {type(effect).__name__}")
    # Any effect string is kept: the allocator blocks only NoSchedule and NoExecute ("None" and unknown
    # effects are ignored, allocator_stable.go taintPreventsAllocation).
    taint = DeviceTaint(_str(t.get("key"), f"{path}.spec.taint.key"), value, effect, rule=name)
    raw_sel = spec.get("deviceSelector")
    if raw_sel is None:
        return TaintRule(name=name, taint=taint, selected=False, source=path)
    spath = f"{path}.spec.deviceSelector"
    sel = _dict(raw_sel, spath)
    return TaintRule(name=name, taint=taint, driver=_optional_str(sel.get("driver"), f"{spath}.driver"),
                     pool=_optional_str(sel.get("pool"), f"{spath}.pool"),
                     device=_optional_str(sel.get("device"), f"{spath}.device"),
                     device_class=_optional_str(sel.get("deviceClassName"), f"{spath}.deviceClassName"),
                     selectors=_selectors(sel.get("selectors"), f"{spath}.selectors"), source=path)


def _unreadable_rule(item: Any, path: str, problem: Problem) -> TaintRule:
    """What can still be read of a broken rule: the devices its driver/pool/device could match (any, where not a
    readable string) get unknown taints rather than none: leaving it out would call them untainted."""
    meta = item.get("metadata") if isinstance(item, dict) else None
    spec = item.get("spec") if isinstance(item, dict) else None
    sel = spec.get("deviceSelector") if isinstance(spec, dict) else None
    sel = sel if isinstance(sel, dict) else {}

    def part(key: str) -> str | None:
        value = sel.get(key)
        return value if isinstance(value, str) and value else None

    name = meta.get("name") if isinstance(meta, dict) and isinstance(meta.get("name"), str) else f"at {path}"
    return TaintRule(name=name, taint=None, driver=part("driver"), pool=part("pool"), device=part("device"),
                     source=path, problem=problem)


def _read(file: str, items: Iterable[Any], build, problems: list[Problem],
          unreadable: dict[tuple[str, str, str], Problem],
          stand_in: Callable[[Any, str, Problem], Any] | None = None) -> list:
    """The items `build` can read; each other one is a Problem, and `stand_in`'s record of it where given."""
    out = []
    for i, item in enumerate(items):
        path = f"$.items[{i}]"
        try:
            if not isinstance(item, dict):
                raise _Bad(path, f"expected an object, found {type(item).__name__}")
            out.append(build(item, path))
        except _Bad as bad:
            problem = Problem(file=file, path=bad.path, message=bad.message)
            problems.append(problem)
            if stand_in is not None:
                out.append(stand_in(item, path, problem))
            meta = item.get("metadata") if isinstance(item, dict) else None
            if isinstance(meta, dict) and isinstance(meta.get("name"), str):
                unreadable[(file, str(meta.get("namespace") or ""), meta["name"])] = problem
    return out


def _pools(slices: list[Slice]) -> tuple[tuple[Pool, ...], tuple[str, ...]]:
    by_pool: dict[tuple[str, str], list[Slice]] = {}
    for s in slices:
        by_pool.setdefault((s.driver, s.pool), []).append(s)
    pools, dropped = [], []
    for (driver, name), group in by_pool.items():
        newest = max(s.generation for s in group)
        current = tuple(s for s in group if s.generation == newest)
        dropped.extend(f"{s.name} (pool {driver}/{name} generation {s.generation} < {newest})" for s in group if s.generation != newest)
        # Pools_stable.go GatherPools: a pool is incomplete while fewer slices of its newest generation exist than it says.
        expected = max(s.slice_count for s in current)
        incomplete = len(current) < expected
        if incomplete:
            unmodelled = f"incomplete pool {driver}/{name}: {len(current)} of {expected} slices of generation {newest}"
        else:
            unmodelled = next((f"{r} in slice {s.name}" for s in current
                               for r in [s.unmodelled, *(d.unmodelled for d in s.devices)] if r), None)
        pools.append(Pool(driver=driver, name=name, generation=newest, slices=current, unmodelled=unmodelled,
                          incomplete=incomplete))
    return tuple(pools), tuple(dropped)


def build_views(*, resourceclaims: Iterable[Any] = (), resourceclaimtemplates: Iterable[Any] = (),
                deviceclasses: Iterable[Any] = (), resourceslices: Iterable[Any] = (),
                devicetaintrules: Iterable[Any] = ()) -> DraViews:
    """Views from the raw `items` of the five files (each any served version, mixed is fine)."""
    problems: list[Problem] = []
    unreadable: dict[tuple[str, str, str], Problem] = {}
    claims = _read(CLAIMS_FILE, resourceclaims, _claim, problems, unreadable)
    templates = _read(TEMPLATES_FILE, resourceclaimtemplates, _template, problems, unreadable)
    classes = _read(CLASSES_FILE, deviceclasses, _class, problems, unreadable)
    slices = _read(SLICES_FILE, resourceslices, _slice, problems, unreadable)
    pools, dropped = _pools(slices)
    rules = _read(RULES_FILE, devicetaintrules, _taint_rule, problems, unreadable, stand_in=_unreadable_rule)
    return DraViews(claims={(c.namespace, c.name): c for c in claims},
                    templates={(t.namespace, t.name): t for t in templates},
                    classes={c.name: c for c in classes}, pools=pools, dropped_slices=dropped, problems=tuple(problems),
                    unreadable=unreadable, taint_rules=tuple(rules))
