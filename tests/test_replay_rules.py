"""The Kubernetes rules the replay reimplements, checked on lab objects changed per case.

Sources: pkg/printers/internalversion/printers.go (printPod, printNode, printEvent),
k8s.io/apimachinery/pkg/util/duration/duration.go (HumanDuration, cases from duration_test.go),
k8s.io/apimachinery/pkg/labels/selector.go (Parse), pkg/fields/selector.go (ParseSelector).
"""

from __future__ import annotations

import copy
from datetime import datetime, timedelta, timezone

import pytest

from analyzer.replay.humantime import human_duration
from analyzer.replay.selectors import SelectorError, fields_match, labels_match, parse_fields, parse_labels
from analyzer.replay.pod_table import pod_row
from analyzer.replay.tables import event_row, node_row
from conftest import cordon, lab_event, lab_node, lab_pod

NOW = datetime(2026, 11, 29, 17, 17, 20, tzinfo=timezone.utc)


@pytest.mark.parametrize(("seconds", "text"), [
    (-2, "<invalid>"), (-1, "0s"), (0, "0s"), (119, "119s"), (120, "2m"), (121, "2m1s"), (600, "10m"),
    (3 * 3600 - 1, "179m"), (3 * 3600, "3h"), (3 * 3600 + 60, "3h1m"), (8 * 3600, "8h"), (47 * 3600 + 59 * 60, "47h"),
    (48 * 3600, "2d"), (49 * 3600, "2d1h"), (8 * 86400, "8d"), (2 * 365 * 86400, "2y"), (2 * 365 * 86400 + 86400, "2y1d"),
    (8 * 365 * 86400, "8y"),
])
def test_duration_HumanDuration(seconds: int, text: str) -> None:
    assert human_duration(seconds) == text


def _status(pod: dict) -> str:
    return pod_row(pod, NOW)[2]


def test_printPod_scheduling_gated_reason_wins_over_pending() -> None:
    pod = lab_pod("exhausted")
    pod["status"]["conditions"] = [{"type": "PodScheduled", "status": "False", "reason": "SchedulingGated"}]
    assert _status(pod) == "SchedulingGated"


def test_printPod_waiting_container_reason_is_the_status() -> None:
    pod = lab_pod("filler-a")
    cs = pod["status"]["containerStatuses"][0]
    cs["state"] = {"waiting": {"reason": "ContainerCreating"}}
    cs["ready"] = False
    row = pod_row(pod, NOW)
    assert (row[1], row[2]) == ("0/1", "ContainerCreating")


def test_printPod_running_ready_container_counts_ready() -> None:
    assert pod_row(lab_pod("filler-a"), NOW)[1:3] == ["1/1", "Running"]


def test_printPod_succeeded_pod_shows_completed() -> None:
    assert _status(lab_pod("finished-job")) == "Completed"


def test_printPod_init_container_progress_and_sidecars_count_as_containers() -> None:
    pod = lab_pod("filler-a")
    pod["spec"]["initContainers"] = [{"name": "setup", "image": "x"}, {"name": "proxy", "image": "x", "restartPolicy": "Always"}]
    pod["status"]["initContainerStatuses"] = [{"name": "setup", "ready": False, "restartCount": 0, "state": {"running": {}}},
                                              {"name": "proxy", "ready": False, "restartCount": 0, "state": {"waiting": {}}}]
    pod["status"]["conditions"] = [c for c in pod["status"]["conditions"] if c["type"] != "Initialized"]
    row = pod_row(pod, NOW)
    assert row[2] == "Init:0/2" and row[1].endswith("/2")  # one container + one sidecar


def test_printPod_deleted_pod_is_terminating_and_restarts_show_when() -> None:
    pod = lab_pod("filler-a")
    pod["metadata"]["deletionTimestamp"] = "2026-11-29T17:17:19Z"
    cs = pod["status"]["containerStatuses"][0]
    cs["restartCount"] = 2
    cs["lastState"] = {"terminated": {"finishedAt": (NOW - timedelta(seconds=30)).strftime("%Y-%m-%dT%H:%M:%SZ"), "exitCode": 1}}
    row = pod_row(pod, NOW)
    assert row[2] == "Terminating" and row[3] == "2 (30s ago)"


def test_printNode_cordoned_node_is_ready_scheduling_disabled() -> None:
    assert node_row(cordon(lab_node("gpu-ok")), NOW)[1] == "Ready,SchedulingDisabled"
    node = lab_node("gpu-ok")
    node["status"]["conditions"] = []
    assert node_row(node, NOW)[1] == "Unknown"


def test_printEvent_falls_back_to_eventTime_and_counts_singletons_as_one() -> None:
    ev = copy.deepcopy(lab_event("exhausted"))
    assert ev["lastTimestamp"] is None and ev["eventTime"]
    row = event_row(ev, NOW)
    assert row[0] == "3s" and row[3] == "pod/exhausted" and row[5] == "default-scheduler, default-scheduler-vm" and row[8] == 1


def test_labels_Parse_operators() -> None:
    item = {"metadata": {"labels": {"app": "lab", "tier": "3"}}}
    for text, want in [("app=lab", True), ("app==lab", True), ("app!=lab", False), ("app in (x, lab)", True),
                       ("app notin (lab)", False), ("tier", True), ("!tier", False), ("missing!=x", True),
                       ("tier>2", True), ("tier<3", False), ("app=lab,tier in (3)", True)]:
        assert labels_match(parse_labels(text), item) is want, text
    for bad in ("app in ()", "app=(x", "=x", "tier>x"):
        with pytest.raises(SelectorError):
            parse_labels(bad)


def test_fields_ParseSelector_escapes_and_refuses_unknown_fields() -> None:
    pod = lab_pod("filler-b")
    assert fields_match(parse_fields("spec.nodeName=gpu-ok,status.phase!=Succeeded", "pods"), pod)
    assert not fields_match(parse_fields("metadata.name==filler-a", "pods"), pod)
    assert parse_fields(r"metadata.name=a\,b", "pods")[0].value == "a,b"
    with pytest.raises(SelectorError, match="spec.priority"):
        parse_fields("spec.priority=1", "pods")
    with pytest.raises(SelectorError, match="status.phase"):
        parse_fields("status.phase=Running", "nodes")
