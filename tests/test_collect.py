"""The collector (scripts/collect.py) against a stand-in kubectl.

tests/fake_kubectl/kubectl is put first on PATH; it replays the real outputs
of dumps/lab-seven-states-v1.36 (copied into a tmp dir per test), real error
texts on demand, and logs every argv it is given. No cluster, no network.
"""

from __future__ import annotations

import ast
import copy
import glob
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import pytest

from analyzer.bundle.catalog import BY_NAME, DRA_GROUP, KINDS as CATALOG, MAY_BE_UNSERVED
from helpers import LAB, SCHEMAS, run_cli
from stand_in import SCRIPT, Kube


MARKER = "REDACTED-BY-GPU-TRIAGE"
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
# From the one kinds catalog (tests/test_catalog.py pins the collector's copy to it).
# Built-in kinds, read by their plural (custom resources and the one ConfigMap: their own tests).
KINDS = [k.name for k in CATALOG if k.group not in MAY_BE_UNSERVED and k.only is None]
NAMESPACED = {k.name for k in CATALOG if k.namespaced and k.name in KINDS}
# Dynamic Resource Allocation (shared/spec/dra.md), read with qualified names.
DRA_KINDS = [k.name for k in CATALOG if k.group == DRA_GROUP]
DRA_NAMESPACED = {k.name for k in CATALOG if k.namespaced and k.group == DRA_GROUP}
ALL_KINDS = [k.name for k in CATALOG]
# cluster-autoscaler's status: the one ConfigMap, by name (tests/test_collect_autoscalers.py).
CA_STATUS_GET = next(list(k.command[1:]) for k in CATALOG if k.only)
REFUSED = ["manifests/41-pod-quota-exceeded.yaml", "manifests/42-pod-runtimeclass-missing.yaml"]
STAMP = r"[0-9]{8}T[0-9]{6}Z"

FORBIDDEN_PODS = ('Error from server (Forbidden): pods is forbidden: User '
                  '"system:serviceaccount:x:y" cannot list resource "pods" in API group "" '
                  'at the cluster scope\n')
NO_RUNTIMECLASSES = 'error: the server doesn\'t have a resource type "runtimeclasses"\n'
TIMEOUT = "Unable to connect to the server: dial tcp 10.0.0.1:6443: i/o timeout\n"
DEADLINE = "error: context deadline exceeded\n"


def load_script():
    from analyzer.collect_bridge import load_collector

    return load_collector()


def manifest_of(bundle: Path) -> dict:
    return json.loads((bundle / "manifest.json").read_text())


def entry(manifest: dict, path: str) -> dict:
    (e,) = [e for e in manifest["files"] + manifest["attempts"] if e["path"] == path]
    return e


def schema_validator(name: str):
    """A jsonschema validator for schemas/<name>.schema.json with every file in
    schemas/ registered, so relative $refs resolve offline."""
    import jsonschema
    from referencing import Registry, Resource

    resources = []
    for f in SCHEMAS.glob("*.schema.json"):
        doc = json.loads(f.read_text())
        resources.append((doc["$id"], Resource.from_contents(doc)))
    registry = Registry().with_resources(resources)
    schema = json.loads((SCHEMAS / f"{name}.schema.json").read_text())
    return jsonschema.Draft202012Validator(schema, registry=registry)


def assert_valid(name: str, instance: object) -> None:
    errors = [f"{list(e.absolute_path)}: {e.message}" for e in schema_validator(name).iter_errors(instance)]
    assert not errors, f"{name}: {errors[:5]}"


# ------------------------------------------------------------------- 1. valid


