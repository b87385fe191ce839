"""scripts/generate_bundle.py: a synthetic bundle that is deterministic, valid, consistent, and whose
intended cause words (--truth) are exactly what `python -m analyzer analyze -o words` answers.

Small sizes only (the large runs are measured by hand, see the generator's docstring). The checks of
consistency use the analyzer's own quantity and request arithmetic, not the generator's, so the two
stay independent.
"""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from analyzer.model.podspec import effective_requests, quota_usage
from analyzer.model.quantity import parse, scheduler_units

from helpers import GENERATOR, generate, run_cli

from analyzer.bundle.catalog import KINDS as CATALOG, MAY_BE_UNSERVED

MARKER = "REDACTED-BY-GPU-TRIAGE"
# The generator writes every kind of the catalog except those a cluster may not serve (DRA, queues, the autoscalers'
# CRDs) and cluster-autoscaler's status: it models device-plugin clusters without an autoscaler.
# The admission kinds come with --admission only (tests/test_generate_admission.py).
ADMISSION_ONLY = ("limitranges", "validatingwebhookconfigurations", "mutatingwebhookconfigurations",
                  "validatingadmissionpolicies", "validatingadmissionpolicybindings", "endpointslices")
LIST_FILES = tuple(k.name for k in CATALOG if k.group not in MAY_BE_UNSERVED and k.only is None
                   and k.name not in ADMISSION_ONLY)
POD_WORDS = ("no-gpu-request", "scheduling-gated", "image-pull", "node-side", "volume-unbound", "selector-mismatch",
             "resource-name-mismatch", "volume-node-conflict", "cordoned", "untolerated-taint", "no-gpu-node", "allocatable-zero", "pod-affinity",
             "exhausted", "unclassified", "fits-now")
GPU = "nvidia.com/gpu"


def load(bundle: Path, kind: str) -> list[dict]:
    return json.loads((bundle / f"{kind}.json").read_text())["items"]


@pytest.fixture(scope="module")
def small(tmp_path_factory) -> tuple[Path, Path]:
    """20 nodes / 300 pods, seed 1, with its truth."""
    root = tmp_path_factory.mktemp("gen")
    generate(root / "b", nodes=20, pods=300, seed=1, truth=root / "truth.tsv")
    return root / "b", root / "truth.tsv"


@pytest.fixture(scope="module")
def medium(tmp_path_factory) -> tuple[Path, Path]:
    """50 nodes / 1,000 pods, seed 7, with its truth."""
    root = tmp_path_factory.mktemp("gen")
    generate(root / "b", nodes=50, pods=1000, seed=7, truth=root / "truth.tsv")
    return root / "b", root / "truth.tsv"


def truth_of(path: Path) -> dict[str, str]:
    out = {}
    for line in path.read_text().splitlines():
        key, word = line.split("\t")
        out[key] = word
    return out


# -- determinism -----------------------------------------------------------------------------------

def test_same_seed_same_bytes_other_seed_other_bytes(small, tmp_path):
    bundle, truth = small
    generate(tmp_path / "again", nodes=20, pods=300, seed=1, truth=tmp_path / "again.tsv")
    generate(tmp_path / "other", nodes=20, pods=300, seed=2)
    names = sorted(p.name for p in bundle.iterdir())
    assert names == sorted(p.name for p in (tmp_path / "again").iterdir())
    for name in names:
        assert (bundle / name).read_bytes() == (tmp_path / "again" / name).read_bytes(), name
    assert truth.read_bytes() == (tmp_path / "again.tsv").read_bytes()
    for kind in ("pods", "nodes", "events", "manifest"):
        assert (bundle / f"{kind}.json").read_bytes() != (tmp_path / "other" / f"{kind}.json").read_bytes(), kind


