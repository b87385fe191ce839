"""Properties of the analyzer over generated pods and nodes (hypothesis).

Every generated object starts as a copy of a lab object (dumps/lab-seven-states-v1.36, real
kubectl output) with random labels, taints, tolerations, node selectors, required node
affinity, requests and allocatable in valid quantity forms, and phases. Each example is
written as a bare bundle (pods.json + nodes.json) into its own temporary directory and run
through the in-process pipeline, `analyzer.pipeline.analyse`.

Properties:
  - the analyzer never raises, and a generated (valid) bundle has no problems;
  - every answer is a word of analyzer.words.VOCABULARY;
  - the funnel's candidate counts never increase from stage to stage (and each stage starts
    where the one before ended);
  - adding a node that fits a pod (no taints or cordon, labels satisfying its selector and
    required affinity, ample allocatable of everything it requests) turns a funnel answer
    (selector-mismatch … exhausted) into fits-now, or unclassified when the pod has needs the
    funnel does not model;
  - adding Succeeded or Failed pods, bound anywhere, changes no answer;
  - renaming nodes consistently (nodes.json, pods' nodeName, hostname labels and selectors)
    changes no answer.
"""

from __future__ import annotations

import copy
import json
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from analyzer import words
from analyzer.pipeline import Options, analyse
from conftest import assert_funnel_consistent, by_key, kubectl_list
from helpers import LAB

_PODS = {p["metadata"]["name"]: p for p in json.loads((LAB / "pods.json").read_text())["items"]}
_NODES = {n["metadata"]["name"]: n for n in json.loads((LAB / "nodes.json").read_text())["items"]}

FUNNEL_WORDS = {words.SELECTOR_MISMATCH, words.CORDONED, words.UNTOLERATED_TAINT, words.NO_GPU_NODE,
                words.ALLOCATABLE_ZERO, words.EXHAUSTED}