def test_bundle_follows_manifest_and_attempt_schemas(kube: Kube) -> None:
    """Checked here with jsonschema directly, so it holds without the analyzer:
    manifest.json and attempts/*.json follow the decided schemas, every listed
    file exists with the stated size and sha256, nothing unlisted is there, and
    files redaction did not touch are kubectl's bytes exactly."""
    r = kube.collect("--manifest", REFUSED[0], "--manifest", REFUSED[1])
    assert r.returncode == 0, r.stderr
    bundle = kube.bundle(r)
    assert re.fullmatch(rf"kind-lab-{STAMP}", bundle.name)
    assert bundle.parent == kube.work / "dumps"
    m = manifest_of(bundle)
    assert_valid("manifest", m)
    assert m["format"] == "gpu-triage/bundle" and m["formatVersion"] == 1
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", m["completed"])
    assert m["created"] <= m["completed"]
    assert bundle.name.endswith(m["created"].replace("-", "").replace(":", ""))
    assert m["collector"]["name"] == "gpu-triage-collect"
    assert m["kubectl"] == {"clientVersion": "v1.32.4-dispatcher", "serverVersion": "v1.36.2"}
    assert m["context"] == "kind-lab" and m["namespaces"] is None and m["partial"] is False
    assert [e["path"] for e in m["files"]] == ["version.json"] + [f"{k}.json" for k in ALL_KINDS]
    listed = {"manifest.json"}
    for e in m["files"] + m["attempts"]:
        assert e["status"] == "ok"
        data = (bundle / e["path"]).read_bytes()
        assert e["bytes"] == len(data) and e["sha256"] == hashlib.sha256(data).hexdigest()
        assert e["command"][0] == "kubectl" and e["exitStatus"] == (1 if e["kind"] == "Attempt" else 0)
        listed.add(e["path"])
    on_disk = {str(p.relative_to(bundle)) for p in bundle.rglob("*") if p.is_file()}
    assert on_disk == listed
    # Counts: the lab bundle has 9 pods, 4 nodes, 13 events, empty owners.
    items = {e["kind"]: e["items"] for e in m["files"]}
    assert items["pods"] == 9 and items["nodes"] == 4 and items["events"] == 13
    assert items["replicasets"] == 0 and items["version"] is None
    # Untouched by redaction: byte for byte what kubectl printed.
    for name in ("nodes.json", "events.json", "version.json"):
        assert (bundle / name).read_bytes() == (LAB / name).read_bytes()
        assert entry(m, name).get("redactions", {}).get("last-applied-configuration", 0) == 0
    for kind in KINDS:
        assert_valid(kind, json.loads((bundle / f"{kind}.json").read_text()))
    # Attempts: exact source text and the server's exact answer.
    assert [e["path"] for e in m["attempts"]] == [
        "attempts/01-41-pod-quota-exceeded.json", "attempts/02-42-pod-runtimeclass-missing.json"]
    errors = (LAB / "admission-errors.txt").read_text()
    for e, source in zip(m["attempts"], REFUSED):
        a = json.loads((bundle / e["path"]).read_text())
        assert_valid("attempt", a)
        assert a["apiVersion"] == "gpu-triage/v1" and a["kind"] == "Attempt"
        assert a["source"] == source and "object" not in a
        assert a["sourceText"] == (kube.work / source).read_text()
        assert a["answer"]["command"][:5] == ["kubectl", "apply", "--dry-run=server", "-f", source]
        assert a["answer"]["exitStatus"] == 1 and a["answer"]["stdout"] == ""
        assert a["answer"]["stderr"].startswith("Error from server (Forbidden): error when creating")
        assert a["answer"]["stderr"].rstrip("\n") in errors
        assert e["stderr"] == a["answer"]["stderr"]
    # stdout: exactly the bundle path; stderr: progress lines, no "partial".
    assert r.stdout.splitlines() == [f"dumps/{bundle.name}"]
    assert re.search(r"^pods: 9 items, \d+ bytes, \d+\.\d\d s", r.stderr, re.M)
    assert "partial" not in r.stderr


def test_bundle_validates_with_the_analyzer(kube: Kube) -> None:
    """`python -m analyzer validate BUNDLE` exits 0 (waits for the analyzer CLI)."""
    r = kube.collect("--manifest", REFUSED[0], "--manifest", REFUSED[1], "--archive")
    assert r.returncode == 0, r.stderr
    bundle = kube.bundle(r)
    v = run_cli("validate", str(bundle))
    assert v.returncode == 0, v.stdout + v.stderr
    v = run_cli("validate", str(bundle) + ".tar.gz")
    assert v.returncode == 0, v.stdout + v.stderr


# ------------------------------------------------------------------- 2. words


def words(path: Path | str) -> list[str]:
    r = run_cli("analyze", str(path), "-o", "words")
    assert r.returncode == 0, r.stdout + r.stderr
    return sorted(line for line in r.stdout.splitlines() if line.strip())


def test_analyze_gives_the_same_words_as_on_the_original(kube: Kube) -> None:
    """The collected bundle (redacted, with the two refused manifests as
    attempts) and its .tar.gz give the words of dumps/lab-seven-states-v1.36
    (waits for the analyzer CLI)."""
    r = kube.collect("--manifest", REFUSED[0], "--manifest", REFUSED[1], "--archive")
    assert r.returncode == 0, r.stderr
    bundle = kube.bundle(r)
    expected = words(LAB)
    names = {line.split("\t")[0] for line in expected}
    assert {"quota-lab/quota-exceeded", "lab/runtimeclass-missing"} <= names, expected
    assert words(bundle) == expected
    assert words(str(bundle) + ".tar.gz") == expected


