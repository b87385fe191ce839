"""Inter-pod affinity, topology spread and host ports (causes.md `pod-affinity`, `topology-spread` and part of
`exhausted`), from the real pod-anti-affinity recording (v1.36.2): c1 (CPU, zone a), g1 (GPU, zone a) running
lab/trainer-1, g2 (GPU, zone b) running lab/trainer-2, both app=trainer; lab/trainer-3 (app=trainer) has required
anti-affinity on hostname.
Rules: kubernetes pkg/scheduler/framework/plugins/interpodaffinity/filtering.go,
podtopologyspread/filtering.go, nodeports/node_ports.go."""

from __future__ import annotations

import copy

from filter_fixtures import (
    ANTI,
    add,
    edit_pod,
    items,
    judge,
    node_like,
    pod_named,
    recording,
)

KEY = "lab/trainer-3"
ZONE = "topology.kubernetes.io/zone"


def _anti_key(key: str):
    def run(pod):
        pod["spec"]["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][0]["topologyKey"] = key
    return run


def _no_rules(pod):
    pod["spec"].pop("affinity", None)


def test_the_recording_anti_affinity_on_hostname_is_pod_affinity_and_the_message_agrees(tmp_path):
    v = judge(recording(tmp_path, ANTI), KEY)
    assert v.word == "pod-affinity"
    assert v.scheduler["rebuilt"] == ("0/3 nodes are available: 1 Insufficient nvidia.com/gpu, "
                                      "2 node(s) didn't match pod anti-affinity rules.")
    assert v.scheduler["comparison"].startswith("agrees")
    near = {n["node"]: n["reason"] for n in v.evidence["nearest"]}
    assert "lab/trainer-1" in near["g1"]  # one change away: move trainer-1 or relax the rule
    # causes.md: relax the rule (named), or move the pods it counts
    assert v.action == ("relax this pod's required pod anti-affinity (app=trainer in namespace lab per "
                        "kubernetes.io/hostname), or move the pods it counts: lab/trainer-1, lab/trainer-2 "
                        "(in kubernetes.io/hostname=g1, kubernetes.io/hostname=g2)")


def test_anti_affinity_on_zone(tmp_path):
    v = judge(recording(tmp_path, ANTI, edit={"pods": edit_pod("trainer-3", _anti_key(ZONE))}), KEY)
    assert v.word == "pod-affinity"
    assert f"{ZONE}=a" in v.reason and f"{ZONE}=b" in v.reason


def _affinity_to(app: str, own: str | None = None):
    def run(pod):
        pod["spec"]["affinity"] = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": app}}, "topologyKey": "kubernetes.io/hostname"}]}}
        if own:
            pod["metadata"]["labels"] = {"app": own}
    return run


def test_pod_affinity_to_a_label_no_pod_has(tmp_path):
    v = judge(recording(tmp_path, ANTI, edit={"pods": edit_pod("trainer-3", _affinity_to("database"))}), KEY)
    assert v.word == "pod-affinity"
    assert "2 node(s) didn't match pod affinity rules" in v.scheduler["rebuilt"]
    assert v.action == ("relax this pod's required pod affinity (app=database in namespace lab per "
                        "kubernetes.io/hostname), or start a pod it matches: none runs anywhere")


def test_the_first_pod_of_a_group_passes_its_own_affinity(tmp_path):
    v = judge(recording(tmp_path, ANTI, edit={"pods": edit_pod("trainer-3", _affinity_to("new-group", own="new-group"))}),
              KEY)
    assert v.word == "fits-now"


def _running_anti_against(pods: list[dict], labels: dict[str, str]) -> None:
    """Both running trainers get a required anti-affinity, per zone, against pods with `labels`."""
    for name in ("trainer-1", "trainer-2"):
        pod_named(pods, name)["spec"]["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": labels}, "topologyKey": ZONE}]}}


