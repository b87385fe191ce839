"""Answers a person reads: evidence said as sentences, and the first lines of `why --explain` deciding.

Every evidence key of every verdict of every bundle in the repository has a renderer (analyzer/prose.py)
and reads as prose: no JSON, no Python, outside the messages it quotes. The action on line two is this pod's:
too large, a volume held by another node, a node on its way are named there, and a CPU node is never told to
restore a device plugin.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import analyse_dir, gpu_node, gpu_pod, make_bundle
from helpers import LAB, RECORDINGS, run_cli

from analyzer import prose

BUNDLES: dict[str, Path] = {LAB.name + " (dumps)": LAB, **{p.name: p for p in sorted(RECORDINGS.iterdir()) if p.is_dir()}}
_QUOTED = re.compile(r'"[^\n]*"')  # a quoted message is the component's own words, kept as they are
_NOT_PROSE = re.compile(r"\{|\[\{|=True|=False|\": |see -o json")


@pytest.mark.parametrize("name", sorted(BUNDLES))
def test_every_evidence_key_of_every_bundle_reads_as_sentences(name: str) -> None:
    verdicts = analyse_dir(BUNDLES[name])
    renderers = prose.registered()  # the classifier has imported every writer of evidence by now
    for key, verdict in verdicts.items():
        for field, value in verdict.evidence.items():
            assert field in renderers, f"{name} {key}: evidence key {field!r} has no renderer (@prose.says)"
            for line in prose.lines({field: value}):
                assert not _NOT_PROSE.search(_QUOTED.sub('"…"', line)), f"{name} {key} {field}: {line}"


def test_one_fact_is_said_once_for_a_waiting_container() -> None:
    v = analyse_dir(RECORDINGS / "multi-attach-v1.36")["lab/trainer-6bd8c5b5-4h9dk"]
    said = prose.lines(v.evidence)
    assert sum("ContainerCreating" in line for line in said) == 1, said
    assert sum("in nodes.json" in line or "Ready" in line for line in said) == 1, said


def test_a_kubelet_rejection_quotes_the_kubelets_event_once() -> None:
    # unexpected-admission-error-v1.36: the pod's one event is the kubelet's UnexpectedAdmissionError; the
    # rejection (status.reason/message) and that event say the same thing, so the event's text is quoted once.
    v = analyse_dir(RECORDINGS / "unexpected-admission-error-v1.36")["lab/infer-ddc5f997d-9pshn"]
    said = prose.lines(v.evidence)
    assert sum("Requested: 1, Available: 0" in line for line in said) == 2, said  # the event, and the pod's status
    assert "The kubelet's UnexpectedAdmissionError event at 2026-12-01T23:05:52.000000Z agrees." in said
    assert any(line.startswith("Event: Warning UnexpectedAdmissionError from the kubelet") for line in said), said


def _explain(bundle: Path, pod: str, *extra: str) -> list[str]:
    result = run_cli("why", bundle, pod, "--explain", *extra)
    assert result.returncode == 0, result.stderr
    return result.stdout.splitlines()


def test_multi_attach_names_the_node_holding_the_volume() -> None:
    # multi-attach-v1.36: volumeattachments.json attaches the claim's volume to g2; the pod is bound to g1.
    lines = _explain(RECORDINGS / "multi-attach-v1.36", "lab/trainer-6bd8c5b5-4h9dk")
    assert lines[0].endswith(": volume-mount")
    assert "next action:" in lines[1] and "node g2" in lines[1] and "lab/checkpoints" in lines[1]
    assert "reason:" in lines[2] and "Multi-Attach" in lines[2] and "g2" in lines[2]


def test_a_pod_larger_than_any_node_is_told_so_in_its_action(tmp_path: Path) -> None:
    bundle = make_bundle(tmp_path, pods=[gpu_pod("big", gpus=8)], nodes=[gpu_node("g1", gpus="4"), gpu_node("g2", gpus="4")])
    lines = _explain(bundle, "lab/big")
    assert lines[0] == "lab/big: exhausted"
    assert lines[1].split(":", 1)[1].strip() == ("no node has 8 nvidia.com/gpu even empty: the largest has 4; "
                                                 "shrink the request, or add a node with 8")
    assert run_cli("why", bundle, "lab/big", "-o", "json").stdout.count("no node has 8 nvidia.com/gpu") == 1
    # No single change fits 8 on a node of 4: no node is "one change away".
    near = lines[lines.index("Nearest nodes (one change away, whatever the word):") + 1]
    assert near.strip().startswith("no node is one change away"), near
    # The table's row, where a person meets the word first, names the too-large sub-case (causes.md) too.
    row = " ".join(run_cli("analyze", bundle, "-o", "wide").stdout.splitlines()[1].split())
    assert row.startswith("lab/big exhausted no candidate (2) has room, even empty: it asks more nvidia.com/gpu than "
                          "any has (too large): g1, g2: nvidia.com/gpu: 4 free of 4 allocatable, 8 requested"), row


def test_a_pod_short_now_is_not_called_too_large(tmp_path: Path) -> None:
    from conftest import bound_pod
    bundle = make_bundle(tmp_path, pods=[bound_pod("holder", "g1", gpus=4), gpu_pod("small", gpus=2)],
                         nodes=[gpu_node("g1", gpus="4")])
    row = run_cli("analyze", bundle, "-o", "wide").stdout.splitlines()[1]
    assert "no candidate (1) has room: g1: nvidia.com/gpu: 0 free of 4 allocatable, 2 requested" in row
    assert "too large" not in row


def test_nearest_nodes_that_read_alike_are_one_line_and_the_rest_are_counted_not_promised(tmp_path: Path) -> None:
    # Seven nodes advertise nvidia.com/gpu, the pod asks a MIG profile none has: each node's one change reads the
    # same, so --explain says it once with the nodes named; the nodes beyond the five kept are counted.
    nodes = [gpu_node(f"g{i}") for i in range(7)]
    bundle = make_bundle(tmp_path, pods=[gpu_pod("mig", resource="nvidia.com/mig-1g.10gb")], nodes=nodes)
    lines = _explain(bundle, "lab/mig")
    at = lines.index("Nearest nodes (one change away, whatever the word):")
    section = " ".join(" ".join(lines[at + 1:lines.index("", at)]).split())
    assert section == ("g0, g1, g2 (+2 more): only no nvidia.com/mig-1g.10gb in status.capacity; advertises "
                       "nvidia.com/gpu (4) (ask for the name it advertises, or change the device plugin's sharing or MIG "
                       "configuration) … and 2 more nodes one change away (counted, not listed)")
    v = analyse_dir(bundle)["lab/mig"]
    assert len(v.evidence["nearest"]) == 5 and v.evidence["nearest_more"] == 2  # -o json keeps each node's entry


def test_a_fragmented_request_names_where_the_free_units_are(tmp_path: Path) -> None:
    from conftest import bound_pod
    pods = [gpu_pod("two", gpus=2), bound_pod("a", "g1", gpus=3), bound_pod("b", "g2", gpus=3)]
    bundle = make_bundle(tmp_path, pods=pods, nodes=[gpu_node("g1", gpus="4"), gpu_node("g2", gpus="4")])
    lines = _explain(bundle, "lab/two")
    assert lines[0] == "lab/two: exhausted"
    assert "no single node has 2 nvidia.com/gpu free: 2 are free over 2 nodes" in lines[1]
    row = " ".join(run_cli("analyze", bundle, "-o", "wide").stdout.splitlines()[1].split())
    assert row.startswith("lab/two exhausted no candidate (2) has room, though together they have 2 nvidia.com/gpu "
                          "free (fragmented): g1, g2: nvidia.com/gpu: 1 free of 4 allocatable, 2 requested"), row


def test_a_cpu_node_is_never_told_to_restore_a_device_plugin() -> None:
    # ca-scale-up-in-flight-v1.36: two m6i.2xlarge nodes with no GPU and no GPU label beside one g5 node.
    out = "\n".join(_explain(RECORDINGS / "ca-scale-up-in-flight-v1.36", "ml/embed-corpus-rwtjk"))
    assert "ip-10-0-21-117" in out  # removed at the advertised stage, as the scheduler does
    assert "restore the device plugin" not in out
    # A GPU-labelled node without the resource still is (the lab's gpu-noplugin).
    lab = "\n".join(_explain(LAB, "lab/no-gpu-node"))
    assert "gpu-noplugin: only no nvidia.com/gpu in status.capacity (restore the device plugin or driver)" in lab


def test_scaling_up_names_the_node_group_and_when_it_was_asked() -> None:
    lines = _explain(RECORDINGS / "ca-scale-up-in-flight-v1.36", "ml/embed-corpus-rwtjk")
    assert lines[0].endswith(": scaling-up")
    assert "eks-gpu-a10g-7cc9e2b1-41d8-b3f2-5e07-9a1f6c2d8e43" in lines[1] and "2026-12-01T22:53:34Z" in lines[1]


def test_json_next_action_is_the_pods_own() -> None:
    import json
    out = json.loads(run_cli("why", RECORDINGS / "multi-attach-v1.36", "lab/trainer-6bd8c5b5-4h9dk", "-o", "json").stdout)
    verdict = out["verdicts"][0] if "verdicts" in out else out
    assert "node g2" in verdict["next_action"]


# -- names as kubectl prints them ---------------------------------------------------------------------------

@pytest.mark.parametrize("kind", ["job", "Job", "JOB", "jobs", "jobs.batch", "job.batch"])
def test_an_owner_is_named_as_kubectl_prints_its_kind(kind: str) -> None:
    result = run_cli("why", RECORDINGS / "clusterqueue-missing-v1.36", f"team-a/{kind}/finetune-llama-8b")
    assert (result.returncode, result.stdout.strip()) == (0, "queue-misconfigured"), result.stderr


def test_why_takes_the_namespace_as_kubectl_does() -> None:
    assert run_cli("why", LAB, "exhausted", "-n", "lab").stdout.strip() == "exhausted"
    assert run_cli("why", LAB, "lab/exhausted", "-n", "lab").stdout.strip() == "exhausted"
    owner = run_cli("why", RECORDINGS / "clusterqueue-missing-v1.36", "Job/finetune-llama-8b", "--namespace", "team-a")
    assert owner.stdout.strip() == "queue-misconfigured", owner.stderr


# -- the running branch --------------------------------------------------------------------------------------

def test_a_running_pod_says_what_it_requests() -> None:
    lines = _explain(LAB, "lab/filler-a")
    assert lines[0] == "lab/filler-a: running"
    assert "asking for 3 nvidia.com/gpu" in lines[2]


def test_a_running_pod_without_an_accelerator_says_so_with_its_intent(tmp_path: Path) -> None:
    from conftest import bound_pod
    pod = bound_pod("smi", "g1", gpus=None)
    pod["spec"]["tolerations"] = [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
    bundle = make_bundle(tmp_path, pods=[pod], nodes=[gpu_node("g1")])
    lines = _explain(bundle, "lab/smi")
    assert lines[0] == "lab/smi: no-gpu-request"  # GPU intent and no request: the word stands
    plain = make_bundle(tmp_path / "plain", pods=[bound_pod("smi", "g1", gpus=None)], nodes=[gpu_node("g1")])
    lines = _explain(plain, "lab/smi")
    assert lines[0] == "lab/smi: running" and "asking for no accelerator" in lines[2]
    assert "no GPU is given to it" in lines[1]


def test_a_finished_pod_is_not_told_it_runs() -> None:
    lines = _explain(LAB, "lab/finished-job")
    assert "Succeeded" in lines[2] and "ran and ended" in lines[2] and "2 nvidia.com/gpu" in lines[2]
    assert "it has finished" in lines[1]


def test_the_device_plugins_own_pod_is_never_told_to_request_a_gpu(tmp_path: Path) -> None:
    # As NVIDIA's k8s-device-plugin DaemonSet runs: a toleration for nvidia.com/gpu, the kubelet's device-plugins
    # directory mounted, no GPU asked for.
    from conftest import bound_pod
    pod = bound_pod("nvidia-device-plugin-daemonset-x7k2p", "g1", gpus=None, namespace="kube-system")
    pod["spec"]["tolerations"] = [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
    pod["spec"]["volumes"] = [{"name": "device-plugin", "hostPath": {"path": "/var/lib/kubelet/device-plugins"}}]
    bundle = make_bundle(tmp_path, pods=[pod], nodes=[gpu_node("g1")])
    out = run_cli("why", bundle, "kube-system/nvidia-device-plugin-daemonset-x7k2p", "--explain").stdout
    assert out.splitlines()[0].endswith(": running")
    assert "add the accelerator limit" not in out and "a device plugin" in out


# -- width ---------------------------------------------------------------------------------------------------

def test_why_explain_and_nodes_fit_the_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    explain = run_cli("why", RECORDINGS / "multi-attach-v1.36", "lab/trainer-6bd8c5b5-4h9dk", "--explain").stdout
    nodes = run_cli("nodes", LAB).stdout
    for out in (explain, nodes):
        long = [line for line in out.splitlines() if len(line) > 80 and " " in line.strip()]
        assert not long, long
    assert "  reason:      Multi-Attach" in explain  # a continuation sits under the value, not under the label
    assert "\n               " in explain
    assert "rows 7-10" not in nodes


def test_in_a_pipe_every_line_stays_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
    explain = run_cli("why", RECORDINGS / "multi-attach-v1.36", "lab/trainer-6bd8c5b5-4h9dk", "--explain").stdout
    assert any(line.startswith("  reason:      Multi-Attach") and line.endswith("another\"") for line in explain.splitlines())
    nodes = run_cli("nodes", LAB).stdout.splitlines()
    assert nodes[0].startswith("NODE") and nodes[0].endswith("PENDING WANTING IT")


# -- the smaller things a first hour meets ----------------------------------------------------------------

def test_top_level_help_never_cuts_a_summary(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "100")
    out = run_cli("--help").stdout
    commands = out.split("Commands:", 1)[1].split("Options:", 1)[0]
    assert "..." not in commands
    assert "Version" not in commands and "Print the version (also: gpu-triage --version)" in " ".join(commands.split())


def test_a_directory_of_bundles_suggests_the_bundle_inside_it() -> None:
    result = run_cli("analyze", "dumps")
    assert result.returncode == 2
    assert "did you mean dumps/lab-seven-states-v1.36?" in result.stderr


def test_the_dra_header_says_where_the_devices_ran_out() -> None:
    # dra-exhausted-v1.36: dx1's two devices are held by holder-1 and holder-2.
    out = "\n".join(_explain(RECORDINGS / "dra-exhausted-v1.36", "lab/waiter"))
    assert "  dx1: no device free (all held)" in out and "dx1: free" not in out


def test_a_queue_answer_names_the_queue_to_fix() -> None:
    lines = _explain(RECORDINGS / "clusterqueue-missing-v1.36", "team-a/eval-llama-8b")
    assert lines[0].endswith(": queue-misconfigured")
    assert "create ClusterQueue team-a-cq (LocalQueue team-a/team-a-queue points to it)" in lines[1]
    assert "ClusterQueue team-a-cq" in lines[2]


def test_no_gpu_request_names_the_container() -> None:
    lines = _explain(LAB, "lab/no-gpu-request")
    assert lines[1].startswith("  next action: add the accelerator limit to container ")