# ------------------------------------------------------------------- 3. redaction

HF_TOKEN = "secret-hf-token-0123456789"
SECRETS = [HF_TOKEN, "secret-init-value", "secret-template-value", "secret-attempt-value"]


def add_env_everywhere(kube: Kube) -> tuple[dict, dict]:
    """Real-shaped env values in a pod's container and initContainer, and in a
    ReplicaSet's pod template; returns (pods, replicasets) as replayed."""
    pods = json.loads((LAB / "pods.json").read_text())
    spec = pods["items"][0]["spec"]
    spec["containers"][0]["env"] = [
        {"name": "HF_TOKEN", "value": HF_TOKEN},
        {"name": "EMPTY", "value": ""},
        {"name": "FROM_SECRET", "valueFrom": {"secretKeyRef": {"key": "token", "name": "hf"}}},
    ]
    spec["initContainers"] = [{
        "env": [{"name": "INIT", "value": "secret-init-value"}],
        "image": "busybox:1.36", "imagePullPolicy": "IfNotPresent", "name": "init",
        "resources": {}, "terminationMessagePath": "/dev/termination-log",
        "terminationMessagePolicy": "File",
    }]
    kube.set_list("pods", pods)
    template_pod = copy.deepcopy(pods["items"][1]["spec"])
    template_pod["containers"][0]["env"] = [{"name": "TOKEN", "value": "secret-template-value"}]
    rs = {
        "apiVersion": "v1",
        "items": [{
            "apiVersion": "apps/v1", "kind": "ReplicaSet",
            "metadata": {
                "annotations": {"deployment.kubernetes.io/revision": "1",
                                LAST_APPLIED: '{"apiVersion":"apps/v1","kind":"Deployment"}\n'},
                "creationTimestamp": "2026-11-29T17:17:17Z", "generation": 1,
                "labels": {"app": "trainer"}, "name": "trainer-5d8f7b9c4", "namespace": "lab",
                "resourceVersion": "400", "uid": "4f1f2a64-3f0e-4f55-9d9e-1b2c3d4e5f60",
            },
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "trainer"}},
                     "template": {"metadata": {"labels": {"app": "trainer"}}, "spec": template_pod}},
            "status": {"observedGeneration": 1, "replicas": 0},
        }],
        "kind": "List",
        "metadata": {"resourceVersion": ""},
    }
    kube.set_list("replicasets", rs)
    return pods, rs


def json_attempt(kube: Kube) -> str:
    pod = json.loads(json.dumps({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "json-pod", "namespace": "lab"},
        "spec": {"containers": [{
            "name": "cuda", "image": "nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04",
            "env": [{"name": "API_KEY", "value": "secret-attempt-value"}],
            "resources": {"limits": {"nvidia.com/gpu": "1"}}}]},
    }))
    (kube.work / "pod.json").write_text(json.dumps(pod, indent=2))
    return "pod.json"


def expected_redaction(obj: dict) -> tuple[dict, int, int]:
    """The test's own, explicit-path redaction of a List: (result, env, last-applied)."""
    obj = copy.deepcopy(obj)
    env = annotations = 0
    for item in obj["items"]:
        ann = item["metadata"].get("annotations") or {}
        if LAST_APPLIED in ann:
            ann[LAST_APPLIED] = MARKER
            annotations += 1
        spec = item.get("spec", {})
        pod_spec = spec.get("template", {}).get("spec", spec)
        for key in ("containers", "initContainers", "ephemeralContainers"):
            for c in pod_spec.get(key) or []:
                for e in c.get("env") or []:
                    if "value" in e:
                        e["value"] = MARKER
                        env += 1
    return obj, env, annotations


