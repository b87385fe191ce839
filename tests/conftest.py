"""Shared fixtures for the classifier tests: real kubectl objects from the lab bundle, changed per case.

Fixture rule: every object a test writes starts as a deep copy of an object in
dumps/lab-seven-states-v1.36/ (real `kubectl -o json` output of a real v1.36
cluster) and changes only what the case needs. Bundles are bare directories
(pods.json, nodes.json, … as kubectl Lists); a file is omitted when its
argument is None.

Helpers:
  lab_pod / lab_node / lab_quota / lab_runtimeclass / lab_event   deep copies of lab objects
  lab_items(kind), lab_manifest(41|42), lab_attempt(41|42)         whole lab files, manifests, stored attempts
  gpu_pod, plain_pod, bound_pod, container                          pods: pending GPU / ordinary, bound, containers
  gpu_node, renamed_node, cordon                                    nodes: renamed lab nodes, changed per case
  quota, runtimeclass, failed_scheduling_event, set_message         the lab's other objects, re-aimed
  make_bundle(tmp_path, pods=…, nodes=…, …)                      write a bundle directory (None: file left out)
  copy_lab(tmp_path, drop=…, edit=…, attempts=…)                  the lab's JSON files (no manifest.json)
  write_manifest(dir, doc)                                          a --manifest file (YAML or JSON)
  analyse_dir(path, **options) -> {key: Verdict}                  the pipeline in-process
  words_of(path, **options) -> {key: word}; verdict(path, key)
  run_cli(*args, check=…) -> CompletedProcess                      `gpu-triage …` in-process (helpers.py)
  cli_words(path, *args) -> list[(key, word)]                      `analyze PATH -o words`, parsed strictly
  funnel_table(v), assert_funnel_consistent(v)                      the funnel as data; counts never increase

Fixtures:
  kube                                                              a stand-in cluster for the collector (stand_in.py)
  kubectl                                                           the real kubectl client (skipped without it; CI fails)
  generated, generated_large                                        generated bundles made once per session (read only)
"""

from __future__ import annotations

import copy
import json
import os
import re
import shutil
import uuid
from pathlib import Path
from typing import Any, Iterable

import pytest
import yaml

from analyzer.pipeline import Options, analyse

from helpers import LAB, generate  # one definition of the paths (helpers.py)
from helpers import run_cli
from stand_in import Kube
LAB_MANIFESTS = LAB / "manifests"  # the lab's own pod manifests (41, 42 are the attempts)

# The lab's answers, the words a user of the lab bundle is promised: the literal words of causes.md.
LAB_WORDS = {
    "lab/allocatable-zero": "allocatable-zero",
    "lab/exhausted": "exhausted",
    "lab/filler-b": "node-side",
    "lab/no-gpu-node": "no-gpu-node",
    "lab/no-gpu-request": "no-gpu-request",
    "lab/selector-mismatch": "selector-mismatch",
    "lab/taint": "untolerated-taint",
}
# The two attempts stored in the lab bundle (attempts/*.json), also given as manifests/41 and 42.
LAB_ATTEMPT_WORDS = {
    "quota-lab/quota-exceeded": "quota-exceeded",
    "lab/runtimeclass-missing": "no-runtimeclass",
}

# Every word of causes.md (version 4, 37 rows), spelled out in its order (a renamed constant must fail a test).
ORDER_WORDS = (
    "no-runtimeclass", "invalid-spec", "limit-range", "admission-denied", "admission-unavailable", "quota-exceeded",
    "no-gpu-request", "queue-misconfigured", "queue-quota", "queue-topology", "scheduling-gated", "no-scheduler",
    "image-pull", "volume-mount", "numa-unaligned", "node-runtime", "node-side", "no-resourceclaim", "no-deviceclass",
    "no-volumeclaim", "volume-unbound", "selector-mismatch", "resource-name-mismatch", "no-gpu-node",
    "device-selector-mismatch", "volume-node-conflict", "cordoned", "node-unhealthy", "untolerated-taint",
    "allocatable-zero", "pod-affinity", "topology-spread", "exhausted", "scaling-up", "scale-up-blocked",
    "unclassified", "fits-now",
)
EXTRA_WORDS = ("running", "insufficient-evidence")


