"""The collector reads the autoscalers' kinds (shared/spec/autoscalers.md "What the collector adds"), replayed by
the stand-in kubectl from the real recordings in tests/data/recordings: Karpenter's NodePools and NodeClaims,
ProvisioningRequests (each "not served" where its CRD is absent) and cluster-autoscaler's status ConfigMap, the
one ConfigMap ever read, by field selector.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from helpers import RECORDINGS, run_cli
from stand_in import Kube
from test_collect import assert_valid, entry, manifest_of

CA = RECORDINGS / "ca-scale-up-in-flight-v1.36"
KARPENTER = RECORDINGS / "karpenter-nodepool-limits-v1.36"
CA_STATUS = "configmaps.cluster-autoscaler-status.json"
CRDS = ["nodepools.karpenter.sh", "nodeclaims.karpenter.sh", "provisioningrequests.autoscaling.x-k8s.io"]
NOT_SERVED = 'error: the server doesn\'t have a resource type "{}"\n'


def replay(kube: Kube, src: Path) -> None:
    for f in kube.data.iterdir():
        f.unlink()
    for f in src.glob("*.json"):
        shutil.copy(f, kube.data / f.name)


@pytest.fixture
def kube(tmp_path: Path) -> Kube:
    return Kube(tmp_path)


def test_karpenter_objects_are_the_recorded_kubectl_output(kube: Kube) -> None:
    replay(kube, KARPENTER)
    r = kube.collect()
    assert r.returncode == 0, r.stderr
    bundle = kube.bundle(r)
    m = manifest_of(bundle)
    assert_valid("manifest", m)
    for name in ("nodepools.karpenter.sh", "nodeclaims.karpenter.sh"):
        assert (bundle / f"{name}.json").read_bytes() == (KARPENTER / f"{name}.json").read_bytes(), name
        e = entry(m, f"{name}.json")
        assert e["status"] == "ok" and e["command"][:3] == ["kubectl", "get", name] and "-A" not in e["command"]
    # Installed CRD, no object: an empty List, not a failure.
    assert json.loads((bundle / "provisioningrequests.autoscaling.x-k8s.io.json").read_text())["items"] == []
    v = run_cli("validate", str(bundle))
    assert v.returncode == 0, v.stdout + v.stderr


def test_the_status_configmap_is_the_only_configmap_and_read_by_name(kube: Kube) -> None:
    """`get configmap -n kube-system --field-selector metadata.name=cluster-autoscaler-status`, whatever -n
    says: another ConfigMap in kube-system (a credential, say) is never in the bundle."""
    replay(kube, CA)
    recorded = json.loads((CA / CA_STATUS).read_text())
    other = json.loads(json.dumps(recorded["items"][0]))
    other["metadata"].update(name="aws-auth", uid="x")
    other["data"] = {"mapRoles": "- rolearn: arn:aws:iam::1234:role/secret-role"}
    (kube.data / CA_STATUS).write_text(json.dumps({**recorded, "items": [other, recorded["items"][0]]}, indent=4))
    r = kube.collect("-n", "ml")
    assert r.returncode == 0, r.stderr
    bundle = kube.bundle(r)
    got = json.loads((bundle / CA_STATUS).read_text())
    assert got["items"] == recorded["items"]
    assert b"secret-role" not in b"".join(p.read_bytes() for p in bundle.rglob("*.json"))
    e = entry(manifest_of(bundle), CA_STATUS)
    assert e["command"][1:8] == ["get", "configmap", "-n", "kube-system", "--field-selector",
                                 "metadata.name=cluster-autoscaler-status", "-o"]
    gets = [a for a in kube.argvs() if "configmap" in a]
    assert len(gets) == 1  # not once per -n namespace


def test_clusters_without_karpenter_or_provisioning_requests_are_not_a_failure(kube: Kube) -> None:
    r = kube.collect(FAKE_KUBECTL_UNSERVED="karpenter.sh,autoscaling.x-k8s.io")
    assert r.returncode == 0, r.stderr
    bundle = kube.bundle(r)
    m = manifest_of(bundle)
    assert m["partial"] is False
    for name in CRDS:
        e = entry(m, f"{name}.json")
        assert e["status"] == "not-served" and e["stderr"] == NOT_SERVED.format(name.split(".")[0])
        assert not (bundle / f"{name}.json").exists()
    # No cluster-autoscaler: the field selector matches nothing, an empty List.
    assert json.loads((bundle / CA_STATUS).read_text())["items"] == []
    v = run_cli("validate", str(bundle))
    assert v.returncode == 0, v.stdout + v.stderr


def test_the_guard_refuses_every_other_configmap_read() -> None:
    from test_collect import load_script

    k = load_script().Kubectl("kubectl", [])
    ok = ["get", "configmap", "-n", "kube-system", "--field-selector", "metadata.name=cluster-autoscaler-status",
          "-o", "json"]
    k.argv(ok)
    for bad in (ok[:2] + ["-A", "-o", "json"], ok[:2] + ["-n", "kube-system", "-o", "json"],
                ["get", "configmap", "-n", "default"] + ok[4:],
                ok[:5] + ["metadata.name=aws-auth", "-o", "json"], ["get", "configmaps"] + ok[2:],
                ok + ["--show-managed-fields"]):
        with pytest.raises(AssertionError):
            k.argv(bad)