def test_default_redaction_leaves_no_env_value_or_last_applied(kube: Kube) -> None:
    pods, rs = add_env_everywhere(kube)
    r = kube.collect("--manifest", json_attempt(kube), "--manifest", REFUSED[0])
    assert r.returncode == 0, r.stderr
    bundle = kube.bundle(r)
    everything = b"".join(p.read_bytes() for p in bundle.rglob("*") if p.is_file())
    for secret in SECRETS:
        assert secret.encode() not in everything
    assert b'{\\"apiVersion\\"' not in everything  # no last-applied JSON text survives
    m = manifest_of(bundle)
    assert m["redaction"]["enabled"] is True and m["redaction"]["marker"] == MARKER
    total_env = total_ann = 0
    for kind in KINDS:
        source = json.loads((kube.data / f"{kind}.json").read_text()) if (kube.data / f"{kind}.json").exists() else None
        got_bytes = (bundle / f"{kind}.json").read_bytes()
        got = json.loads(got_bytes)
        if source is None:
            continue
        want, env, ann = expected_redaction(source)
        assert got == want, kind  # same shape, only the redacted values differ
        e = entry(m, f"{kind}.json")
        assert e["redactions"] == {"env-value": env, "last-applied-configuration": ann}
        if env or ann:  # re-serialised the way kubectl indents
            assert got_bytes == (json.dumps(got, indent=4, ensure_ascii=False) + "\n").encode()
        else:
            assert got_bytes == (kube.data / f"{kind}.json").read_bytes()
        total_env += env
        total_ann += ann
    assert entry(m, "pods.json")["redactions"]["env-value"] == 3  # HF_TOKEN, EMPTY, INIT
    assert entry(m, "replicasets.json")["redactions"]["env-value"] == 1
    # valueFrom is a reference, not a value: kept.
    pod0 = json.loads((bundle / "pods.json").read_text())["items"][0]
    assert pod0["spec"]["containers"][0]["env"][2]["valueFrom"]["secretKeyRef"]["name"] == "hf"
    # The JSON attempt is kept as its redacted object (its text held the value).
    a = json.loads((bundle / "attempts/01-pod.json").read_text())
    assert a["object"]["spec"]["containers"][0]["env"] == [{"name": "API_KEY", "value": MARKER}]
    assert "sourceText" not in a
    assert entry(m, "attempts/01-pod.json")["redactions"] == {"env-value": 1, "last-applied-configuration": 0}
    assert_valid("attempt", a)
    # A YAML attempt is stored as the user wrote it (documented choice).
    y = json.loads((bundle / "attempts/02-41-pod-quota-exceeded.json").read_text())
    assert y["sourceText"] == (kube.work / REFUSED[0]).read_text()
    assert m["redaction"]["counts"] == {"env-value": total_env + 1,
                                        "last-applied-configuration": total_ann}
    assert total_ann == 13 + 1  # every lab object applied with kubectl, plus the ReplicaSet


def test_no_redact_keeps_everything_byte_for_byte(kube: Kube) -> None:
    add_env_everywhere(kube)
    r = kube.collect("--no-redact", "--manifest", json_attempt(kube))
    assert r.returncode == 0, r.stderr
    bundle = kube.bundle(r)
    for kind in KINDS:
        src = kube.data / f"{kind}.json"
        if src.exists():
            assert (bundle / f"{kind}.json").read_bytes() == src.read_bytes(), kind
    assert HF_TOKEN.encode() in (bundle / "pods.json").read_bytes()
    m = manifest_of(bundle)
    assert m["redaction"]["enabled"] is False and m["redaction"]["counts"] == {}
    assert all("redactions" not in e for e in m["files"])
    a = json.loads((bundle / "attempts/01-pod.json").read_text())
    assert a["sourceText"] == (kube.work / "pod.json").read_text()
    assert a["object"]["spec"]["containers"][0]["env"][0]["value"] == "secret-attempt-value"


def test_a_secret_or_configmap_manifest_is_refused_while_redacting(kube: Kube) -> None:
    (kube.work / "s.yaml").write_text("apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\n"
                                      "stringData:\n  token: hunter2\n")
    r = kube.collect("--manifest", "s.yaml")
    assert r.returncode == 2 and "Secret" in r.stderr
    assert not (kube.work / "dumps").exists() and not kube.log.exists()


# ------------------------------------------------------------------- 4. failures