# -- the lab objects ------------------------------------------------------------------------

def _lab_items(kind: str) -> list[dict]:
    return json.loads((LAB / f"{kind}.json").read_text())["items"]


_LAB: dict[str, list[dict]] = {k: _lab_items(k) for k in ("pods", "nodes", "resourcequotas", "runtimeclasses", "events", "namespaces")}
LAB_VERSION = json.loads((LAB / "version.json").read_text())


def lab_items(kind: str) -> list[dict]:
    """Deep copies of every item of one lab file."""
    return copy.deepcopy(_LAB[kind])


def _find(kind: str, name: str) -> dict:
    for item in _LAB[kind]:
        if item["metadata"]["name"] == name:
            return copy.deepcopy(item)
    raise KeyError(f"no {kind} named {name} in the lab bundle")


def lab_pod(name: str) -> dict:
    return _find("pods", name)


def lab_node(name: str) -> dict:
    return _find("nodes", name)


def lab_quota(name: str = "gpu-quota") -> dict:
    return _find("resourcequotas", name)


def lab_runtimeclass(name: str = "standard") -> dict:
    return _find("runtimeclasses", name)


def lab_event(name_prefix: str) -> dict:
    for item in _LAB["events"]:
        if item["metadata"]["name"].startswith(name_prefix):
            return copy.deepcopy(item)
    raise KeyError(name_prefix)


def _uid() -> str:
    return str(uuid.uuid4())


# -- nodes -----------------------------------------------------------------------------------

def renamed_node(base: str, name: str) -> dict:
    """A lab node under another name (metadata.name, the hostname label, the Hostname address, uid)."""
    node = lab_node(base)
    node["metadata"]["name"] = name
    node["metadata"]["uid"] = _uid()
    node["metadata"]["labels"]["kubernetes.io/hostname"] = name
    for a in node["status"].get("addresses") or ():
        if a["type"] == "Hostname":
            a["address"] = name
    return node


def gpu_node(name: str, *, base: str = "gpu-ok", gpus: str | None = None, alloc_gpus: str | None = None,
             cpu: str | None = None, memory: str | None = None, pods: str | None = None,
             labels: dict[str, str] | None = None, taints: list[dict] | None = None,
             unschedulable: bool | None = None, resource: str = "nvidia.com/gpu") -> dict:
    """A renamed lab node; capacity/allocatable changed only where asked (allocatable follows capacity
    unless alloc_gpus says otherwise)."""
    node = renamed_node(base, name)
    st = node["status"]
    if gpus is not None:
        st["capacity"][resource] = gpus
        st["allocatable"][resource] = gpus
    if alloc_gpus is not None:
        st["allocatable"][resource] = alloc_gpus
    for key, value in (("cpu", cpu), ("memory", memory), ("pods", pods)):
        if value is not None:
            st["capacity"][key] = value
            st["allocatable"][key] = value
    if labels:
        node["metadata"]["labels"].update(labels)
    if taints is not None:
        node["spec"]["taints"] = taints
    if unschedulable is not None:
        node["spec"]["unschedulable"] = unschedulable
    return node


def cordon(node: dict) -> dict:
    """What `kubectl cordon` plus the node controller leave on a node (observed.md, Objects)."""
    node["spec"]["unschedulable"] = True
    taints = node["spec"].setdefault("taints", [])
    taints.append({"effect": "NoSchedule", "key": "node.kubernetes.io/unschedulable", "timeAdded": "2026-11-29T17:20:00Z"})
    return node


GPU_TAINT = {"effect": "NoSchedule", "key": "nvidia.com/gpu", "value": "present"}  # the lab's gpu-tainted node


