"""`gpu-triage serve` / `shell` driven by the REAL kubectl against the example bundles.

Every expectation is computed here from the bundle's JSON files, independently of analyzer/replay.
kubectl is required: without it these tests fail under CI=true (.ci/run must provide it) and skip
elsewhere. Each kubectl call gets its own HOME and --cache-dir so no discovery cache is shared.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import shutil
import signal
import subprocess
import sys
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Iterator

import pytest

from conftest import LAB_WORDS
from helpers import LAB, RECORDINGS, REPO

DRA = RECORDINGS / "dra-exhausted-v1.36"
KUBECTL = shutil.which("kubectl")


def _items(bundle: Path, kind: str) -> list[dict]:
    return json.loads((bundle / f"{kind}.json").read_text())["items"]


def _collected(bundle: Path) -> datetime:
    return datetime.fromisoformat(json.loads((bundle / "manifest.json").read_text())["created"].replace("Z", "+00:00"))


# -- running serve and kubectl -------------------------------------------------------------------

class Replay:
    def __init__(self, proc: subprocess.Popen, kubeconfig: Path, home: Path, url: str) -> None:
        self.proc, self.kubeconfig, self.home, self.url = proc, kubeconfig, home, url
        self.port = int(url.rsplit(":", 1)[1])

    def kubectl(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        env = {"PATH": os.environ.get("PATH", ""), "HOME": str(self.home), "KUBECONFIG": str(self.kubeconfig)}
        done = subprocess.run([KUBECTL or "kubectl", "--cache-dir", str(self.home / "cache"), *args],
                              capture_output=True, text=True, env=env, timeout=120)
        if check:
            assert done.returncode == 0, f"kubectl {' '.join(args)} failed:\n{done.stderr}"
        return done

    def http(self, method: str, path: str, accept: str = "application/json") -> tuple[int, bytes]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        try:
            conn.request(method, path, headers={"Accept": accept})
            resp = conn.getresponse()
            return resp.status, resp.read()
        finally:
            conn.close()


@contextmanager
def serving(bundle: Path, tmp: Path, *extra: str) -> Iterator[Replay]:
    tmp.mkdir(parents=True, exist_ok=True)
    kubeconfig = tmp / "kubeconfig"
    proc = subprocess.Popen([sys.executable, "-m", "analyzer", "serve", str(bundle), "--kubeconfig", str(kubeconfig), *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO)
    try:
        line = proc.stdout.readline() if proc.stdout else ""
        if not line.startswith("export KUBECONFIG="):
            proc.kill()
            raise AssertionError(f"serve did not start: {line!r} {proc.stderr.read() if proc.stderr else ''}")
        server = re.search(r"server: (\S+)", kubeconfig.read_text())
        assert server is not None
        yield Replay(proc, kubeconfig, tmp, server.group(1))
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


@pytest.fixture(scope="module")
def lab(kubectl: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Replay]:
    with serving(LAB, tmp_path_factory.mktemp("lab")) as replay:
        yield replay


@pytest.fixture(scope="module")
def dra(kubectl: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Replay]:
    with serving(DRA, tmp_path_factory.mktemp("dra")) as replay:
        yield replay


def _rows(text: str) -> tuple[list[str], list[list[str]]]:
    """A kubectl table: the header's column names and each row's cells (split at 2+ spaces)."""
    lines = [ln for ln in text.splitlines() if ln.strip()]
    header = re.split(r"\s{2,}", lines[0].strip())
    return header, [re.split(r"\s{2,}", ln.strip()) for ln in lines[1:]]


# -- get --------------------------------------------------------------------------------------------

def _expected_status(pod: dict) -> str:
    """printers.go printPod for the lab's shapes: a terminated container's reason, else the phase."""
    for cs in pod["status"].get("containerStatuses") or ():
        term = (cs.get("state") or {}).get("terminated")
        if term and term.get("reason"):
            return term["reason"]
    return pod["status"]["phase"]


def test_get_pods_all_namespaces_shows_every_pod_with_the_printers_status_and_age_at_collection(lab: Replay) -> None:
    header, rows = _rows(lab.kubectl("get", "pods", "-A").stdout)
    assert header == ["NAMESPACE", "NAME", "READY", "STATUS", "RESTARTS", "AGE"]
    pods = _items(LAB, "pods")
    collected = _collected(LAB)
    expected = {}
    for p in pods:
        created = datetime.fromisoformat(p["metadata"]["creationTimestamp"].replace("Z", "+00:00"))
        # AGE from manifest.json created, not from now (duration.HumanDuration: under 2 minutes is "Ns")
        expected[(p["metadata"]["namespace"], p["metadata"]["name"])] = (_expected_status(p), f"{int((collected - created).total_seconds())}s")
    got = {(r[0], r[1]): (r[3], r[5]) for r in rows}
    assert got == expected
    assert got[("lab", "finished-job")][0] == "Completed"


def test_get_pods_wide_shows_ip_node_nominated_node_and_readiness_gates(lab: Replay) -> None:
    header, rows = _rows(lab.kubectl("get", "pods", "-A", "-o", "wide").stdout)
    assert header[-4:] == ["IP", "NODE", "NOMINATED NODE", "READINESS GATES"]
    by_name = {r[1]: r for r in rows}
    for p in _items(LAB, "pods"):
        row = by_name[p["metadata"]["name"]]
        assert row[6] == (p["status"].get("podIP") or "<none>")
        assert row[7] == (p["spec"].get("nodeName") or "<none>")


def test_label_selectors_equality_set_and_existence_select_like_labels_Parse(lab: Replay) -> None:
    pods = _items(LAB, "pods")
    labels = {p["metadata"]["name"]: p["metadata"].get("labels") or {} for p in pods}

    def names(*selector: str) -> set[str]:
        out = lab.kubectl("get", "pods", "-n", "lab", "-o", "name", "-l", ",".join(selector)).stdout.split()
        return {n.removeprefix("pod/") for n in out}

    assert names("app=gpu-triage-lab") == {n for n, lab in labels.items() if lab.get("app") == "gpu-triage-lab"}
    assert names("case in (taint,exhausted)") == {"taint", "exhausted"}
    assert names("case notin (taint,exhausted)", "app==gpu-triage-lab") == set(labels) - {"taint", "exhausted"}
    assert names("case!=taint") == set(labels) - {"taint"}
    assert names("case") == {n for n, lab in labels.items() if "case" in lab}
    assert lab.kubectl("get", "pods", "-n", "lab", "-o", "name", "-l", "!case").stdout.strip() == ""


def test_field_selector_status_phase_pending_lists_the_pending_pods(lab: Replay) -> None:
    _, rows = _rows(lab.kubectl("get", "pods", "-A", "--field-selector", "status.phase=Pending").stdout)
    assert {r[1] for r in rows} == {p["metadata"]["name"] for p in _items(LAB, "pods") if p["status"]["phase"] == "Pending"}
    out = lab.kubectl("get", "pods", "-A", "-o", "name", "--field-selector", "spec.nodeName=gpu-ok,status.phase!=Succeeded").stdout
    assert sorted(out.split()) == sorted(f"pod/{p['metadata']['name']}" for p in _items(LAB, "pods")
                                         if p["spec"].get("nodeName") == "gpu-ok" and p["status"]["phase"] != "Succeeded")


def test_an_unsupported_field_selector_is_a_400_naming_the_field(lab: Replay) -> None:
    done = lab.kubectl("get", "pods", "-A", "--field-selector", "spec.priority=5", check=False)
    assert done.returncode != 0
    assert "BadRequest" in done.stderr and "spec.priority" in done.stderr and "not supported" in done.stderr


def test_get_nodes_shows_ready_and_kubelet_version(lab: Replay) -> None:
    header, rows = _rows(lab.kubectl("get", "nodes").stdout)
    assert header == ["NAME", "STATUS", "ROLES", "AGE", "VERSION"]
    expected = {}
    for n in _items(LAB, "nodes"):
        ready = next(c["status"] for c in n["status"]["conditions"] if c["type"] == "Ready")
        status = "Ready" if ready == "True" else "NotReady"
        if n["spec"].get("unschedulable"):
            status += ",SchedulingDisabled"
        expected[n["metadata"]["name"]] = (status, n["status"]["nodeInfo"]["kubeletVersion"])
    assert {r[0]: (r[1], r[4]) for r in rows} == expected


def test_get_events_all_namespaces_lists_every_event(lab: Replay) -> None:
    header, rows = _rows(lab.kubectl("get", "events", "-A").stdout)
    assert header == ["NAMESPACE", "LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"]
    events = _items(LAB, "events")
    assert len(rows) == len(events)
    assert sorted((r[0], r[3], r[4]) for r in rows) == sorted(
        (e["metadata"]["namespace"], e["reason"], f"{e['involvedObject']['kind'].lower()}/{e['involvedObject']['name']}") for e in events)


def test_get_resourcequota_shows_used_over_hard_as_printResourceQuota(lab: Replay) -> None:
    _, rows = _rows(lab.kubectl("get", "resourcequota", "-A").stdout)
    expected = []
    for q in _items(LAB, "resourcequotas"):
        hard, used = q["status"]["hard"], q["status"].get("used", {})
        cells = ", ".join(f"{k}: {used.get(k, '0')}/{hard[k]}" for k in sorted(hard) if not k.startswith("limits."))
        expected.append([q["metadata"]["namespace"], q["metadata"]["name"], cells])
    assert [[r[0], r[1], r[3]] for r in rows] == expected


def test_get_resourceclaims_on_the_dra_bundle_shows_resourceClaimState(dra: Replay) -> None:
    header, rows = _rows(dra.kubectl("get", "resourceclaims", "-A").stdout)
    assert header == ["NAMESPACE", "NAME", "STATE", "AGE"]
    expected = {}
    for c in _items(DRA, "resourceclaims"):
        state = "pending" if not c["status"].get("allocation") else (
            "allocated,reserved" if c["status"].get("reservedFor") else "allocated")
        expected[c["metadata"]["name"]] = state
    assert {r[1]: r[2] for r in rows} == expected
    assert "pending" in expected.values() and "allocated,reserved" in expected.values()


def test_dra_api_resources_carry_the_version_of_the_collected_items(dra: Replay) -> None:
    out = dra.kubectl("api-resources", "--api-group", "resource.k8s.io", "-o", "name").stdout.split()
    assert sorted(out) == sorted(f"{k}.resource.k8s.io" for k in ("deviceclasses", "resourceclaims", "resourceclaimtemplates", "resourceslices"))
    version = _items(DRA, "resourceclaims")[0]["apiVersion"]
    assert version in dra.kubectl("api-resources", "--api-group", "resource.k8s.io").stdout


# -- describe -------------------------------------------------------------------------------------

def test_describe_pod_shows_its_failed_scheduling_event(lab: Replay) -> None:
    out = lab.kubectl("describe", "pod", "-n", "lab", "exhausted").stdout
    event = next(e for e in _items(LAB, "events") if e["involvedObject"]["name"] == "exhausted")
    assert re.search(r"^Name:\s+exhausted$", out, re.M)
    events = out.split("\nEvents:", 1)[1]
    assert "FailedScheduling" in events and event["message"][:60] in events


def test_describe_node_allocates_four_gpus_from_its_non_terminated_pods(lab: Replay) -> None:
    out = lab.kubectl("describe", "node", "gpu-ok").stdout
    live = [p for p in _items(LAB, "pods") if p["spec"].get("nodeName") == "gpu-ok" and p["status"]["phase"] not in ("Succeeded", "Failed")]
    gpus = sum(int(c["resources"].get("limits", {}).get("nvidia.com/gpu", 0)) for p in live for c in p["spec"]["containers"])
    assert gpus == 4
    assert re.search(rf"^\s+nvidia\.com/gpu\s+{gpus}\s+{gpus}\s*$", out, re.M), out
    pods_section = out.split("Non-terminated Pods:", 1)[1].split("Allocated resources:", 1)[0]
    assert f"({len(live)} in total)" in pods_section
    assert all(p["metadata"]["name"] in pods_section for p in live) and "finished-job" not in pods_section


def test_describe_namespace_shows_its_quota(lab: Replay) -> None:
    out = lab.kubectl("describe", "namespace", "quota-lab").stdout
    q = _items(LAB, "resourcequotas")[0]
    assert f"Name:                    {q['metadata']['name']}" in out or q["metadata"]["name"] in out.split("Resource Quotas", 1)[1]
    assert re.search(r"requests\.nvidia\.com/gpu\s+%s\s+%s" % (q["status"]["used"]["requests.nvidia.com/gpu"], q["status"]["hard"]["requests.nvidia.com/gpu"]), out)


# -- discovery and version ---------------------------------------------------------------------------

KNOWN = {"pods", "nodes", "events", "namespaces", "resourcequotas", "runtimeclasses", "replicasets", "statefulsets",
         "daemonsets", "jobs", "resourceclaims", "resourceclaimtemplates", "resourceslices", "deviceclasses"}


def test_api_resources_lists_exactly_the_kinds_the_bundle_holds(lab: Replay) -> None:
    out = lab.kubectl("api-resources", "-o", "name").stdout.split()
    held = {p.stem for p in LAB.glob("*.json")} & KNOWN
    assert {n.split(".", 1)[0] for n in out} == held
    assert "secrets" not in out and "replicasets.apps" not in out


def test_version_is_the_bundles_server_version(lab: Replay) -> None:
    server = json.loads((LAB / "version.json").read_text())["serverVersion"]["gitVersion"]
    assert f"Server Version: {server}" in lab.kubectl("version").stdout


# -- what a bundle cannot do ---------------------------------------------------------------------------

def test_delete_is_refused_with_a_read_only_status(lab: Replay) -> None:
    done = lab.kubectl("delete", "pod", "-n", "lab", "exhausted", check=False)
    assert done.returncode != 0
    assert "MethodNotAllowed" in done.stderr and "read-only" in done.stderr
    assert "exhausted" in lab.kubectl("get", "pods", "-n", "lab", "-o", "name").stdout


def test_apply_is_refused_with_a_read_only_status_not_an_openapi_error(lab: Replay, tmp_path: Path) -> None:
    # A new pod (POST after kubectl's GET finds nothing) and a changed existing one (PATCH).
    for manifest in (LAB / "manifests" / "41-pod-quota-exceeded.yaml", LAB / "manifests" / "00-namespace-quota-lab.yaml"):
        changed = tmp_path / manifest.name
        changed.write_text(manifest.read_text().replace("metadata:\n", "metadata:\n  labels: {replayed: \"yes\"}\n", 1))
        done = lab.kubectl("apply", "-f", str(changed), check=False)
        assert done.returncode != 0, done.stdout
        assert "read-only" in done.stderr and "MethodNotAllowed" in done.stderr, done.stderr
        assert "openapi" not in done.stderr.lower()


def test_get_secrets_fails_clearly_and_the_api_names_the_file_not_collected(lab: Replay) -> None:
    done = lab.kubectl("get", "secrets", "-A", check=False)
    assert done.returncode != 0 and 'the server doesn\'t have a resource type "secrets"' in done.stderr
    raw = lab.kubectl("get", "--raw", "/api/v1/namespaces/lab/secrets", check=False)
    assert raw.returncode != 0 and "NotFound" in raw.stderr and "secrets.json was not collected" in raw.stderr
    status, body = lab.http("GET", "/apis/apps/v1/replicasets")
    doc = json.loads(body)
    assert status == 404 and doc["kind"] == "Status" and doc["reason"] == "NotFound" and doc["message"]


def test_every_write_verb_answers_405_status_and_openapi_v2_404(lab: Replay) -> None:
    for method in ("POST", "PUT", "PATCH", "DELETE"):
        status, body = lab.http(method, "/api/v1/namespaces/lab/pods/exhausted")
        doc = json.loads(body)
        assert (status, doc["kind"], doc["code"]) == (405, "Status", 405) and "read-only" in doc["message"]
    status, body = lab.http("GET", "/openapi/v2")
    assert status == 404 and json.loads(body)["kind"] == "Status"


def test_watch_returns_what_there_is_and_ends(lab: Replay) -> None:
    status, body = lab.http("GET", "/api/v1/namespaces/lab/pods?watch=true")
    events = [json.loads(line) for line in body.splitlines()]
    assert status == 200 and {e["type"] for e in events} == {"ADDED"}
    assert len(events) == len(_items(LAB, "pods"))
    status, body = lab.http("GET", "/api/v1/pods?watch=1&resourceVersion=316")
    assert status == 200 and body == b""


# -- gpu-triage's word beside kubectl's view -------------------------------------------------------------

def test_cause_annotations_show_in_custom_columns(lab: Replay) -> None:
    out = lab.kubectl("get", "pods", "-A", "-o",
                      r"custom-columns=NS:.metadata.namespace,NAME:.metadata.name,CAUSE:.metadata.annotations.gpu-triage\.io/cause").stdout
    _, rows = _rows(out)
    got = {f"{r[0]}/{r[1]}": r[2] for r in rows if r[2] != "<none>"}
    assert got == LAB_WORDS


# -- the kubectl plugin and the shell -------------------------------------------------------------------

def test_kubectl_plugin_analyze_prints_what_gpu_triage_analyze_prints(kubectl: str, tmp_path: Path) -> None:
    bindir = Path(sys.executable).parent
    plugin = bindir / "kubectl-gpu_triage"
    assert plugin.exists(), f"{plugin} missing: install the package (pip install -e .) so [project.scripts] makes it"
    env = {"PATH": f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}", "HOME": str(tmp_path)}
    via_kubectl = subprocess.run([kubectl, "gpu-triage", "analyze", "dumps/lab-seven-states-v1.36"], capture_output=True,
                                 text=True, env=env, cwd=REPO, timeout=120)
    direct = subprocess.run([str(bindir / "gpu-triage"), "analyze", "dumps/lab-seven-states-v1.36"], capture_output=True,
                            text=True, env=env, cwd=REPO, timeout=120)
    assert via_kubectl.returncode == direct.returncode == 0, via_kubectl.stderr
    assert via_kubectl.stdout == direct.stdout and "exhausted" in direct.stdout


def test_shell_runs_the_command_with_kubeconfig_and_stops_the_server_after(kubectl: str, tmp_path: Path) -> None:
    env = {**os.environ, "HOME": str(tmp_path)}
    script = f'echo "$KUBECONFIG" > {tmp_path}/kc-path; cp "$KUBECONFIG" {tmp_path}/kc; ' \
             f'kubectl --cache-dir {tmp_path}/cache get pods -n lab -o name; exit 3'
    done = subprocess.run([sys.executable, "-m", "analyzer", "shell", str(LAB), "--", "sh", "-c", script],
                          capture_output=True, text=True, env=env, cwd=REPO, timeout=120)
    assert done.returncode == 3, done.stderr
    assert sorted(done.stdout.split()) == sorted(f"pod/{p['metadata']['name']}" for p in _items(LAB, "pods"))
    url = re.search(r"server: http://127\.0\.0\.1:(\d+)", (tmp_path / "kc").read_text())
    assert url, "the kubeconfig must point at 127.0.0.1"
    with pytest.raises(OSError):
        conn = http.client.HTTPConnection("127.0.0.1", int(url.group(1)), timeout=5)
        conn.request("GET", "/version")
        conn.getresponse()


def test_serve_listens_on_127_0_0_1_only_by_default(lab: Replay) -> None:
    assert lab.url.startswith("http://127.0.0.1:")
    listening = Path("/proc/net/tcp").read_text()
    port_hex = f"{lab.port:04X}"
    rows = [ln.split() for ln in listening.splitlines()[1:] if ln.split()[1].endswith(":" + port_hex) and ln.split()[3] == "0A"]
    assert rows and all(r[1] == f"0100007F:{port_hex}" for r in rows)


# -- the storage kinds and Kueue's CRDs get the API server's own columns (printers.go; the CRDs' printer columns) --

MULTI_ATTACH = RECORDINGS / "multi-attach-v1.36"
KUEUE = RECORDINGS / "clusterqueue-missing-v1.36"


def test_storage_kinds_show_kubectls_columns(kubectl: str, tmp_path: Path) -> None:
    with serving(MULTI_ATTACH, tmp_path / "ma") as replay:
        header, rows = _rows(replay.kubectl("get", "pvc", "-A").stdout)
        assert header == ["NAMESPACE", "NAME", "STATUS", "VOLUME", "CAPACITY", "ACCESS MODES", "STORAGECLASS",
                          "VOLUMEATTRIBUTESCLASS", "AGE"]
        pvc = _items(MULTI_ATTACH, "persistentvolumeclaims")[0]
        assert rows[0][:4] == [pvc["metadata"]["namespace"], pvc["metadata"]["name"], pvc["status"]["phase"],
                               pvc["spec"]["volumeName"]]
        header, rows = _rows(replay.kubectl("get", "volumeattachments").stdout)
        assert header == ["NAME", "ATTACHER", "PV", "NODE", "ATTACHED", "AGE"]
        va = _items(MULTI_ATTACH, "volumeattachments")[0]
        assert rows[0][1:5] == [va["spec"]["attacher"], va["spec"]["source"]["persistentVolumeName"],
                                va["spec"]["nodeName"], "true"]
        header, _ = _rows(replay.kubectl("get", "pv").stdout)
        assert header == ["NAME", "CAPACITY", "ACCESS MODES", "RECLAIM POLICY", "STATUS", "CLAIM", "STORAGECLASS",
                          "VOLUMEATTRIBUTESCLASS", "REASON", "AGE"]
        header, rows = _rows(replay.kubectl("get", "storageclasses").stdout)
        assert header == ["NAME", "PROVISIONER", "RECLAIMPOLICY", "VOLUMEBINDINGMODE", "ALLOWVOLUMEEXPANSION", "AGE"]


def test_kueue_kinds_show_their_crds_printer_columns(kubectl: str, tmp_path: Path) -> None:
    with serving(KUEUE, tmp_path / "kueue") as replay:
        header, rows = _rows(replay.kubectl("get", "workloads.kueue.x-k8s.io", "-A").stdout)
        assert header == ["NAMESPACE", "NAME", "QUEUE", "RESERVED IN", "ADMITTED", "FINISHED", "AGE"]
        wl = _items(KUEUE, "workloads.kueue.x-k8s.io")
        assert {r[1]: r[2] for r in rows} == {w["metadata"]["name"]: w["spec"]["queueName"] for w in wl}
        header, _ = _rows(replay.kubectl("get", "localqueues.kueue.x-k8s.io", "-A").stdout)
        # Kueue's LocalQueue and ClusterQueue CRDs declare no Age column, and the server adds none.
        assert header == ["NAMESPACE", "NAME", "CLUSTERQUEUE", "PENDING WORKLOADS", "ADMITTED WORKLOADS"]
        header, _ = _rows(replay.kubectl("get", "clusterqueues.kueue.x-k8s.io").stdout)
        assert header == ["NAME", "COHORT", "PENDING WORKLOADS"]