def test_failing_kinds_are_recorded_and_the_rest_collected(kube: Kube) -> None:
    fail = "pods=forbidden,runtimeclasses=notfound,events=timeout,jobs=deadline,daemonsets=garbage"
    r = kube.collect(FAKE_KUBECTL_FAIL=fail)
    assert r.returncode == 3, r.stderr
    bundle = kube.bundle(r)  # still written, under its final name
    m = manifest_of(bundle)
    assert_valid("manifest", m)
    assert m["partial"] is True
    want = {"pods.json": (1, FORBIDDEN_PODS), "runtimeclasses.json": (1, NO_RUNTIMECLASSES),
            "events.json": (1, TIMEOUT), "jobs.json": (1, DEADLINE), "daemonsets.json": (0, "")}
    for path, (status, stderr) in want.items():
        e = entry(m, path)
        assert e["status"] == "failed" and e["exitStatus"] == status and e["stderr"] == stderr
        assert "bytes" not in e and "sha256" not in e
        assert not (bundle / path).exists()
    assert entry(m, "daemonsets.json")["error"].startswith("stdout is not JSON")
    for e in m["files"]:
        if e["path"] not in want:
            assert e["status"] == "ok" and (bundle / e["path"]).is_file()
    assert (bundle / "nodes.json").read_bytes() == (LAB / "nodes.json").read_bytes()
    last = r.stderr.splitlines()[-1]
    assert last.startswith("partial:")
    for kind in ("pods", "runtimeclasses", "events", "jobs", "daemonsets"):
        assert kind in last
    assert FORBIDDEN_PODS.strip() in r.stderr  # the progress line shows the cause
    assert r.stdout.splitlines()[-1] == f"dumps/{bundle.name}"


def test_unreachable_version_still_records_the_client_version(kube: Kube) -> None:
    r = kube.collect(FAKE_KUBECTL_FAIL="version=timeout")
    assert r.returncode == 3 and r.stderr.splitlines()[-1].startswith("partial: 1 kind")
    m = manifest_of(kube.bundle(r))
    e = entry(m, "version.json")
    assert e["status"] == "failed" and e["exitStatus"] == 1 and e["stderr"] == TIMEOUT
    assert m["kubectl"] == {"clientVersion": "v1.32.4-dispatcher", "serverVersion": None}
    assert not (kube.bundle(r) / "version.json").exists()
    (kube.data / "version.json").write_text("not json at all\n")
    r = kube.collect()
    assert r.returncode == 3 and r.stderr.splitlines()[-1].startswith("partial:")
    m = manifest_of(kube.bundle(r))
    assert entry(m, "version.json")["status"] == "failed"
    assert m["kubectl"] == {"clientVersion": None, "serverVersion": None}


# ------------------------------------------------------------------- 5. atomic


def wait_for(path: Path, proc: subprocess.Popen, seconds: float = 10) -> int:
    deadline = time.monotonic() + seconds
    while not path.exists():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the fake kubectl never started sleeping"
        time.sleep(0.02)
    return int(path.read_text())


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_sigkill_mid_way_leaves_only_a_hidden_temporary_dir(kube: Kube) -> None:
    mark = kube.tmp / "sleeping"
    proc = kube.popen(FAKE_KUBECTL_SLEEP="events=30", FAKE_KUBECTL_SLEEP_MARK=str(mark))
    fake_pid = wait_for(mark, proc)
    try:
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=10)
    finally:
        if alive(fake_pid):
            os.kill(fake_pid, signal.SIGKILL)
    out = kube.work / "dumps"
    entries = sorted(out.iterdir())
    assert len(entries) == 1, entries
    (tmp,) = entries
    assert tmp.name.startswith(".") and re.fullmatch(rf"\.kind-lab-{STAMP}\.partial-{proc.pid}", tmp.name)
    assert (tmp / "pods.json").is_file()  # it was mid-way: pods done, events not
    assert not (tmp / "events.json").exists() and not (tmp / "manifest.json").exists()
    assert (tmp / ".events.part").exists()  # kubectl's stdout goes to a hidden part file first
    assert not [p for p in out.iterdir() if not p.name.startswith(".")]


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_sigterm_or_sigint_removes_the_temporary_dir_and_stops_kubectl(kube: Kube, signum: int) -> None:
    mark = kube.tmp / "sleeping"
    proc = kube.popen("--archive", FAKE_KUBECTL_SLEEP="events=30", FAKE_KUBECTL_SLEEP_MARK=str(mark))
    fake_pid = wait_for(mark, proc)
    proc.send_signal(signum)
    stdout, stderr = proc.communicate(timeout=10)
    assert proc.returncode == 128 + signum, stderr
    assert stdout == ""
    assert "interrupted" in stderr
    assert list((kube.work / "dumps").iterdir()) == []
    deadline = time.monotonic() + 5
    while alive(fake_pid) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not alive(fake_pid), "the collector left kubectl running"


# ------------------------------------------------------------------- 6. read-only

READING_GETS = {k.resource for k in CATALOG if k.only is None}