HOSTNAME = "kubernetes.io/hostname"
GPU = "nvidia.com/gpu"
LABELS = {"gpu-type": ["a100", "h100"], "zone": ["z1", "z2"], "pool": ["tainted", "general"]}
TAINTS = [
    {"key": GPU, "value": "present", "effect": "NoSchedule"},
    {"key": "dedicated", "value": "ml", "effect": "NoExecute"},
    {"key": "soft", "value": "1", "effect": "PreferNoSchedule"},
    {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule", "timeAdded": "2026-11-29T17:20:00Z"},
]
TOLERATIONS = [
    {"key": GPU, "operator": "Exists", "effect": "NoSchedule"},
    {"key": "dedicated", "operator": "Equal", "value": "ml"},
    {"key": "dedicated", "operator": "Equal", "value": "other", "effect": "NoExecute"},
    {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"},
    {"operator": "Exists"},
]
# 60 examples per property: every funnel word is still reached and checked by the fits-now property, and each
# property reaches the same set of words as with 100 (pytest --hypothesis-show-statistics lists them).
SETTINGS = settings(max_examples=60, deadline=None, database=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

# -- quantities in the forms kubectl prints and people write ---------------------------------------------

def cpu() -> st.SearchStrategy:
    return st.one_of(st.integers(0, 64).map(str), st.integers(0, 64_000).map(lambda m: f"{m}m"), st.integers(0, 64),
                     st.sampled_from(["0.5", "1.5", "2e0", "1e1", "250m", "0.001"]))


def memory() -> st.SearchStrategy:
    return st.one_of(st.integers(0, 512).map(lambda n: f"{n}Gi"), st.integers(0, 1 << 20).map(lambda n: f"{n}Mi"),
                     st.integers(0, 10**12), st.sampled_from(["1.5Gi", "1e9", "128G", "0.5Ti", "64000Ki"]))


def count(lo: int, hi: int) -> st.SearchStrategy:
    """A whole number in any form (extended resources and pods must be whole)."""
    return st.one_of(st.integers(lo, hi).map(str), st.integers(lo, hi), st.integers(lo, hi).map(lambda n: f"{n}e0"),
                     st.integers(lo, hi).map(lambda n: f"{n * 1000}m"))


# -- objects ---------------------------------------------------------------------------------------------

def sometimes(draw: st.DrawFn, one_in: int) -> bool:
    return draw(st.integers(0, one_in - 1)) == 0


@st.composite
def node_specs(draw: st.DrawFn) -> dict:
    base = draw(st.sampled_from(sorted(_NODES)))
    labels = {k: draw(st.sampled_from(v)) for k, v in LABELS.items() if draw(st.booleans())}
    gpus = None if sometimes(draw, 4) else draw(count(0, 8))
    alloc_gpus = draw(count(0, 8)) if gpus is not None and sometimes(draw, 3) else gpus
    taints = draw(st.lists(st.sampled_from(TAINTS), max_size=2, unique_by=lambda t: t["key"])) if sometimes(draw, 2) else []
    return {"base": base, "labels": labels, "taints": taints, "unschedulable": sometimes(draw, 6), "cpu": draw(cpu()),
            "memory": draw(memory()), "pods": draw(count(0, 110)), "gpus": gpus, "alloc_gpus": alloc_gpus}


def make_node(name: str, spec: dict) -> dict:
    n = copy.deepcopy(_NODES[spec["base"]])
    n["metadata"]["name"] = name
    n["metadata"]["uid"] = f"uid-node-{name}"
    n["metadata"]["labels"] = {"kubernetes.io/os": "linux", HOSTNAME: name, **spec["labels"]}
    n["spec"] = {"taints": copy.deepcopy(spec["taints"])} if spec["taints"] else {}
    if spec["unschedulable"]:
        n["spec"]["unschedulable"] = True
    capacity = {"cpu": spec["cpu"], "memory": spec["memory"], "pods": spec["pods"]}
    allocatable = dict(capacity)
    if spec["gpus"] is not None:
        capacity[GPU] = spec["gpus"]
        allocatable[GPU] = spec["alloc_gpus"]
    n["status"]["capacity"] = capacity
    n["status"]["allocatable"] = allocatable
    return n


@st.composite
def expressions(draw: st.DrawFn, node_names: list[str]) -> dict:
    keys = {**LABELS, HOSTNAME: node_names or ["nowhere"]}
    key = draw(st.sampled_from(sorted(keys)))
    op = draw(st.sampled_from(["In", "NotIn", "Exists", "DoesNotExist"]))
    expr: dict = {"key": key, "operator": op}
    if op in ("In", "NotIn"):
        expr["values"] = draw(st.lists(st.sampled_from(keys[key]), min_size=1, max_size=2, unique=True))
    return expr


@st.composite
def target_specs(draw: st.DrawFn, node_names: list[str]) -> dict:
    """A Pending pod without a node (the lab's `exhausted`), scheduling-relevant fields drawn."""
    selector = {k: draw(st.sampled_from(v)) for k, v in LABELS.items() if sometimes(draw, 6)}
    if node_names and sometimes(draw, 5):
        selector[HOSTNAME] = draw(st.sampled_from(node_names))
    terms = None
    if sometimes(draw, 4):
        terms = [{"matchExpressions": draw(st.lists(expressions(node_names), min_size=1, max_size=2))}]
    requests: dict = {}
    if draw(st.booleans()):
        requests["cpu"] = draw(cpu())
    if draw(st.booleans()):
        requests["memory"] = draw(memory())
    gpus = None if sometimes(draw, 5) else draw(count(0, 4))
    return {"selector": selector, "terms": terms, "tolerations": draw(st.lists(st.sampled_from(TOLERATIONS), max_size=2)) if sometimes(draw, 2) else [],
            "requests": requests, "gpus": gpus, "host_port": sometimes(draw, 8)}


def make_target(name: str, spec: dict) -> dict:
    p = copy.deepcopy(_PODS["exhausted"])
    p["metadata"].update({"name": name, "uid": f"uid-pod-{name}"})
    p["metadata"].pop("annotations", None)
    s = p["spec"]
    s.pop("nodeSelector", None)
    if spec["selector"]:
        s["nodeSelector"] = dict(spec["selector"])
    if spec["terms"] is not None:
        s["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": copy.deepcopy(spec["terms"])}}}
    s["tolerations"] = s["tolerations"] + copy.deepcopy(spec["tolerations"])
    res: dict = {"requests": dict(spec["requests"])}
    if spec["gpus"] is not None:
        res["requests"][GPU] = spec["gpus"]
        res["limits"] = {GPU: spec["gpus"]}
    c = s["containers"][0]
    c["resources"] = res
    if spec["host_port"]:
        c["ports"] = [{"containerPort": 8080, "hostPort": 8080, "protocol": "TCP"}]
    return p


@st.composite
def bound_specs(draw: st.DrawFn, node_names: list[str], phases: list[str]) -> dict:
    where = draw(st.sampled_from(node_names + ["ghost-node"]))
    return {"node": where, "phase": draw(st.sampled_from(phases)), "cpu": draw(cpu()), "memory": draw(memory()),
            "gpus": draw(count(0, 4))}


def make_bound(name: str, spec: dict) -> dict:
    base = {"Running": "filler-a", "Pending": "filler-b", "Succeeded": "finished-job", "Failed": "finished-job"}[spec["phase"]]
    p = copy.deepcopy(_PODS[base])
    p["metadata"].update({"name": name, "uid": f"uid-pod-{name}"})
    p["metadata"].pop("annotations", None)
    p["spec"]["nodeName"] = spec["node"]
    p["spec"]["nodeSelector"] = {HOSTNAME: spec["node"]}
    p["spec"]["containers"][0]["resources"] = {"requests": {"cpu": spec["cpu"], "memory": spec["memory"], GPU: spec["gpus"]},
                                               "limits": {GPU: spec["gpus"]}}
    p["status"]["phase"] = spec["phase"]
    return p


@dataclass
class World:
    nodes: list[dict]
    targets: list[dict]
    bound: list[dict]

    def pods(self) -> list[dict]:
        return self.targets + self.bound


@st.composite
def worlds(draw: st.DrawFn, phases: tuple[str, ...] = ("Running", "Pending", "Succeeded", "Failed")) -> World:
    node_list = [] if sometimes(draw, 20) else draw(st.lists(node_specs(), min_size=1, max_size=4))
    names = [f"node-{i}" for i in range(len(node_list))]
    nodes = [make_node(n, s) for n, s in zip(names, node_list)]
    targets = [make_target(f"target-{i}", s) for i, s in enumerate(draw(st.lists(target_specs(names), min_size=1, max_size=4)))]
    bound = [make_bound(f"bound-{i}", s) for i, s in enumerate(draw(st.lists(bound_specs(names, list(phases)), max_size=4)))]
    return World(nodes, targets, bound)


# -- running -------------------------------------------------------------------------------------------

def verdicts_of(nodes: list[dict], pods: list[dict]) -> dict[str, Any]:
    """{key: Verdict} from the in-process pipeline on a bare bundle written to a fresh temporary directory.
    Every world any property draws (and every changed world it makes) is checked here for the first three
    properties of the module docstring: no exception, no problem, vocabulary words, narrowing funnels."""
    with tempfile.TemporaryDirectory(prefix="props-") as d:
        root = Path(d)
        (root / "pods.json").write_text(json.dumps(kubectl_list(pods)))
        (root / "nodes.json").write_text(json.dumps(kubectl_list(nodes)))
        analysis = analyse(root, Options())
        assert analysis.problems == [], analysis.problems  # generated bundles are valid by construction
        verdicts = by_key(analysis)
    pending = {f"{p['metadata']['namespace']}/{p['metadata']['name']}" for p in pods
               if not p["spec"].get("nodeName") and p["status"].get("phase") == "Pending"}
    assert pending <= set(verdicts)  # every unbound Pending pod is answered
    for v in verdicts.values():
        assert v.word in words.VOCABULARY, v.word
        event(f"word {v.word}")  # --hypothesis-show-statistics shows how often each word was reached
        check_funnel(v)
    return verdicts


def words_by_key(verdicts: dict[str, Any]) -> dict[str, str]:
    return {k: v.word for k, v in verdicts.items()}


def check_funnel(v: Any) -> None:
    if v.funnel is not None:
        assert_funnel_consistent(v)


# -- an independent reading of nodeSelector + required node affinity, to build a node that fits ---------------

def _requirement(expr: dict, labels: dict[str, str]) -> bool:
    key, op, values = expr["key"], expr["operator"], expr.get("values") or []
    if op == "In":
        return key in labels and labels[key] in values
    if op == "NotIn":
        return key not in labels or labels[key] not in values
    if op == "Exists":
        return key in labels
    return key not in labels  # DoesNotExist


def satisfies(labels: dict[str, str], selector: dict[str, str], terms: list[dict] | None) -> bool:
    if any(labels.get(k) != v for k, v in selector.items()):
        return False
    return terms is None or any(t["matchExpressions"] and all(_requirement(e, labels) for e in t["matchExpressions"]) for t in terms)


def labels_that_fit(pod: dict, name: str) -> dict[str, str] | None:
    """Labels satisfying the pod's nodeSelector and required affinity (with the node's own hostname label
    when that does not break them), or None when they contradict each other."""
    spec = pod["spec"]
    selector = spec.get("nodeSelector") or {}
    labels = dict(selector)
    terms = (((spec.get("affinity") or {}).get("nodeAffinity") or {}).get("requiredDuringSchedulingIgnoredDuringExecution") or {}).get("nodeSelectorTerms")
    for term in terms or ():
        for e in term["matchExpressions"]:
            if e["operator"] == "In" and e["key"] not in labels:
                labels[e["key"]] = e["values"][0]
            elif e["operator"] == "Exists" and e["key"] not in labels:
                labels[e["key"]] = "present"
    with_host = {HOSTNAME: name, **labels}
    for candidate in (with_host, labels):
        if satisfies(candidate, selector, terms):
            return candidate
    return None


def fitting_node(pod: dict, name: str) -> dict | None:
    labels = labels_that_fit(pod, name)
    if labels is None:
        return None  # nodeSelector and affinity contradict each other: no node can ever fit
    n = copy.deepcopy(_NODES["gpu-ok"])
    n["metadata"].update({"name": name, "uid": f"uid-node-{name}", "labels": labels})
    n["spec"] = {}
    ample = {"cpu": "1000", "memory": "100Ti", "pods": "1000", "ephemeral-storage": "100Ti"}
    for c in pod["spec"]["containers"]:
        for section in ("requests", "limits"):
            for r in (c.get("resources") or {}).get(section) or {}:
                ample.setdefault(r, "1000")
    n["status"]["capacity"] = dict(ample)
    n["status"]["allocatable"] = dict(ample)
    return n


# -- the properties ----------------------------------------------------------------------------------------

@SETTINGS
@given(worlds())
def test_adding_a_node_that_fits_turns_a_funnel_answer_into_fits_now(world: World) -> None:
    before = verdicts_of(world.nodes, world.pods())
    for pod in world.targets:
        key = f"lab/{pod['metadata']['name']}"
        if before[key].word not in FUNNEL_WORDS:
            continue
        extra = fitting_node(pod, "fits-here")
        if extra is None:
            continue
        event(f"checked {before[key].word}")
        after = verdicts_of(world.nodes + [extra], world.pods())
        # Host ports are modelled (NodePorts): the new node holds no pod, so its ports are free too.
        assert after[key].word == words.FITS_NOW, (before[key].word, after[key].reason)
        assert after[key].funnel is not None and "fits-here" in after[key].evidence["fits_on"]


@SETTINGS
@given(worlds(), st.data())
def test_terminated_pods_change_no_answer(world: World, data: st.DataObject) -> None:
    before = words_by_key(verdicts_of(world.nodes, world.pods()))
    names = [n["metadata"]["name"] for n in world.nodes]
    extra = data.draw(st.lists(bound_specs(names, ["Succeeded", "Failed"]), min_size=1, max_size=4))
    finished = [make_bound(f"finished-{i}", s) for i, s in enumerate(extra)]
    after = words_by_key(verdicts_of(world.nodes, world.pods() + finished))
    assert after == before


def _rename(world: World, mapping: dict[str, str]) -> World:
    def host(value: str) -> str:
        return mapping.get(value, value)

    nodes = copy.deepcopy(world.nodes)
    for n in nodes:
        n["metadata"]["name"] = host(n["metadata"]["name"])
        n["metadata"]["labels"][HOSTNAME] = host(n["metadata"]["labels"][HOSTNAME])
    pods = copy.deepcopy(world.pods())
    for p in pods:
        s = p["spec"]
        if s.get("nodeName"):
            s["nodeName"] = host(s["nodeName"])
        if HOSTNAME in (s.get("nodeSelector") or {}):
            s["nodeSelector"][HOSTNAME] = host(s["nodeSelector"][HOSTNAME])
        for term in (((s.get("affinity") or {}).get("nodeAffinity") or {}).get("requiredDuringSchedulingIgnoredDuringExecution") or {}).get("nodeSelectorTerms") or ():
            for e in term["matchExpressions"]:
                if e["key"] == HOSTNAME and "values" in e:
                    e["values"] = [host(v) for v in e["values"]]
    return World(nodes, pods[: len(world.targets)], pods[len(world.targets):])


@SETTINGS
@given(worlds(), st.data())
def test_renaming_nodes_changes_no_answer(world: World, data: st.DataObject) -> None:
    names = [n["metadata"]["name"] for n in world.nodes]
    new = data.draw(st.lists(st.from_regex(r"[a-z][a-z0-9-]{0,20}[a-z0-9]", fullmatch=True), min_size=len(names),
                             max_size=len(names), unique=True).filter(lambda xs: not set(xs) & {"ghost-node", "nowhere"}))
    mapping = dict(zip(names, new))
    before = words_by_key(verdicts_of(world.nodes, world.pods()))
    renamed = _rename(world, mapping)
    assert words_by_key(verdicts_of(renamed.nodes, renamed.pods())) == before