def test_refuses_to_overwrite_without_force(small):
    bundle, _ = small
    result = subprocess.run([sys.executable, str(GENERATOR), "--nodes", "20", "--pods", "300", "--out", str(bundle)],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2 and "--force" in result.stderr


# -- format -----------------------------------------------------------------------------------------

def _kubectl_text(obj: object) -> str:
    """kubectl -o json: 4-space indent, keys sorted, Go's HTML escaping, final newline."""
    text = json.dumps(obj, indent=4, sort_keys=True, ensure_ascii=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026") + "\n"


def test_kubectl_list_shape_and_indentation(small):
    bundle, _ = small
    for kind in LIST_FILES:
        text = (bundle / f"{kind}.json").read_text()
        doc = json.loads(text)
        assert list(doc) == ["apiVersion", "items", "kind", "metadata"], kind
        assert doc["kind"] == "List" and doc["metadata"] == {"resourceVersion": ""}, kind
        assert text == _kubectl_text(doc), f"{kind}.json is not kubectl's exact layout"
    version = (bundle / "version.json").read_text()
    assert version == json.dumps(json.loads(version), indent=2) + "\n"  # kubectl version -o json: 2 spaces


def test_items_sorted_like_the_api_server(small):
    bundle, _ = small
    for kind in LIST_FILES:
        items = load(bundle, kind)
        keys = [(i["metadata"].get("namespace", ""), i["metadata"]["name"]) for i in items]
        assert keys == sorted(keys), kind
        assert len(set(keys)) == len(keys), kind


def test_manifest_matches_the_files(small):
    bundle, _ = small
    manifest = json.loads((bundle / "manifest.json").read_text())
    assert manifest["format"] == "gpu-triage/bundle" and manifest["formatVersion"] == 1
    assert manifest["redaction"]["enabled"] is True and manifest["redaction"]["marker"] == MARKER
    paths = [e["path"] for e in manifest["files"]]
    assert sorted(paths) == sorted([f"{k}.json" for k in LIST_FILES] + ["version.json"])
    totals = {"env-value": 0, "last-applied-configuration": 0}
    for e in manifest["files"]:
        data = (bundle / e["path"]).read_bytes()
        assert e["status"] == "ok" and e["exitStatus"] == 0 and e["stderr"] == ""
        assert e["bytes"] == len(data), e["path"]
        assert e["sha256"] == hashlib.sha256(data).hexdigest(), e["path"]
        assert e["command"][:2] in (["kubectl", "get"], ["kubectl", "version"])
        if e["path"] != "version.json":
            assert e["items"] == len(json.loads(data)["items"]), e["path"]
            text = data.decode()
            env = text.count(f'"value": "{MARKER}"')
            applied = text.count(f'"kubectl.kubernetes.io/last-applied-configuration": "{MARKER}"')
            assert e["redactions"] == {"env-value": env, "last-applied-configuration": applied}, e["path"]
            totals["env-value"] += env
            totals["last-applied-configuration"] += applied
    assert manifest["redaction"]["counts"] == totals
    assert totals["env-value"] > 0 and totals["last-applied-configuration"] > 0


def test_every_env_value_is_redacted(small):
    bundle, _ = small
    for kind in ("pods", "replicasets", "jobs", "statefulsets", "daemonsets"):
        for m in re.finditer(r'"value": "([^"]*)"', (bundle / f"{kind}.json").read_text()):
            # tolerations also have "value" (nvidia.com/gpu=present); env values hold only the marker
            assert m.group(1) in (MARKER, "present"), (kind, m.group(0))


def test_validate_exits_0(small):
    bundle, _ = small
    result = run_cli("validate", bundle)
    assert result.returncode == 0, result.stdout + result.stderr


# -- consistency ---------------------------------------------------------------------------------------

def test_bound_pods_name_existing_nodes_and_fit(small):
    bundle, _ = small
    nodes = {n["metadata"]["name"]: n for n in load(bundle, "nodes")}
    used: dict[str, dict[str, int]] = {name: {} for name in nodes}
    for p in load(bundle, "pods"):
        node = p["spec"].get("nodeName")
        if not node:
            assert p["status"]["phase"] == "Pending"
            continue
        assert node in nodes, (p["metadata"]["name"], node)
        if p["status"]["phase"] in ("Succeeded", "Failed"):
            continue  # terminated pods keep their nodeName and hold nothing
        u = used[node]
        for r, v in effective_requests(p["spec"]).items():
            u[r] = u.get(r, 0) + v
        u["pods"] = u.get("pods", 0) + 1
    deliberate = 0
    for name, node in nodes.items():
        alloc = {r: scheduler_units(r, v) for r, v in node["status"]["allocatable"].items()}
        cap = node["status"]["capacity"]
        for r, v in used[name].items():
            if v <= alloc.get(r, 0):
                continue
            # The one deliberate case: GPUs that went unhealthy (capacity > 0, allocatable 0) under a running pod.
            assert r.startswith("nvidia.com/") and alloc.get(r) == 0 and int(cap[r]) > 0, (name, r, v, alloc.get(r))
            deliberate += 1
    assert deliberate >= 1


def test_daemonset_pods_on_every_node(small):
    bundle, _ = small
    nodes = {n["metadata"]["name"] for n in load(bundle, "nodes")}
    per_ds: dict[str, set[str]] = {}
    for p in load(bundle, "pods"):
        refs = p["metadata"].get("ownerReferences") or []
        if refs and refs[0]["kind"] == "DaemonSet":
            per_ds.setdefault(refs[0]["name"], set()).add(p["spec"]["nodeName"])
    everywhere = [ds for ds, on in per_ds.items() if on == nodes]
    assert len(everywhere) >= 3
    for ds in load(bundle, "daemonsets"):
        st = ds["status"]
        assert st["desiredNumberScheduled"] == len(per_ds[ds["metadata"]["name"]])


def test_quota_used_is_the_sum_over_non_terminated_pods(small):
    bundle, _ = small
    pods = load(bundle, "pods")
    quotas = load(bundle, "resourcequotas")
    assert quotas
    for q in quotas:
        ns = q["metadata"]["namespace"]
        expected: dict[str, object] = {k: 0 for k in q["spec"]["hard"]}
        for p in pods:
            if p["metadata"]["namespace"] != ns or p["status"]["phase"] in ("Succeeded", "Failed"):
                continue
            for k, v in quota_usage(p["spec"]).items():
                if k in expected:
                    expected[k] += v
        for k, hard in q["spec"]["hard"].items():
            used = parse(q["status"]["used"][k])
            assert used == expected[k], (ns, q["metadata"]["name"], k, q["status"]["used"][k], expected[k])
            assert used <= parse(hard), (ns, k)


def test_refused_owners_and_their_events(small):
    bundle, truth = small
    words = truth_of(truth)
    events = load(bundle, "events")
    failed = [e for e in events if e["reason"] == "FailedCreate"]
    rs = {r["metadata"]["name"]: r for r in load(bundle, "replicasets")}
    jobs = {j["metadata"]["name"]: j for j in load(bundle, "jobs")}
    quota_rs = [k.split("/")[2] for k, w in words.items() if w == "quota-exceeded"]
    rc_jobs = [k.split("/")[2] for k, w in words.items() if w == "no-runtimeclass"]
    assert quota_rs and rc_jobs
    quota_re = re.compile(r'^(\(combined from similar events\): )?Error creating: pods "(?P<pod>[a-z0-9-]+)" is forbidden: '
                          r"exceeded quota: gpu-quota, requested: requests\.nvidia\.com/gpu=1, "
                          r"used: requests\.nvidia\.com/gpu=(?P<used>\d+), limited: requests\.nvidia\.com/gpu=(?P=used)$")
    for name in quota_rs:
        r = rs[name]
        assert r["status"]["replicas"] < r["spec"]["replicas"]
        mine = [e for e in failed if e["involvedObject"]["name"] == name]
        assert len(mine) >= 2
        for e in mine:
            m = quota_re.match(e["message"])
            assert m and m.group("pod").startswith(name + "-"), e["message"]
            assert e["count"] >= 1 and e["eventTime"] is None and e["source"] == {"component": "replicaset-controller"}
        assert r["status"]["conditions"][0]["reason"] == "FailedCreate"
    for name in rc_jobs:
        j = jobs[name]
        assert (j["status"].get("active") or 0) < j["spec"]["parallelism"]
        mine = [e for e in failed if e["involvedObject"]["name"] == name]
        assert [e["message"] for e in mine] == [f'Error creating: pods "{name}-" is forbidden: pod rejected: RuntimeClass "nvidia" not found']
        assert mine[0]["count"] > 1
        assert j["spec"]["template"]["spec"]["runtimeClassName"] == "nvidia"
    assert "nvidia" not in {rc["metadata"]["name"] for rc in load(bundle, "runtimeclasses")}


def test_pending_pods_carry_the_scheduler_word(small):
    """Unscheduled pods: PodScheduled False (Unschedulable or SchedulingGated, none for an unserved scheduler);
    FailedScheduling events in the v1.36 shape (eventTime, no count, null timestamps, empty source)."""
    bundle, truth = small
    words = truth_of(truth)
    events = {(e["involvedObject"].get("namespace"), e["involvedObject"]["name"]): e
              for e in load(bundle, "events") if e["reason"] == "FailedScheduling"}
    seen = set()
    for p in load(bundle, "pods"):
        key = f"{p['metadata']['namespace']}/{p['metadata']['name']}"
        if p["status"]["phase"] != "Pending":
            assert key not in words
            continue
        assert key in words, key
        if p["spec"].get("nodeName"):
            continue
        conds = [c for c in p["status"].get("conditions") or [] if c["type"] == "PodScheduled"]
        if p["spec"]["schedulerName"] != "default-scheduler":
            assert not conds
            continue
        assert conds and conds[0]["status"] == "False", key
        seen.add(conds[0]["reason"])
        if conds[0]["reason"] == "Unschedulable":
            e = events[(p["metadata"]["namespace"], p["metadata"]["name"])]
            assert e["message"] == conds[0]["message"] and e["message"].startswith("0/20 nodes are available: ")
            assert e["eventTime"] and e["firstTimestamp"] is None and e["lastTimestamp"] is None
            assert "count" not in e and e["source"] == {} and e["reportingComponent"] == "default-scheduler"
    assert seen == {"Unschedulable", "SchedulingGated"}


def test_nodes_gpu_pools_and_special_nodes(small):
    bundle, _ = small
    nodes = load(bundle, "nodes")
    gpu = [n for n in nodes if n["metadata"]["labels"].get("nvidia.com/gpu.present") == "true"]
    assert {n["status"]["capacity"].get(GPU) for n in gpu} >= {"8", "4", None}
    assert any("nvidia.com/mig-1g.10gb" in n["status"]["capacity"] for n in gpu)
    assert any(t["key"] == GPU and t["value"] == "present" for n in gpu for t in n["spec"].get("taints", []))
    assert any(not n["spec"].get("taints") for n in gpu)  # an untainted GPU pool too
    cordoned = [n for n in nodes if n["spec"].get("unschedulable")]
    assert cordoned and all(any(t["key"] == "node.kubernetes.io/unschedulable" and t["effect"] == "NoSchedule"
                                for t in n["spec"]["taints"]) for n in cordoned)
    assert any(GPU in n["status"]["capacity"] and n["status"]["allocatable"][GPU] == "0" for n in gpu)
    for n in gpu:
        assert "node.kubernetes.io/instance-type" in n["metadata"]["labels"] and "nvidia.com/gpu.product" in n["metadata"]["labels"]


def test_workload_variety(small):
    bundle, _ = small
    pods = load(bundle, "pods")
    kinds = {(p["metadata"].get("ownerReferences") or [{"kind": None}])[0]["kind"] for p in pods}
    assert kinds >= {"ReplicaSet", "Job", "StatefulSet", "DaemonSet", None}
    phases = {p["status"]["phase"] for p in pods}
    assert phases == {"Running", "Pending", "Succeeded", "Failed"}
    assert all(p["spec"].get("nodeName") for p in pods if p["status"]["phase"] in ("Succeeded", "Failed"))
    assert any(c.get("restartPolicy") == "Always" for p in pods for c in p["spec"].get("initContainers") or [])
    assert any(c.get("restartPolicy") is None for p in pods for c in p["spec"].get("initContainers") or [])
    assert any(p["spec"].get("overhead") for p in pods)
    assert any(j["metadata"].get("ownerReferences", [{}])[0].get("kind") == "CronJob" for j in load(bundle, "jobs"))


# -- the words -------------------------------------------------------------------------------------------

def test_truth_covers_every_word(medium):
    _, truth = medium
    words = truth_of(truth)
    assert set(words.values()) == set(POD_WORDS) | {"quota-exceeded", "no-runtimeclass"}
    lines = truth.read_text().splitlines()
    assert lines == sorted(lines)
    assert any("/replicaset/" in k for k in words) and any("/job/" in k for k in words)


@pytest.mark.parametrize("which", ["small", "medium"])
def test_analyzer_answers_exactly_the_truth(which, request):
    """The key test: every intended word is the analyzer's word, and the analyzer finds no other target.
    (The analyzer prints pods in pods.json order, then owners; the truth file is sorted: compare sorted.)"""
    bundle, truth = request.getfixturevalue(which)
    result = run_cli("analyze", bundle, "-o", "words")
    assert result.returncode == 0, result.stderr
    got = sorted(result.stdout.splitlines())
    assert got == truth.read_text().splitlines()
