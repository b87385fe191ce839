"""DRA bundles for the pipeline tests: the recordings' real objects, changed only where a case needs.

Every object starts as a deep copy of tests/data/recordings/dra-exhausted-v1.36 or dra-no-slice-v1.36 (real
v1.36.2 `kubectl get -o json` output; dra.md). A `DraBundle` holds the bundle's files as editable item lists;
`write(tmp_path)` writes them as a bare bundle directory for the real pipeline (`analyze`, `why`).

  exhausted()            the recording as it is: holder-1/2 bound with gpu-0/gpu-1 allocated, waiter pending
  no_slice()             the other recording: no ResourceSlice at all, lab/no-slice pending
  without_holders()      exhausted without the holders (pods, claims, events): both devices of dx1 free
  not_generated(b, pod)  the pod before the claim controller made its claim: judged on the template
  waiter_alone()         without_holders() and the waiter's claim not generated (judged on the template `one-gpu`)
  one_device_free()      exhausted without holder-2: gpu-0 held by holder-1, gpu-1 free
  b.request              the template's one request (`exactly`), to change per case
  b.devices / b.slice    the one slice of dx1 and its two devices
  add_node(b, name, …)   dx1 renamed (a second node); taints/labels as asked
"""

from __future__ import annotations

import copy
import json
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from helpers import RECORDINGS

from analyzer.bundle.catalog import KINDS

EXHAUSTED = RECORDINGS / "dra-exhausted-v1.36"
NO_SLICE = RECORDINGS / "dra-no-slice-v1.36"
CLASS = "gpu.example.com"


def _items(bundle: Path, kind: str) -> list[dict]:
    return copy.deepcopy(json.loads((bundle / f"{kind}.json").read_text())["items"])


def named(objs: list[dict], name: str) -> dict:
    found = [o for o in objs if o["metadata"]["name"] == name]
    assert found, f"no object named {name}: {[o['metadata']['name'] for o in objs]}"
    return found[0]


@dataclass(kw_only=True)
class DraBundle:
    """One bundle's files as editable item lists (kind -> items); a kind set to None is left out."""

    files: dict[str, list[dict] | None]
    version: dict
    extra: dict[str, list[dict]] = field(default_factory=dict)  # other kinds (replicasets, …)

    def items(self, kind: str) -> list[dict]:
        got = self.files.get(kind)
        assert got is not None, f"{kind} is left out of this bundle"
        return got

    def pod(self, name: str) -> dict:
        return named(self.items("pods"), name)

    def claim(self, name: str) -> dict:
        return named(self.items("resourceclaims"), name)

    def template(self, name: str = "one-gpu") -> dict:
        return named(self.items("resourceclaimtemplates"), name)

    @property
    def device_class(self) -> dict:
        return self.items("deviceclasses")[0]

    @property
    def slice(self) -> dict:
        return self.items("resourceslices")[0]

    @property
    def devices(self) -> list[dict]:
        return self.slice["spec"]["devices"]

    @property
    def request(self) -> dict:
        """The template's one request (`exactly`): what a case changes."""
        return self.template()["spec"]["spec"]["devices"]["requests"][0]["exactly"]

    def drop(self, kind: str, name: str) -> None:
        self.files[kind] = [o for o in self.items(kind) if o["metadata"]["name"] != name]

    def write(self, tmp_path: Path, name: str = "bundle") -> Path:
        root = tmp_path / name
        root.mkdir(parents=True)
        for kind, objs in {**self.files, **self.extra}.items():
            if objs is not None:
                doc = {"apiVersion": "v1", "items": objs, "kind": "List", "metadata": {"resourceVersion": ""}}
                (root / f"{kind}.json").write_text(json.dumps(doc, indent=4))
        (root / "version.json").write_text(json.dumps(self.version, indent=2))
        return root


def load(bundle: Path) -> DraBundle:
    """Every catalog kind the recording has (a kind it lacks stays out: items() refuses it)."""
    return DraBundle(files={k.name: _items(bundle, k.name) for k in KINDS if (bundle / k.file).is_file()},
                     version=json.loads((bundle / "version.json").read_text()))


def exhausted() -> DraBundle:
    return load(EXHAUSTED)


def no_slice() -> DraBundle:
    return load(NO_SLICE)


def without_holders() -> DraBundle:
    """The exhausted recording before the holders ran: the waiter alone, both devices of dx1 free."""
    b = exhausted()
    for holder in ("holder-1", "holder-2"):
        b.drop("pods", holder)
    b.files["resourceclaims"] = [c for c in b.items("resourceclaims") if not c["metadata"]["name"].startswith("holder-")]
    b.files["events"] = [e for e in b.items("events") if e["involvedObject"]["name"] not in ("holder-1", "holder-2")]
    return b


def not_generated(b: DraBundle, pod: str = "waiter") -> dict:
    """The pod as it is before the claim controller made its claim for `gpu` (so it is judged on the
    template): its resourceClaimStatuses and its generated claim gone. Returns the pod."""
    raw = b.pod(pod)
    raw["status"].pop("resourceClaimStatuses", None)
    b.files["resourceclaims"] = [
        c for c in b.items("resourceclaims")
        if c["metadata"].get("annotations", {}).get("resource.kubernetes.io/pod-claim-name") != "gpu"
        or c["metadata"]["ownerReferences"][0]["name"] != pod]
    return raw


def waiter_alone() -> DraBundle:
    """The exhausted recording before the holders ran and before the claim controller made the waiter's
    claim: the waiter is judged on the template (both devices of dx1 free)."""
    b = without_holders()
    not_generated(b)
    return b


