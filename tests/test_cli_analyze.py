"""`gpu-triage analyze` and `why` as a person (or a script) uses them: output formats, filters, flags,
exit statuses. Subprocess runs of `python -m analyzer`, on the lab bundle and on edited copies."""

from __future__ import annotations

import json


from verdict_json import old_shape
from helpers import LAB, SCHEMAS
from conftest import (LAB_ATTEMPT_WORDS, LAB_WORDS, ORDER_WORDS, EXTRA_WORDS, bound_pod, cli_words,
                      gpu_node, gpu_pod, make_bundle, plain_pod, run_cli)

ALL_LAB = {**LAB_WORDS, **LAB_ATTEMPT_WORDS}


def test_table_lists_every_target_then_counts_per_word():
    proc = run_cli("analyze", LAB, check=True)
    out = proc.stdout
    for key, word in ALL_LAB.items():
        line = next(row for row in out.splitlines() if row.startswith(key + " "))
        assert word in line.split()
    # counts per word, each with its next action, and the total
    assert "9  total" in out
    assert "1  exhausted" in out and "next: wait for free slots, or add capacity" in out
    assert "filler-a" not in out and "finished-job" not in out


def test_words_stdout_has_nothing_but_the_lines():
    proc = run_cli("analyze", LAB, "-o", "words", check=True)
    lines = proc.stdout.splitlines()
    assert len(lines) == len(ALL_LAB)
    assert all(line.count("\t") == 1 for line in lines)
    assert dict(line.split("\t") for line in lines) == ALL_LAB
    for line in lines:
        assert line.split("\t")[1] in ORDER_WORDS + EXTRA_WORDS


def test_json_is_a_list_of_verdicts_with_the_contract_fields():
    proc = run_cli("analyze", LAB, "-o", "json", check=True)
    whole = json.loads(proc.stdout)
    doc = old_shape(whole)  # -o json gives each funnel once by id; mapped back to whole funnels here
    assert isinstance(doc, list) and len(doc) == len(ALL_LAB)
    by_key = {f"{d['namespace']}/{d['name']}": d for d in doc}
    for key, word in ALL_LAB.items():
        d = by_key[key]
        assert d["word"] == word
        for field in ("kind", "namespace", "name", "word", "evidence", "funnel", "scheduler_message"):
            assert field in d
    ex = by_key["lab/exhausted"]
    assert ex["kind"] == "Pod"
    assert [s["stage"] for s in ex["funnel"]] == ["selector", "advertised", "device-selectors", "taints", "allocatable", "fit"]
    assert ex["funnel"][0]["nodes_in"] == 4
    assert ex["scheduler_message"].startswith("0/4 nodes are available: 1 Insufficient nvidia.com/gpu")
    assert by_key["quota-lab/quota-exceeded"]["kind"] == "Attempt"
    schema_path = SCHEMAS / "verdicts.schema.json"
    if schema_path.exists():
        import jsonschema
        jsonschema.Draft202012Validator(json.loads(schema_path.read_text())).validate(whole)


def test_namespace_filter():
    lines = cli_words(LAB, "-n", "quota-lab")
    assert lines == [("quota-lab/quota-exceeded", "quota-exceeded")]


def test_why_explain_shows_the_evidence_for_a_person():
    # For a person: the funnel stage by stage, the removed nodes and why, for exhausted each candidate's
    # allocatable, used (and by which pods), free, requested, fragmentation; the scheduler's message
    # quoted, with a line saying what `Insufficient …` conflates.
    proc = run_cli("why", LAB, "lab/exhausted", "--explain", check=True)
    out = proc.stdout
    assert out.splitlines()[0] == "lab/exhausted: exhausted"
    for stage in ("selector", "taints", "advertised", "allocatable", "fit"):
        assert stage in out
    # one line per reason, its nodes named before it
    assert "removed gpu-alloczero, gpu-noplugin, gpu-tainted: labels do not satisfy" in out
    assert "removed gpu-ok: what the reason above says" in out
    assert "allocatable" in out and "used" in out and "free" in out and "requested" in out
    assert "lab/filler-a (Running)" in out and "lab/filler-b (Pending)" in out
    assert "finished-job" not in out
    assert "fragmented" in out
    assert '"0/4 nodes are available: 1 Insufficient nvidia.com/gpu' in out
    assert "no-gpu-node" in out and "allocatable-zero" in out  # what the sentence conflates