def assert_reading(argv: list[str]) -> None:
    assert argv, argv
    low = [a.lower() for a in argv]
    if argv[:len(CA_STATUS_GET)] == CA_STATUS_GET:
        low = low[len(CA_STATUS_GET):]  # exactly the one ConfigMap; nothing else may name one
    assert not any("secret" in a or "configmap" in a for a in low), argv
    assert "cm" not in low, argv
    if argv[:len(CA_STATUS_GET)] == CA_STATUS_GET:
        pass
    elif argv[0] == "get":
        assert argv[1] in READING_GETS and argv[2:4] in (["-A", "-o"], ["-o", "json"], ["-n", argv[3]])
        assert "-o" in argv and argv[argv.index("-o") + 1] == "json"
    elif argv[0] == "version":
        assert argv[1:3] == ["-o", "json"]
    elif argv[0] == "config":
        assert argv[1] == "current-context"
    elif argv[0] == "apply":
        assert argv[1] == "--dry-run=server"
        assert [a for a in argv if a.startswith("--dry-run")] == ["--dry-run=server"]
    else:
        raise AssertionError(f"not a reading command: {argv}")
    for verb in ("create", "delete", "patch", "edit", "exec", "replace", "scale", "label",
                 "annotate", "drain", "cordon", "taint", "rollout", "cp", "run"):
        assert verb not in argv[:2], argv


def test_every_kubectl_command_is_a_reading_one(kube: Kube) -> None:
    kubeconfig = kube.tmp / "kubeconfig"
    kubeconfig.write_text("apiVersion: v1\nkind: Config\n")
    r = kube.collect("--manifest", REFUSED[0], "--manifest", REFUSED[1],
                     "--manifest", "manifests/30-pod-exhausted.yaml")
    assert r.returncode == 0, r.stderr
    r = kube.collect("-n", "lab", "-n", "quota-lab", "--context", "kind-lab",
                     "--kubeconfig", str(kubeconfig), "--request-timeout", "5s",
                     "--manifest", REFUSED[1])
    assert r.returncode == 0, r.stderr
    argvs = kube.argvs()
    narrowed = sum(1 for k in CATALOG if k.namespaced and k.only is None)  # one get per namespace
    assert len(argvs) == 1 + 1 + len(CATALOG) + 3 + (1 + (len(CATALOG) - narrowed) + narrowed * 2 + 1)
    for argv in argvs:
        assert_reading(argv)
        assert "--request-timeout=30s" in argv or "--request-timeout=5s" in argv
    second = argvs[1 + 1 + len(CATALOG) + 3:]
    for argv in second:  # the context flags reach every call
        assert f"--kubeconfig={kubeconfig}" in argv and "--context=kind-lab" in argv
    assert not any(a[:2] == ["config", "current-context"] for a in second)
    # Every kubectl command recorded in the manifests is one the fake saw.
    logged = {json.dumps(a) for a in argvs}
    for bundle in (kube.work / "dumps").iterdir():
        m = manifest_of(bundle)
        for e in m["files"] + m["attempts"]:
            for c in e.get("commands") or [e]:
                assert c["command"][0] == "kubectl"
                assert json.dumps(c["command"][1:]) in logged


def test_namespaces_narrow_the_namespaced_kinds(kube: Kube) -> None:
    r = kube.collect("-n", "lab", "-n", "quota-lab", "-n", "lab")
    assert r.returncode == 0, r.stderr
    bundle = kube.bundle(r)
    m = manifest_of(bundle)
    assert_valid("manifest", m)
    assert m["namespaces"] == ["lab", "quota-lab"]
    for kind in KINDS:
        e = entry(m, f"{kind}.json")
        if kind in NAMESPACED:
            resource = BY_NAME[kind].resource  # qualified where a CRD could shadow it (csistoragecapacities)
            assert [c["command"][1:5] for c in e["commands"]] == [
                ["get", resource, "-n", "lab"], ["get", resource, "-n", "quota-lab"]]
            assert e["command"] == e["commands"][0]["command"]
        else:
            assert "-n" not in e["command"] and "-A" not in e["command"] and "commands" not in e
    pods = json.loads((bundle / "pods.json").read_text())
    assert pods["kind"] == "List" and len(pods["items"]) == 9
    quotas = json.loads((bundle / "resourcequotas.json").read_text())
    assert [q["metadata"]["namespace"] for q in quotas["items"]] == ["quota-lab"]
    assert entry(m, "events.json")["items"] == sum(
        1 for e in json.loads((LAB / "events.json").read_text())["items"]
        if e["metadata"]["namespace"] in ("lab", "quota-lab"))