# -- pods --------------------------------------------------------------------------------------

def _rename_pod(pod: dict, name: str, namespace: str | None) -> dict:
    meta = pod["metadata"]
    meta["name"] = name
    meta["uid"] = _uid()
    meta.get("annotations", {}).pop("kubectl.kubernetes.io/last-applied-configuration", None)
    if namespace is not None:
        meta["namespace"] = namespace
    return pod


def set_resources(container: dict, requests: dict | None = None, limits: dict | None = None) -> dict:
    res: dict = {}
    if requests:
        res["requests"] = dict(requests)
    if limits:
        res["limits"] = dict(limits)
    container["resources"] = res
    return container


def gpu_pod(name: str, *, gpus: int | str | None = 1, namespace: str = "lab", node_selector: dict | None = None,
            cpu: str | None = "500m", memory: str | None = "1Gi", resource: str = "nvidia.com/gpu", **spec: Any) -> dict:
    """The lab's `exhausted` pod (Pending, PodScheduled False Unschedulable) renamed; its nodeSelector
    (hostname gpu-ok) replaced by `node_selector` (none by default); spec keys in **spec set as given."""
    pod = _rename_pod(lab_pod("exhausted"), name, namespace)
    s = pod["spec"]
    s.pop("nodeSelector", None)
    if node_selector:
        s["nodeSelector"] = dict(node_selector)
    set_resources(s["containers"][0], *_amounts(cpu, memory, gpus, resource))
    s.update(spec)
    return pod


def _amounts(cpu: str | None, memory: str | None, gpus: int | str | None, resource: str) -> tuple[dict, dict]:
    """(requests, limits) as a user writes them: cpu/memory requested, the accelerator as request = limit."""
    requests = {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v is not None}
    limits: dict = {}
    if gpus is not None:
        requests[resource] = limits[resource] = str(gpus)
    return requests, limits


def plain_pod(name: str, *, namespace: str = "lab", cpu: str | None = "500m", memory: str | None = "1Gi",
              **spec: Any) -> dict:
    """An ordinary pod (no GPU intent): the lab's `no-gpu-request` pod without its GPU signals
    (runtimeClassName, nvidia nodeSelector, nodeName), Pending and unschedulable like `exhausted`."""
    pod = _rename_pod(lab_pod("no-gpu-request"), name, namespace)
    s = pod["spec"]
    for key in ("runtimeClassName", "nodeSelector", "nodeName"):
        s.pop(key, None)
    c = s["containers"][0]
    c["name"] = "app"
    c["image"] = "registry.k8s.io/pause:3.10"
    requests = {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v is not None}
    set_resources(c, requests or None)
    pod["status"] = copy.deepcopy(lab_pod("exhausted")["status"])
    s.update(spec)
    return pod


def bound_pod(name: str, node: str, *, gpus: int | str | None = 1, phase: str = "Running", namespace: str = "lab",
              cpu: str | None = "500m", memory: str | None = "1Gi", resource: str = "nvidia.com/gpu") -> dict:
    """A pod bound to `node`: lab filler-a (Running), finished-job (Succeeded/Failed) or filler-b (Pending)."""
    base = {"Running": "filler-a", "Succeeded": "finished-job", "Failed": "finished-job", "Pending": "filler-b"}[phase]
    pod = _rename_pod(lab_pod(base), name, namespace)
    s = pod["spec"]
    s["nodeName"] = node
    s["nodeSelector"] = {"kubernetes.io/hostname": node}
    set_resources(s["containers"][0], *_amounts(cpu, memory, gpus, resource))
    if phase == "Failed":
        pod["status"]["phase"] = "Failed"
        term = pod["status"]["containerStatuses"][0]["state"]["terminated"]
        term.update({"exitCode": 1, "reason": "Error"})
    return pod