def add_node(b: DraBundle, name: str, *, taints: list[dict] | None = None, labels: dict[str, str] | None = None,
             allocatable: dict[str, str] | None = None) -> dict:
    """dx1 (the recorded node) under another name; its taints, labels and allocatable changed as asked."""
    node = copy.deepcopy(named(_items(EXHAUSTED, "nodes"), "dx1"))
    meta = node["metadata"]
    meta["name"] = name
    meta["uid"] = str(uuid.uuid4())
    meta["labels"]["kubernetes.io/hostname"] = name
    if labels:
        meta["labels"].update(labels)
    for a in node["status"].get("addresses") or ():
        if a["type"] == "Hostname":
            a["address"] = name
    if taints is not None:
        node["spec"]["taints"] = taints
    if allocatable:
        node["status"]["allocatable"].update(allocatable)
        node["status"]["capacity"].update(allocatable)
    b.items("nodes").append(node)
    return node


def pending_pod(b: DraBundle, name: str, resource_claims: list[dict], *, limits: dict[str, str] | None = None) -> dict:
    """The recorded waiter renamed, naming other claims (no claim generated for it yet)."""
    pod = copy.deepcopy(named(_items(EXHAUSTED, "pods"), "waiter"))
    pod["metadata"]["name"] = name
    pod["metadata"]["uid"] = str(uuid.uuid4())
    pod["status"].pop("resourceClaimStatuses", None)
    pod["spec"]["resourceClaims"] = resource_claims
    c = pod["spec"]["containers"][0]
    c["resources"]["claims"] = [{"name": rc["name"]} for rc in resource_claims]
    if not resource_claims:
        c["resources"].pop("claims")
        pod["spec"].pop("resourceClaims")
    if limits:
        c["resources"]["limits"] = dict(limits)
        c["resources"]["requests"].update(limits)
    b.items("pods").append(pod)
    return pod


def standalone_claim(b: DraBundle, name: str, spec: dict | None = None) -> dict:
    """A ResourceClaim made by hand (not from a template): the recorded waiter's claim, renamed, unowned,
    unallocated; its spec the template's unless given."""
    claim = copy.deepcopy(named(_items(EXHAUSTED, "resourceclaims"), "waiter-gpu-2p5g6"))
    meta = claim["metadata"]
    meta.update({"name": name, "uid": str(uuid.uuid4())})
    for k in ("ownerReferences", "annotations", "generateName"):
        meta.pop(k, None)
    claim["spec"] = copy.deepcopy(spec if spec is not None else b.template()["spec"]["spec"])
    claim["status"] = {}
    b.items("resourceclaims").append(claim)
    return claim


def to_v1beta1(b: DraBundle) -> None:
    """Rewrite the four DRA kinds in resource.k8s.io/v1beta1 shape (v1.32): requests flat (no `exactly`),
    device attributes and capacity (DeviceCapacity {value}) under `basic` (dra.md; v1beta1 types.go BasicDevice)."""
    for kind in ("resourceclaims", "resourceclaimtemplates", "deviceclasses", "resourceslices"):
        for o in b.items(kind):
            o["apiVersion"] = "resource.k8s.io/v1beta1"
    specs = [c["spec"] for c in b.items("resourceclaims")] + [t["spec"]["spec"] for t in b.items("resourceclaimtemplates")]
    for spec in specs:
        for r in (spec.get("devices") or {}).get("requests") or ():
            r.update(r.pop("exactly", {}))
    for s in b.items("resourceslices"):
        for d in s["spec"]["devices"]:
            d["basic"] = {k: d.pop(k) for k in ("attributes", "capacity") if k in d}


# ---- DeviceTaintRules -------------------------------------------------------------------------------------
# No rule is in the recordings: a rule is written in the shape a v1.36 server returns it
# (k8s.io/api resource/v1beta2 types.go DeviceTaintRule; v1alpha3 of v1.33/v1.34 adds deviceSelector.deviceClassName
# and .selectors), metadata as the server fills it, taint.timeAdded as SetDefaults_DeviceTaint sets it.

UNHEALTHY = {"key": "gpu.example.com/unhealthy", "value": "true", "effect": "NoSchedule"}
NO_SELECTOR = object()  # add_taint_rule(selector=NO_SELECTOR): spec.deviceSelector left out


def add_taint_rule(b: DraBundle, name: str, selector: dict | object = NO_SELECTOR, *, taint: dict | None = None,
                   api_version: str = "resource.k8s.io/v1beta2") -> dict:
    spec: dict = {"taint": {**(taint or UNHEALTHY), "timeAdded": "2026-11-29T17:40:00Z"}}
    if selector is not NO_SELECTOR:
        spec["deviceSelector"] = selector
    rule = {"apiVersion": api_version, "kind": "DeviceTaintRule",
            "metadata": {"name": name, "uid": str(uuid.uuid4()), "resourceVersion": "301", "generation": 1,
                         "creationTimestamp": "2026-11-29T17:40:00Z"},
            "spec": spec, "status": {}}
    if b.files.get("devicetaintrules") is None:
        b.files["devicetaintrules"] = []
    b.items("devicetaintrules").append(rule)
    return rule


def one_device_free() -> DraBundle:
    """The exhausted recording without holder-2 (its pod, claim and events): gpu-0 held by holder-1, gpu-1 free."""
    b = exhausted()
    b.drop("pods", "holder-2")
    b.drop("resourceclaims", "holder-2-gpu-wj7dv")
    b.files["events"] = [e for e in b.items("events") if e["involvedObject"]["name"] != "holder-2"]
    return b
