"""The CSI, admission and EndpointSlice kinds in replay get printers.go's columns (replay/storage_tables.py,
replay/admission_tables.py), and LimitRange the API server's default table (Name, Created At), read by the real
kubectl. The CSI objects are the multi-attach recording's (Rook's real CSIDriver and CSINodes); the admission
objects are the admission tests' (tests/admission_fixtures.py); the CSIStorageCapacity is shaped as the
storage.k8s.io/v1 API defines it (no recording holds one)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from admission_fixtures import binding, container_limit, endpointslice, istio_injector, kyverno, limitrange, policy
from analyzer.bundle.catalog import (CSISTORAGECAPACITIES, ENDPOINTSLICES, LIMITRANGES, MUTATINGWEBHOOKCONFIGURATIONS,
                                     VALIDATINGADMISSIONPOLICIES, VALIDATINGADMISSIONPOLICYBINDINGS,
                                     VALIDATINGWEBHOOKCONFIGURATIONS)
from helpers import RECORDINGS
from test_replay import serving
from test_replay_crd_columns import _rows

MULTI_ATTACH = RECORDINGS / "multi-attach-v1.36"


def _bundle(tmp: Path) -> Path:
    root = tmp / "builtin"
    shutil.copytree(MULTI_ATTACH, root)
    capacity = {"apiVersion": "storage.k8s.io/v1", "kind": "CSIStorageCapacity",
                "metadata": {"name": "csisc-7x2kq", "namespace": "rook-ceph", "creationTimestamp": "2026-12-01T20:00:00Z"},
                "storageClassName": "local-nvme", "capacity": "1536Gi",
                "nodeTopology": {"matchLabels": {"kubernetes.io/hostname": "g1"}}}
    slice_ = endpointslice(("kyverno", "kyverno-svc"), True, True, True, False)
    with_param = binding("gpu-max-binding", "gpu-max")
    with_param["spec"]["paramRef"] = {"name": "gpu-limits", "namespace": "lab", "parameterNotFoundAction": "Deny"}
    gated = policy("gpu-max-param")
    gated["spec"]["paramKind"] = {"apiVersion": "v1", "kind": "ConfigMap"}
    files = {CSISTORAGECAPACITIES: [capacity],
             LIMITRANGES: [limitrange("gpu-limits", "lab", container_limit(max={"nvidia.com/gpu": "1"}))],
             VALIDATINGWEBHOOKCONFIGURATIONS: [kyverno()], MUTATINGWEBHOOKCONFIGURATIONS: [istio_injector()],
             VALIDATINGADMISSIONPOLICIES: [policy("gpu-max"), gated],
             VALIDATINGADMISSIONPOLICYBINDINGS: [with_param, binding("plain-binding", "gpu-max")],  # name order, as listed
             ENDPOINTSLICES: [slice_]}
    for kind, items in files.items():
        (root / kind.file).write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    return root


def test_kubectl_get_shows_printers_go_columns_for_csi_admission_and_endpointslices(kubectl: str, tmp_path: Path) -> None:
    root = _bundle(tmp_path)
    with serving(root, tmp_path / "serve") as replay:
        header, rows = _rows(replay.kubectl("get", "csinodes").stdout)
        assert header == ["NAME", "DRIVERS", "AGE"] and [r[:2] for r in rows] == [["c1", "1"], ["g1", "1"], ["g2", "1"]]
        header, rows = _rows(replay.kubectl("get", "csidrivers").stdout)
        assert header == ["NAME", "ATTACHREQUIRED", "PODINFOONMOUNT", "STORAGECAPACITY", "TOKENREQUESTS",
                          "REQUIRESREPUBLISH", "MODES", "AGE"]
        assert rows[0][:7] == ["rook-ceph.rbd.csi.ceph.com", "true", "false", "false", "<unset>", "false", "Persistent"]
        header, rows = _rows(replay.kubectl("get", "csistoragecapacities", "-A").stdout)
        assert (header, rows) == (["NAMESPACE", "NAME", "STORAGECLASSNAME", "CAPACITY"],
                                  [["rook-ceph", "csisc-7x2kq", "local-nvme", "1536Gi"]])

        header, rows = _rows(replay.kubectl("get", "validatingwebhookconfigurations").stdout)
        assert header == ["NAME", "WEBHOOKS", "AGE"] and rows[0][:2] == ["kyverno-resource-validating-webhook-cfg", "1"]
        header, rows = _rows(replay.kubectl("get", "mutatingwebhookconfigurations").stdout)
        assert header == ["NAME", "WEBHOOKS", "AGE"] and rows[0][:2] == ["istio-sidecar-injector", "1"]
        header, rows = _rows(replay.kubectl("get", "validatingadmissionpolicies").stdout)
        assert header == ["NAME", "VALIDATIONS", "PARAMKIND", "AGE"]
        assert [r[:3] for r in rows] == [["gpu-max", "1", "<unset>"], ["gpu-max-param", "1", "v1/ConfigMap"]]
        header, rows = _rows(replay.kubectl("get", "validatingadmissionpolicybindings").stdout)
        assert header == ["NAME", "POLICYNAME", "PARAMREF", "AGE"]
        assert [r[:3] for r in rows] == [["gpu-max-binding", "gpu-max", "lab/gpu-limits"],
                                         ["plain-binding", "gpu-max", "<unset>"]]
        header, rows = _rows(replay.kubectl("get", "endpointslices", "-A").stdout)
        assert header == ["NAMESPACE", "NAME", "ADDRESSTYPE", "PORTS", "ENDPOINTS", "AGE"]
        # formatDiscoveryEndpoints: three addresses, then how many more
        assert rows[0][1:5] == ["kyverno-svc-8x7qz", "IPv4", "9443", "10.244.1.10,10.244.1.11,10.244.1.12 + 1 more..."]

        header, rows = _rows(replay.kubectl("get", "limitranges", "-A").stdout)
        served = json.loads(replay.kubectl("get", "limitranges", "-A", "-o", "json").stdout)["items"][0]
        assert (header, rows) == (["NAMESPACE", "NAME", "CREATED AT"],
                                  [["lab", "gpu-limits", served["metadata"]["creationTimestamp"]]])