def container(name: str, *, requests: dict | None = None, limits: dict | None = None, restart_policy: str | None = None,
              **extra: Any) -> dict:
    """A container like the lab's `cuda` container, with other resources."""
    c = copy.deepcopy(lab_pod("exhausted")["spec"]["containers"][0])
    c["name"] = name
    c.pop("volumeMounts", None)
    set_resources(c, requests, limits)
    if restart_policy:
        c["restartPolicy"] = restart_policy
    c.update(extra)
    return c


def set_message(pod: dict, message: str | None) -> dict:
    """Rewrite (or, with None, drop) the message of the pod's PodScheduled=False condition."""
    for c in pod["status"].get("conditions") or ():
        if c["type"] == "PodScheduled":
            if message is None:
                c.pop("message", None)
            else:
                c["message"] = message
    return pod


def failed_scheduling_event(pod: dict, message: str, *, at: str = "2026-11-29T17:18:00.000000Z") -> dict:
    """A scheduler FailedScheduling event for `pod`, shaped like the lab's (eventTime, count null, source {})."""
    e = lab_event("exhausted.")
    e["involvedObject"].update({"name": pod["metadata"]["name"], "namespace": pod["metadata"]["namespace"],
                                "uid": pod["metadata"]["uid"]})
    e["metadata"].update({"name": f"{pod['metadata']['name']}.{uuid.uuid4().hex[:16]}",
                          "namespace": pod["metadata"]["namespace"], "uid": _uid()})
    e["message"] = message
    e["eventTime"] = at
    return e


# -- quotas and runtime classes -----------------------------------------------------------------

def quota(name: str, namespace: str, hard: dict, used: dict | None = None, **spec: Any) -> dict:
    """The lab's gpu-quota, renamed, with other hard/used (status.hard follows spec.hard)."""
    q = lab_quota()
    q["metadata"].update({"name": name, "namespace": namespace, "uid": _uid()})
    q["metadata"].pop("annotations", None)
    q["spec"] = {"hard": dict(hard), **spec}
    q["status"] = {"hard": dict(hard), "used": dict(used if used is not None else {k: "0" for k in hard})}
    return q


def runtimeclass(name: str, handler: str) -> dict:
    rc = lab_runtimeclass()
    rc["metadata"].update({"name": name, "uid": _uid()})
    rc["metadata"].pop("annotations", None)
    rc["handler"] = handler
    return rc


# -- bundles ----------------------------------------------------------------------------------

def kubectl_list(items: Iterable[dict]) -> dict:
    return {"apiVersion": "v1", "items": list(items), "kind": "List", "metadata": {"resourceVersion": ""}}


def make_bundle(tmp_path: Path, *, name: str = "bundle", pods: list[dict] | None = None, nodes: list[dict] | None = None,
                quotas: list[dict] | None = None, runtimeclasses: list[dict] | None = None,
                events: list[dict] | None = None, replicasets: list[dict] | None = None, jobs: list[dict] | None = None,
                statefulsets: list[dict] | None = None, daemonsets: list[dict] | None = None,
                namespaces: list[dict] | None = None, version: dict | None = None,
                attempts: dict[str, dict] | None = None, extra: dict[str, list[dict]] | None = None) -> Path:
    """A bare bundle directory. Each list argument that is None leaves its file out of the bundle; `extra` maps
    any other kind's name (`limitranges`) to its items."""
    root = tmp_path / name
    root.mkdir(parents=True)
    files = {"pods": pods, "nodes": nodes, "resourcequotas": quotas, "runtimeclasses": runtimeclasses,
             "events": events, "replicasets": replicasets, "jobs": jobs, "statefulsets": statefulsets,
             "daemonsets": daemonsets, "namespaces": namespaces, **(extra or {})}
    for kind, items in files.items():
        if items is not None:
            (root / f"{kind}.json").write_text(json.dumps(kubectl_list(items), indent=4))
    if version is not None:
        (root / "version.json").write_text(json.dumps(version, indent=2))
    if attempts:
        (root / "attempts").mkdir()
        for fname, doc in attempts.items():
            (root / "attempts" / fname).write_text(json.dumps(doc, indent=2))
    return root