def test_why_unknown_pod_exits_2_with_one_line():
    proc = run_cli("why", LAB, "lab/does-not-exist")
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert len(proc.stderr.strip().splitlines()) == 1 and "lab/does-not-exist" in proc.stderr


def test_why_for_a_stored_attempt():
    assert run_cli("why", LAB, "quota-lab/quota-exceeded", check=True).stdout == "quota-exceeded\n"


def test_bad_gpu_pod_argument_is_a_usage_error():
    proc = run_cli("analyze", LAB, "--gpu-pod", "no-slash")
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert "NAMESPACE/NAME" in proc.stderr and "Traceback" not in proc.stderr


def test_missing_bundle_is_one_line_exit_2(tmp_path):
    proc = run_cli("analyze", tmp_path / "nope", "-o", "words")
    assert proc.returncode == 2 and proc.stdout == "" and "Traceback" not in proc.stderr


def test_gpu_pod_and_resource_flags(tmp_path):
    fpga = "example.com/fpga"
    fpga_pod = plain_pod("fpga-job", cpu="2")
    fpga_pod["spec"]["containers"][0]["resources"]["limits"] = {fpga: "1"}
    pods = [plain_pod("cpu-job"), fpga_pod, bound_pod("busy", "fpga-a", gpus=2, resource=fpga, cpu="1")]
    node = gpu_node("fpga-a", base="gpu-noplugin", gpus="2", resource=fpga, cpu="2")
    root = make_bundle(tmp_path, pods=pods, nodes=[node])
    assert dict(cli_words(root)) == {"lab/cpu-job": "fits-now", "lab/fpga-job": "exhausted"}
    got = dict(cli_words(root, "--gpu-pod", "lab/cpu-job", "--gpu-pod", "lab/fpga-job"))
    # declared GPU pods: cpu-job asks no accelerator; an fpga is not an accelerator unless --resource says so
    assert got == {"lab/cpu-job": "no-gpu-request", "lab/fpga-job": "no-gpu-request"}
    got = dict(cli_words(root, "--gpu-pod", "lab/fpga-job", "--resource", fpga))
    assert got == {"lab/cpu-job": "fits-now", "lab/fpga-job": "exhausted"}


def test_why_explain_fragmented(tmp_path):
    nodes = [gpu_node("gpu-a"), gpu_node("gpu-b")]
    pods = [gpu_pod("trainer-0", gpus=2), bound_pod("a1", "gpu-a", gpus=3), bound_pod("b1", "gpu-b", gpus=3)]
    root = make_bundle(tmp_path, pods=pods, nodes=nodes)
    proc = run_cli("why", root, "lab/trainer-0", "--explain", check=True)
    assert proc.stdout.splitlines()[0] == "lab/trainer-0: exhausted"
    assert "not fragmented" not in proc.stdout and "fragmented" in proc.stdout


def test_failed_pod_without_node_is_a_target_and_running_is_not(tmp_path):
    # causes.md Targets: Pending, or spec.nodeName empty in any phase.
    never_placed = gpu_pod("never-placed")
    never_placed["status"]["phase"] = "Failed"
    pods = [never_placed, bound_pod("busy", "gpu-a", gpus=1), bound_pod("done", "gpu-a", phase="Succeeded")]
    root = make_bundle(tmp_path, pods=pods, nodes=[gpu_node("gpu-a")])
    assert [k for k, _ in cli_words(root)] == ["lab/never-placed"]


def test_why_running_pod_with_gpu_intent_but_no_request_is_no_gpu_request(tmp_path):
    # causes.md Targets: a pod asked about by name is `running`, or `no-gpu-request` when its rule holds.
    pod = bound_pod("cuda-smoke", "gpu-a", gpus=None)
    pod["spec"]["nodeSelector"] = {"nvidia.com/gpu.present": "true"}
    root = make_bundle(tmp_path, pods=[pod, bound_pod("trainer", "gpu-a", gpus=1)], nodes=[gpu_node("gpu-a")])
    assert cli_words(root) == []
    assert run_cli("why", root, "lab/cuda-smoke", check=True).stdout == "no-gpu-request\n"
    assert run_cli("why", root, "lab/trainer", check=True).stdout == "running\n"