def test_a_namespace_that_fails_fails_its_kind(kube: Kube) -> None:
    r = kube.collect("-n", "lab", FAKE_KUBECTL_FAIL="resourcequotas=forbidden")
    assert r.returncode == 3
    m = manifest_of(kube.bundle(r))
    e = entry(m, "resourcequotas.json")
    assert e["status"] == "failed" and e["exitStatus"] == 1
    assert e["stderr"].startswith("Error from server (Forbidden): resourcequotas is forbidden")
    assert 'in the namespace "lab"' in e["stderr"]


def test_the_collector_refuses_writing_verbs_itself() -> None:
    collect = load_script()
    k = collect.Kubectl("kubectl", ["--context=x"])
    assert k.argv(["get", "pods", "-A", "-o", "json"])[-1] == "--context=x"
    for bad in (["apply", "-f", "x.yaml"], ["apply", "--dry-run=server", "-f", "x", "--dry-run=none"],
                ["delete", "pod", "x"], ["get", "secrets", "-A"], ["get", "configmaps"],
                ["get", "pods,secrets"], ["get", "cm"], ["exec", "x", "--", "sh"], []):
        with pytest.raises(AssertionError):
            k.argv(bad)


# ------------------------------------------------------------------- 7. names, archive, bridge

ARN = "arn:aws:eks:us-east-1:1234:cluster/prod a"
SAFE_ARN = "arn_aws_eks_us-east-1_1234_cluster_prod_a"


def test_context_names_become_safe_directory_names(kube: Kube) -> None:
    r = kube.collect(FAKE_KUBECTL_CONTEXT=ARN)
    assert r.returncode == 0, r.stderr
    bundle = kube.bundle(r)
    assert re.fullmatch(rf"{SAFE_ARN}-{STAMP}", bundle.name)
    assert manifest_of(bundle)["context"] == ARN
    r = kube.collect("--context", ARN)
    assert r.returncode == 0, r.stderr
    assert re.fullmatch(rf"{SAFE_ARN}-{STAMP}(-\d+)?", kube.bundle(r).name)
    assert all(f"--context={ARN}" in a for a in kube.argvs()[len(CATALOG) + 2:])
    safe = load_script().safe_name
    assert safe("") == "context" and safe(None) == "context"
    assert safe(".hidden") == "_hidden" and safe("..") == "_." and safe("-rf") == "_rf"
    assert safe("a/../b") == "a_.._b" and "/" not in safe("../../etc")
    assert safe("gke_proj_europe-west4_ml") == "gke_proj_europe-west4_ml"
    assert safe("ctx:ü ñ") == "ctx_" and len(safe("x" * 500)) == 100


def test_an_existing_name_is_never_overwritten(kube: Kube, tmp_path: Path) -> None:
    pick = load_script().pick_final_name
    out = tmp_path / "out"
    out.mkdir()
    assert pick(str(out), "c-20261129T164658Z") == "c-20261129T164658Z"
    (out / "c-20261129T164658Z").mkdir()
    assert pick(str(out), "c-20261129T164658Z") == "c-20261129T164658Z-2"
    (out / "c-20261129T164658Z-2.tar.gz").write_bytes(b"")
    assert pick(str(out), "c-20261129T164658Z") == "c-20261129T164658Z-3"
    a = kube.collect("--context", "c")
    b = kube.collect("--context", "c")
    assert a.returncode == b.returncode == 0
    assert kube.bundle(a) != kube.bundle(b)
    assert (kube.bundle(a) / "manifest.json").is_file() and (kube.bundle(b) / "manifest.json").is_file()


def test_archive_members_are_relative_and_under_the_bundle_name(kube: Kube) -> None:
    out = kube.tmp / "elsewhere" / "bundles"
    r = kube.collect("--archive", "--output-dir", str(out), "--manifest", REFUSED[0])
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert len(lines) == 2
    archive, bundle = Path(lines[0]), Path(lines[1])
    assert bundle.parent == out and archive == out / (bundle.name + ".tar.gz")
    assert sorted(p.name for p in out.iterdir()) == sorted([bundle.name, archive.name])
    with tarfile.open(archive, "r:gz") as tar:
        members = tar.getmembers()
        names = [m.name for m in members]
        assert names[0] == bundle.name
        for m in members:
            assert m.isfile() or m.isdir(), m.name
            assert not m.name.startswith("/") and ".." not in m.name.split("/")
            assert m.name == bundle.name or m.name.startswith(bundle.name + "/")
            if m.isfile():
                rel = m.name[len(bundle.name) + 1:]
                assert tar.extractfile(m).read() == (bundle / rel).read_bytes()
        files = {m.name[len(bundle.name) + 1:] for m in members if m.isfile()}
    assert files == {str(p.relative_to(bundle)) for p in bundle.rglob("*") if p.is_file()}