def copy_lab(tmp_path: Path, *, name: str = "lab", attempts: bool = False, drop: Iterable[str] = (),
             edit: dict[str, Any] | None = None) -> Path:
    """The lab's JSON files (no manifest.json; attempts/ only when asked); `drop` leaves kinds out;
    `edit` maps a kind to a function(items) -> items applied before writing."""
    root = tmp_path / name
    root.mkdir(parents=True)
    for kind in _LAB:
        if kind in drop:
            continue
        items = lab_items(kind)
        if edit and kind in edit:
            items = edit[kind](items)
        (root / f"{kind}.json").write_text(json.dumps(kubectl_list(items), indent=4))
    if "version" not in drop:
        shutil.copy(LAB / "version.json", root / "version.json")
    if attempts:
        shutil.copytree(LAB / "attempts", root / "attempts")
    return root


def lab_manifest(number: int) -> dict:
    """The lab's pod manifest manifests/<number>-*.yaml, parsed (what the person ran `kubectl apply -f` on)."""
    [path] = LAB_MANIFESTS.glob(f"{number}-*.yaml")
    return yaml.safe_load(path.read_text())


def write_manifest(directory: Path, doc: dict, name: str | None = None, *, as_json: bool = False) -> Path:
    """Write a pod manifest (YAML by default) for --manifest."""
    directory.mkdir(parents=True, exist_ok=True)
    fname = name or f"{doc['metadata']['name']}.{'json' if as_json else 'yaml'}"
    path = directory / fname
    path.write_text(json.dumps(doc, indent=2) if as_json else yaml.safe_dump(doc, sort_keys=False))
    return path


def lab_attempt(number: int) -> dict:
    path = {41: "41-pod-quota-exceeded.json", 42: "42-pod-runtimeclass-missing.json"}[number]
    return json.loads((LAB / "attempts" / path).read_text())


# -- running the analyzer --------------------------------------------------------------------------

def _options(manifests: Iterable[Path | str] = (), gpu_pods: Iterable[str] = (), resources: Iterable[str] = (),
             namespaces: Iterable[str] = ()) -> Options:
    return Options(namespaces=tuple(namespaces), manifests=tuple(Path(m) for m in manifests), gpu_pods=tuple(gpu_pods),
                   resources=tuple(resources))


def analyse_dir(path: Path | str, **options: Any) -> dict:
    """{key: Verdict} for every target, in the pipeline's order (dicts keep it)."""
    return by_key(analyse(path, _options(**options)))


def by_key(analysis) -> dict:
    """{key: Verdict} of an analysis, asserting one verdict per key; closes the bundle."""
    try:
        out: dict = {}
        for v in analysis.verdicts:
            assert v.key not in out, f"two verdicts for {v.key}"
            out[v.key] = v
        return out
    finally:
        analysis.bundle.close()


def words_of(path: Path | str, **options: Any) -> dict[str, str]:
    return {k: v.word for k, v in analyse_dir(path, **options).items()}


def verdict(path: Path | str, key: str, **options: Any):
    found = analyse_dir(path, **options)
    assert key in found, f"{key} is not a target; targets: {sorted(found)}"
    return found[key]


WORDS_LINE = re.compile(r"^(?P<key>[^\t/\s]+/(?:[a-z]+/)?[^\t/\s]+)\t(?P<word>[a-z]+(?:-[a-z]+)*)$")


