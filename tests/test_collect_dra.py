"""The collector reads the Dynamic Resource Allocation kinds (shared/spec/dra.md
"What the collector adds"), replayed from the real v1.36.2 recordings in
tests/data/recordings by the stand-in kubectl.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from test_collect import (MARKER, assert_valid, entry, expected_redaction,
                          load_script, manifest_of)
from helpers import RECORDINGS, run_cli
from stand_in import Kube

DRA_RECORDINGS = ["dra-no-slice-v1.36", "dra-exhausted-v1.36"]
DRA_FILES = ["resourceclaims.json", "resourceclaimtemplates.json", "resourceslices.json",
             "deviceclasses.json"]
DRA_KINDS = ["resourceclaims", "resourceclaimtemplates", "resourceslices", "deviceclasses",
             "devicetaintrules"]
# kubectl's words when discovery does not know the type (cli-runtime
# pkg/resource/builder.go mappingFor, printed by kubectl/pkg/cmd/util/helpers.go
# checkErr): the unqualified plural, even when asked for the qualified name.
NOT_SERVED = 'error: the server doesn\'t have a resource type "{}"\n'


def replay(kube: Kube, recording: str) -> Path:
    """Make the stand-in kubectl replay a recorded DRA cluster."""
    src = RECORDINGS / recording
    for f in kube.data.iterdir():
        f.unlink()
    for f in src.glob("*.json"):
        shutil.copy(f, kube.data / f.name)
    return src



@pytest.mark.parametrize("recording", DRA_RECORDINGS)
def test_dra_files_are_the_recorded_kubectl_output(kube: Kube, recording: str) -> None:
    """--no-redact: the four DRA files are the recording byte for byte. With
    redaction (the default), a file holding no env value and no
    last-applied annotation is still byte for byte; the others differ only in
    the annotation (kubectl apply wrote it on the DeviceClass, templates and
    slices published by hand)."""
    src = replay(kube, recording)
    r = kube.collect("--no-redact")
    assert r.returncode == 0, r.stderr
    bundle = kube.bundle(r)
    m = manifest_of(bundle)
    assert_valid("manifest", m)
    for name in DRA_FILES:
        assert (bundle / name).read_bytes() == (src / name).read_bytes(), name
        e = entry(m, name)
        assert e["status"] == "ok"
        assert e["items"] == len(json.loads((src / name).read_text())["items"])
    # Served but empty on this server: an empty List, as kubectl prints it.
    assert json.loads((bundle / "devicetaintrules.json").read_text())["items"] == []

    r = kube.collect()
    assert r.returncode == 0, r.stderr
    bundle = kube.bundle(r)
    m = manifest_of(bundle)
    annotated = 0
    for name in DRA_FILES:
        source = json.loads((src / name).read_text())
        want, env, ann = expected_redaction(source)
        assert env == 0
        assert entry(m, name)["redactions"] == {"env-value": 0, "last-applied-configuration": ann}
        if ann:
            annotated += 1
            assert (bundle / name).read_bytes() == (json.dumps(want, indent=4, ensure_ascii=False) + "\n").encode()
            assert MARKER in (bundle / name).read_text()
        else:
            assert (bundle / name).read_bytes() == (src / name).read_bytes(), name
    assert annotated >= 2  # the DeviceClass and the claim template carry one in both recordings
    # What the claims say is kept whole: allocation, reservedFor, the version served.
    claims = json.loads((bundle / "resourceclaims.json").read_text())
    assert claims == json.loads((src / "resourceclaims.json").read_text())
    assert {c["apiVersion"] for c in claims["items"]} == {"resource.k8s.io/v1"}


def test_dra_kinds_are_asked_for_by_their_qualified_names(kube: Kube) -> None:
    """`resourceclaims.resource.k8s.io`, never `resourceclaims`: a CRD of the
    same short name (a vendor's own ResourceClaim) cannot answer instead."""
    r = kube.collect("-n", "lab")
    assert r.returncode == 0, r.stderr
    gets = [a for a in kube.argvs() if a[0] == "get"]
    for kind in DRA_KINDS:
        (argv,) = [a for a in gets if a[1].split(".")[0] == kind]
        assert argv[1] == f"{kind}.resource.k8s.io"
        # Claims and templates live in namespaces; slices, classes, taint rules do not.
        if kind in ("resourceclaims", "resourceclaimtemplates"):
            assert argv[2:4] == ["-n", "lab"]
        else:
            assert "-n" not in argv and "-A" not in argv


def test_the_kinds_table_is_one_plain_importable_list() -> None:
    """KINDS: (file, resource, group, namespaced, required, only) rows, the
    order the manifest lists them; pods and nodes are what analysis needs."""
    kinds = load_script().KINDS
    assert all(isinstance(k, tuple) and len(k) == 6 for k in kinds)
    files = [k.file for k in kinds]
    assert len(set(files)) == len(files)
    assert [k.file for k in kinds if k.required] == ["pods.json", "nodes.json"]
    dra = [k for k in kinds if k.group == "resource.k8s.io"]
    assert [k.file for k in dra] == [f"{k}.json" for k in DRA_KINDS]
    for k in kinds:
        plural = k.file[:-len(".json")]
        if k.only:  # the status ConfigMap: one object by name (tests/test_collect_autoscalers.py)
            continue
        # Qualified wherever a CRD of the same plural could answer instead: DRA, storage and admission kinds, custom
        # resources.
        qualified = k.group in ("resource.k8s.io", "storage.k8s.io", "admissionregistration.k8s.io",
                                "discovery.k8s.io") and not plural.endswith("." + k.group)
        assert k.resource == (f"{plural}.{k.group}" if qualified else plural)
    assert {k.file for k in kinds if k.namespaced} >= {"resourceclaims.json", "resourceclaimtemplates.json"}


def test_a_server_without_the_dra_group_is_not_a_failure(kube: Kube) -> None:
    """An older server (no resource.k8s.io): each DRA kind is "not-served",
    no file, the bundle is complete (exit 0) and validates."""
    r = kube.collect(FAKE_KUBECTL_UNSERVED="resource.k8s.io")
    assert r.returncode == 0, r.stderr
    bundle = kube.bundle(r)
    m = manifest_of(bundle)
    assert_valid("manifest", m)
    assert m["partial"] is False
    for kind in DRA_KINDS:
        e = entry(m, f"{kind}.json")
        assert e["status"] == "not-served"
        assert e["exitStatus"] == 1 and e["stderr"] == NOT_SERVED.format(kind)
        assert "bytes" not in e and "sha256" not in e and "error" not in e
        assert not (bundle / f"{kind}.json").exists()
        assert f"{kind}: not served by this cluster" in r.stderr.splitlines()
    assert r.stderr.splitlines()[-1].startswith("complete: ")
    assert entry(m, "pods.json")["status"] == "ok"
    v = run_cli("validate", str(bundle))
    assert v.returncode == 0, v.stdout + v.stderr


def test_not_served_asks_each_namespace_only_once(kube: Kube) -> None:
    """The resource type is missing cluster-wide: with -n a b, one `get` is
    enough to know, and the manifest keeps that one command."""
    r = kube.collect("-n", "lab", "-n", "quota-lab", FAKE_KUBECTL_UNSERVED="resource.k8s.io")
    assert r.returncode == 0, r.stderr
    claims = [a for a in kube.argvs() if a[:2] == ["get", "resourceclaims.resource.k8s.io"]]
    assert len(claims) == 1 and claims[0][2:4] == ["-n", "lab"]
    e = entry(manifest_of(kube.bundle(r)), "resourceclaims.json")
    assert e["status"] == "not-served" and [c["command"][1:5] for c in e["commands"]] == [
        ["get", "resourceclaims.resource.k8s.io", "-n", "lab"]]


def test_a_forbidden_dra_kind_is_a_failure_and_the_bundle_partial(kube: Kube) -> None:
    """RBAC without `list` on resourceslices is not "not served": failed,
    partial (exit 3), named on the last line."""
    r = kube.collect(FAKE_KUBECTL_FAIL="resourceslices=forbidden")
    assert r.returncode == 3, r.stderr
    bundle = kube.bundle(r)
    m = manifest_of(bundle)
    assert_valid("manifest", m)
    assert m["partial"] is True
    e = entry(m, "resourceslices.json")
    assert e["status"] == "failed" and e["exitStatus"] == 1
    assert e["stderr"].startswith("Error from server (Forbidden): resourceslices.resource.k8s.io is forbidden")
    assert 'in API group "resource.k8s.io"' in e["stderr"]
    assert not (bundle / "resourceslices.json").exists()
    assert entry(m, "resourceclaims.json")["status"] == "ok"
    assert r.stderr.splitlines()[-1] == ("partial: 1 kind(s) could not be read: resourceslices "
                                         "(see manifest.json)")


def test_not_served_is_only_for_groups_a_server_may_lack(kube: Kube) -> None:
    """runtimeclasses (node.k8s.io, GA since v1.20) missing is still a failure."""
    r = kube.collect(FAKE_KUBECTL_FAIL="runtimeclasses=notfound")
    assert r.returncode == 3
    assert entry(manifest_of(kube.bundle(r)), "runtimeclasses.json")["status"] == "failed"