def test_gpu_triage_collect_runs_the_same_script(kube: Kube, monkeypatch, capsys) -> None:
    from analyzer.collect_bridge import collector_path, load_collector, run_collector

    # A source checkout runs scripts/collect.py itself; a wheel its force-included
    # twin analyzer/_data/collect.py (same bytes).
    assert collector_path().read_bytes() == SCRIPT.read_bytes()
    assert load_collector().__file__ == str(collector_path())
    assert run_collector(["--help"]) == 0
    help_text = capsys.readouterr().out
    assert help_text.startswith("Usage: gpu-triage collect [OPTIONS]")
    for flag in ("--context", "--kubeconfig", "--request-timeout", "--namespace", "--output-dir",
                 "--manifest", "--archive", "--no-redact", "--kubectl", "partial"):
        assert flag in help_text
    for k, v in kube.env().items():
        monkeypatch.setenv(k, v)
    monkeypatch.chdir(kube.work)
    before = signal.getsignal(signal.SIGTERM)
    assert run_collector(["--manifest", REFUSED[1]]) == 0
    assert signal.getsignal(signal.SIGTERM) == before  # handlers restored in-process
    out = capsys.readouterr().out
    bundle = kube.work / out.splitlines()[-1]
    assert (bundle / "manifest.json").is_file()
    assert (bundle / "attempts" / "01-42-pod-runtimeclass-missing.json").is_file()
    assert run_collector(["--bogus"]) == 2


def test_python_m_analyzer_collect_help_is_the_collectors() -> None:
    """Waits for the CLI wiring (`gpu-triage collect` passing args through)."""
    r = run_cli("collect", "--help")
    assert r.returncode == 0, r.stderr
    assert "--manifest" in r.stdout and "--no-redact" in r.stdout and "partial" in r.stdout


# ------------------------------------------------------------------- exit 2, python 3.8


def test_usage_errors_and_missing_kubectl_write_nothing(kube: Kube) -> None:
    for args in (["--kubectl", str(kube.tmp / "no-such-kubectl")],
                 ["--manifest", "no-such.yaml"],
                 ["--bogus-flag"],
                 ["-n", ""]):
        r = kube.collect(*args)
        assert r.returncode == 2, (args, r.stderr)
        assert r.stdout == ""
        assert not (kube.work / "dumps").exists(), args
    assert not kube.log.exists()  # kubectl never ran
    not_exec = kube.tmp / "kubectl-not-executable"
    not_exec.write_text("#!/bin/sh\n")
    r = kube.collect("--kubectl", str(not_exec), "--context", "x")
    assert r.returncode == 2 and not (kube.work / "dumps").exists()
    # kubectl on PATH missing altogether.
    r = subprocess.run([sys.executable, str(SCRIPT)], cwd=kube.work, capture_output=True, text=True,
                       env=dict(kube.env(), PATH=str(kube.tmp / "empty")), timeout=30)
    assert r.returncode == 2 and "kubectl" in r.stderr and not (kube.work / "dumps").exists()


def python38() -> str | None:
    candidates = [shutil.which("python3.8")]
    candidates += sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.8*/bin/python3.8")))
    for c in filter(None, candidates):
        try:
            r = subprocess.run([c, "-c", "import sys; print(sys.version_info[:2] == (3, 8))"],
                               capture_output=True, text=True, timeout=20)
        except OSError:
            continue
        if r.stdout.strip() == "True":
            return c
    return None


def test_collector_is_python38_stdlib_only(kube: Kube) -> None:
    source = SCRIPT.read_text()
    tree = ast.parse(source, feature_version=(3, 8))
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            imported.add((node.module or "").split(".")[0])
    stdlib = set(sys.stdlib_module_names) | {"__future__"}
    assert imported <= stdlib, imported - stdlib


def test_collector_runs_on_python38(kube: Kube) -> None:
    py38 = python38()
    if py38 is None:
        pytest.skip("no Python 3.8 on this machine: the collector's 3.8 syntax and stdlib-only imports are checked "
                    "by test_collector_is_python38_stdlib_only; running it needs an interpreter")
    r = kube.collect("--archive", "--manifest", REFUSED[0], "-n", "lab", "-n", "quota-lab",
                     python=py38)
    assert r.returncode == 0, r.stderr
    m = manifest_of(kube.bundle(r))
    assert_valid("manifest", m)
    assert m["redaction"]["counts"]["last-applied-configuration"] > 0