def test_an_existing_pods_anti_affinity_against_this_pod(tmp_path):
    def existing(pods):
        _running_anti_against(pods, {"role": "eval"})
        p = pod_named(pods, "trainer-3")
        _no_rules(p)
        p["metadata"]["labels"] = {"role": "eval"}
        return pods
    v = judge(recording(tmp_path, ANTI, edit={"pods": existing}), KEY)
    assert v.word == "pod-affinity"
    assert "2 node(s) didn't satisfy existing pods anti-affinity rules" in v.scheduler["rebuilt"]
    # symmetry: the running pods' own rule is the one to relax, or they are the pods to move
    assert v.action == ("relax the required anti-affinity (role=eval in namespace lab per topology.kubernetes.io/zone) "
                        "of lab/trainer-1, lab/trainer-2, or move them: they forbid this pod in "
                        "topology.kubernetes.io/zone=a, topology.kubernetes.io/zone=b")


def test_pods_alike_but_for_labels_no_term_reads_share_a_funnel_and_answer_as_each_alone(tmp_path):
    # The funnel is keyed on what the checks read: the existing anti-affinity terms that match the pod, not its
    # labels. Pods of other teams share one funnel; the one an existing term matches gets its own, and every
    # verdict is what classifying each pod alone gives (cache=False).
    from analyzer.classify import classify_all
    from analyzer.pipeline import Options, analyse

    def existing(pods):
        _running_anti_against(pods, {"team": "red"})
        base = pod_named(pods, "trainer-3")
        _no_rules(base)
        for team in ("red", "blue", "green"):
            p = copy.deepcopy(base)
            p["metadata"].update(name=f"eval-{team}", uid=f"uid-eval-{team}", labels={"team": team, "run": team})
            pods.append(p)
        return pods
    path = recording(tmp_path, ANTI, edit={"pods": existing})
    analysis = analyse(path, Options())
    with analysis.bundle:
        shared = {v.target.key: v.to_dict() for v in analysis.verdicts}
        alone = {v.target.key: v.to_dict() for v in classify_all(analysis.cluster, analysis.extra, cache=False)}
    assert shared == alone
    red, blue, green = (judge(path, f"lab/eval-{team}") for team in ("red", "blue", "green"))
    assert red.word == "pod-affinity" and blue.word == green.word == "fits-now"
    assert "lab/trainer-1" in str(red.evidence)  # an existing pod whose term forbids its zone


def _spread(key: str = ZONE, **extra):
    def run(pod):
        _no_rules(pod)
        pod["spec"]["topologySpreadConstraints"] = [{"maxSkew": 1, "topologyKey": key, "whenUnsatisfiable": "DoNotSchedule",
                                                     "labelSelector": {"matchLabels": {"app": "trainer"}}, **extra}]
    return run


def _third_zone(nodes):
    return nodes + [node_like(next(n for n in nodes if n["metadata"]["name"] == "c1"), "c2", **{ZONE: "c"})]


def test_spread_by_zone_do_not_schedule(tmp_path):
    v = judge(recording(tmp_path, ANTI, edit={"pods": edit_pod("trainer-3", _spread()), "nodes": _third_zone}), KEY)
    assert v.word == "topology-spread"
    assert "2 node(s) didn't match pod topology spread constraints" in v.scheduler["rebuilt"]
    domains = {d["domain"]: d["pods"] for d in v.evidence["topology_spread"][0]["domains"]}
    assert domains == {f"{ZONE}=a": 1, f"{ZONE}=b": 1, f"{ZONE}=c": 0}
    # causes.md: relax the constraint, or add capacity in the domain that lacks it (zone c: a CPU node only)
    assert v.action == (f"relax the topology spread (maxSkew 1 per {ZONE} of app=trainer), or add capacity in "
                        f"{ZONE}=c, the least loaded (0 matching pod(s))")


def test_spread_with_min_domains(tmp_path):
    # Two zones hold one trainer each: skew 1 passes, but minDomains 3 makes the minimum 0.
    path = recording(tmp_path / "a", ANTI, edit={"pods": edit_pod("trainer-3", _spread())})
    assert judge(path, KEY).word == "fits-now"
    v = judge(recording(tmp_path / "b", ANTI, edit={"pods": edit_pod("trainer-3", _spread(minDomains=3))}), KEY)
    assert v.word == "topology-spread"
    assert v.action == (f"relax the topology spread (maxSkew 1 per {ZONE} of app=trainer, minDomains 3), or add "
                        f"capacity in another {ZONE}: 2 of minDomains 3 have a node it may use")