def cli_words(path: Path | str, *args: str | Path, status: int = 0) -> list[tuple[str, str]]:
    """`analyze PATH -o words …`: every stdout line must be `ns/name<TAB>word` (owners ns/kind/name).
    `status`: the expected exit status (2 when the bundle is partial, e.g. nodes.json missing)."""
    proc = run_cli("analyze", path, "-o", "words", *args)
    assert proc.returncode == status, f"exit {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    out = []
    assert proc.stdout.endswith("\n") or proc.stdout == ""
    for line in proc.stdout.splitlines():
        m = WORDS_LINE.match(line)
        assert m, f"not a words line: {line!r}"
        out.append((m.group("key"), m.group("word")))
    return out


# -- assertions shared by the funnel tests -----------------------------------------------------------

def funnel_table(v) -> list[tuple[str, int, int, dict[str, str]]]:
    """(stage, nodes in, nodes out, {removed node: reason}) per stage of a verdict's funnel."""
    assert v.funnel is not None, f"{v.key} ({v.word}) has no funnel"
    return [(s["stage"], s["nodes_in"], s["nodes_out"], {n: g["reason"] for g in s["removed"] for n in g["nodes"]})
            for s in v.funnel]


def stage_of(v, name: str) -> tuple[str, int, int, dict[str, str]]:
    """One stage of a verdict's funnel, by name: (stage, nodes in, nodes out, {removed node: reason})."""
    found = [row for row in funnel_table(v) if row[0] == name]
    assert found, f"{v.key}: no stage {name!r} in {[row[0] for row in funnel_table(v)]}"
    return found[0]


def assert_funnel_consistent(v) -> None:
    """Counts never increase stage to stage; in - out == removed; stage k starts where k-1 ended."""
    stages = funnel_table(v)
    previous_out = None
    for name, n_in, n_out, removed in stages:
        assert n_out <= n_in, f"{name}: {n_in} -> {n_out}"
        assert n_in - n_out == len(removed), f"{name}: {n_in} -> {n_out} but {len(removed)} removed"
        if previous_out is not None:
            assert n_in == previous_out, f"{name} starts with {n_in}, the stage before ended with {previous_out}"
        previous_out = n_out


# -- fixtures ----------------------------------------------------------------------------------------

@pytest.fixture(autouse=True)
def _no_inherited_width(monkeypatch: pytest.MonkeyPatch) -> None:
    """xdist's workers inherit COLUMNS=80 and LINES=24, a plain run none: the width a test sees is the one it sets."""
    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.delenv("LINES", raising=False)


@pytest.fixture(scope="session")
def kubectl() -> str:
    """The real kubectl client (the replay tests talk to `gpu-triage serve` through it)."""
    found = shutil.which("kubectl")
    if found is None:
        message = "kubectl is not on PATH: the replay tests run the real kubectl client (v1.32 expected)"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(message + "; CI must install it", pytrace=False)
        pytest.skip(message)
    return found


@pytest.fixture
def kube(tmp_path: Path) -> Kube:
    """A stand-in cluster replaying the lab for scripts/collect.py (tests/stand_in.py)."""
    return Kube(tmp_path)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--regenerate-expected", action="store_true",
                     help="rewrite tests/expected/*.json from the analyzer as it is now (tests/test_expected_output.py)")


# -- generated bundles, made once per session (tests only read them; copy_bundle() before changing one) ----------

@pytest.fixture(scope="session")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """scripts/generate_bundle.py, 80 nodes / 2,500 pods, seed 1, with a stuck DaemonSet: every pool of the
    generator (GPU, MIG, no-plugin, allocatable-zero, tainted, cordoned nodes) and every pending-pod scenario."""
    return generate(tmp_path_factory.mktemp("gen") / "b80", nodes=80, pods=2500, seed=1, extra=("--stuck-daemonset",))


@pytest.fixture(scope="session")
def generated_large(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """500 nodes / 15,000 pods, seed 1: large enough to be read streamed (pods.json above streaming.SPLIT_MIN_ITEMS,
    a ticket report that must be shortened). Only the tests about size use it."""
    return generate(tmp_path_factory.mktemp("gen") / "b500", nodes=500, pods=15000, seed=1)