def test_spread_node_affinity_policy_ignore_counts_the_zone_the_selector_leaves_out(tmp_path):
    def gpu_only(**extra):
        def run(pod):
            _spread(**extra)(pod)
            pod["spec"]["nodeSelector"] = {"nvidia.com/gpu.present": "true"}
        return run
    honor = judge(recording(tmp_path / "a", ANTI, edit={"pods": edit_pod("trainer-3", gpu_only()), "nodes": _third_zone}), KEY)
    assert honor.word == "fits-now"  # zone c has no GPU node: not a domain under Honor
    ignore = judge(recording(tmp_path / "b", ANTI, edit={"pods": edit_pod("trainer-3", gpu_only(nodeAffinityPolicy="Ignore")),
                                                         "nodes": _third_zone}), KEY)
    assert ignore.word == "topology-spread"


def test_spread_on_a_key_the_gpu_nodes_lack(tmp_path):
    def rack(nodes):
        for n in nodes:
            if n["metadata"]["name"] == "c1":
                n["metadata"]["labels"]["example.com/rack"] = "r1"
        return nodes
    v = judge(recording(tmp_path, ANTI, edit={"pods": edit_pod("trainer-3", _spread("example.com/rack")), "nodes": rack}), KEY)
    assert v.word == "topology-spread"
    assert "2 node(s) didn't match pod topology spread constraints (missing required label)" in v.scheduler["rebuilt"]
    assert v.action == ("relax the topology spread (maxSkew 1 per example.com/rack of app=trainer), or label the "
                        "candidates with example.com/rack")


def _port(pod, port=8080):
    pod["spec"]["containers"][0]["ports"] = [{"containerPort": port, "hostPort": port, "protocol": "TCP"}]


def test_host_port_another_pod_holds_is_exhausted(tmp_path):
    def pods(ps):
        for p in ps:
            _port(p)
        _no_rules(pod_named(ps, "trainer-3"))
        return ps
    v = judge(recording(tmp_path, ANTI, edit={"pods": pods}), KEY)
    assert v.word == "exhausted"
    assert "2 node(s) didn't have free ports for the requested pod ports" in v.scheduler["rebuilt"]
    assert "host port 8080/TCP is held by lab/trainer-" in v.reason


def test_mixed_cluster_word_follows_the_stage_order_and_the_message_the_schedulers(tmp_path):
    # c1 has no GPU; g1 runs trainer-1 (the anti-affinity); g2 runs a pod of another app holding all 4 GPUs.
    def pods(ps):
        full = pod_named(ps, "trainer-2")
        full["metadata"]["labels"] = {"app": "other"}
        res = full["spec"]["containers"][0]["resources"]
        res["limits"]["nvidia.com/gpu"] = res.setdefault("requests", {})["nvidia.com/gpu"] = "4"
        return ps
    v = judge(recording(tmp_path, ANTI, edit={"pods": pods}), KEY)
    stages = {s["stage"]: s for s in v.funnel}
    assert stages["pod-affinity"]["removed"][0]["nodes"] == ["g1"]
    assert stages["fit"]["removed"][0]["nodes"] == ["g2"]
    assert v.word == "exhausted"  # the last stage to empty the candidates
    # The scheduler runs NodeResourcesFit before InterPodAffinity: g2 reports Insufficient, g1 the anti-affinity.
    assert v.scheduler["rebuilt"] == ("0/3 nodes are available: 1 node(s) didn't match pod anti-affinity rules, "
                                      "2 Insufficient nvidia.com/gpu.")


def test_spread_and_anti_affinity_order_pod_affinity_before_topology_spread(tmp_path):
    def both(pod):
        _spread()(pod)
        pod["spec"]["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": "trainer"}}, "topologyKey": "kubernetes.io/hostname"}]}}
    v = judge(recording(tmp_path, ANTI, edit={"pods": edit_pod("trainer-3", both), "nodes": _third_zone}), KEY)
    assert v.word == "pod-affinity"
    assert items(ANTI, "nodes") and add  # the recording itself is untouched
