"""The ticket report's shapes as a person reads them: a DaemonSet's pods, each pinned to its own node, are one cause
said once per pod, so the report says it once with its count and its action; pods of one owner whose actions differ
stay apart; a shape's own next action is on its card when the word's line does not say it."""

from __future__ import annotations

from conftest import gpu_node, gpu_pod, make_bundle
from report_pages import data_of, html_of, markdown_of, read_page
from test_pinned_by_name import _affinity, _daemonset, _named

from analyzer.report.markdown import LEVELS, LIMIT, _page, render_text
from analyzer.report.shapes import pattern_of


def _agent(i: int, node: str, memory: str) -> dict:
    pod = _daemonset(gpu_pod(f"agent-{i}", memory=memory, gpus=None, affinity=_affinity(_named(node))))
    pod["metadata"]["uid"] = f"5b1c0c1e-0000-4000-8000-{i:012}"
    return pod


def _rollout(tmp_path, sizes: list[str], memory: str = "4Ti"):
    """A DaemonSet rollout: one pod per node (its affinity names that node alone), each node `sizes[i]` of memory."""
    nodes = [gpu_node(f"gpu-{i}", memory=size) for i, size in enumerate(sizes)]
    pods = [_agent(i, f"gpu-{i}", memory) for i in range(len(sizes))]
    return data_of(make_bundle(tmp_path, pods=pods, nodes=nodes))


def test_a_daemonsets_pods_too_large_for_their_own_nodes_are_one_shape_with_the_count_and_the_shrink_action(tmp_path):
    data = _rollout(tmp_path, ["64Gi", "128Gi", "96Gi", "64Gi"])
    [row] = [r for r in data.rows if r.owner == "DaemonSet lab/node-agent"]
    assert row.word == "exhausted" and row.count == 4 and row.varies
    assert row.next_action.startswith("shrink the memory request in DaemonSet lab/node-agent to fit gpu-0")
    text = markdown_of(data)
    assert "**4 ×** DaemonSet lab/node-agent" in text
    assert "the first, lab/agent-0 (the other 3 differ only in their own node and amounts): no candidate (1)" in text
    assert "**next for the first:** shrink the memory request in DaemonSet lab/node-agent" in text
    page = read_page(html_of(data)).text
    assert "next for the first: shrink the memory request in DaemonSet lab/node-agent" in page


def test_pods_of_one_daemonset_whose_actions_differ_are_two_shapes(tmp_path):
    # gpu-0 is too small even empty (shrink the request); gpu-1 could hold it once its pods go (free it, or a
    # priority class): the same word, two different things to do, so two rows.
    big = gpu_node("gpu-1", memory="8Ti")
    small = gpu_node("gpu-0", memory="64Gi")
    filler = gpu_pod("filler", gpus=None, memory="7Ti")
    filler["spec"]["nodeName"] = "gpu-1"
    filler["status"] = {"phase": "Running"}
    pods = [_agent(0, "gpu-0", "4Ti"), _agent(1, "gpu-1", "4Ti"), filler]
    data = data_of(make_bundle(tmp_path, pods=pods, nodes=[small, big]))
    rows = [r for r in data.rows if r.owner == "DaemonSet lab/node-agent"]
    assert sorted((r.count, r.varies) for r in rows) == [(1, False), (1, False)]
    actions = sorted(r.next_action.split(" ")[0] for r in rows)
    assert actions[0] != actions[1], actions


def test_the_word_heading_says_the_summary_action_and_each_card_its_own(tmp_path):
    # Two pods, each too large for its own node: the word's line cannot say one pod's node for both, so it says
    # the contract's action and where each one's is; the card says the first one's.
    data = _rollout(tmp_path, ["64Gi", "64Gi"])
    [summary] = [s for s in data.summary if s.word == "exhausted"]
    assert summary.next_action == "wait for free slots, or add capacity; each target's own below"
    page = read_page(html_of(data)).text
    assert page.count("shrink the memory request in DaemonSet lab/node-agent to fit gpu-0") == 1


def test_one_pod_alone_has_its_action_in_the_heading_and_not_again_on_its_card(tmp_path):
    data = _rollout(tmp_path, ["64Gi"])
    [summary] = [s for s in data.summary if s.word == "exhausted"]
    assert summary.next_action.startswith("shrink the memory request in DaemonSet lab/node-agent to fit gpu-0")
    page = read_page(html_of(data)).text
    assert page.count("shrink the memory request in DaemonSet lab/node-agent") == 2  # the summary table and the heading


def test_pattern_masks_only_the_pods_own_node_and_the_numbers():
    a = pattern_of("no candidate (1) has room: gpu-0: memory: 10Ki free", "shrink to fit gpu-0", "gpu-0")
    b = pattern_of("no candidate (1) has room: gpu-7: memory: 99Ki free", "shrink to fit gpu-7", "gpu-7")
    c = pattern_of("no candidate (1) has room: gpu-7: cpu: 99m free", "shrink to fit gpu-7", "gpu-7")
    d = pattern_of("no candidate (1) has room: gpu-7: memory: 99Ki free", "free gpu-7", "gpu-7")
    assert a == b and a != c and a != d


def test_the_shortest_markdown_still_shows_each_words_largest_shape_and_its_action(tmp_path):
    data = _rollout(tmp_path, ["64Gi"] * 12)
    one_shape = _page(data, LEVELS[-2], shortened=True, limit=LIMIT)
    text = render_text(data, limit=len(one_shape))
    assert len(text) <= len(one_shape) and "at most 2 names per shape, 1 shapes per word" in text
    assert "**12 ×** DaemonSet lab/node-agent" in text and "**next for the first:** shrink the memory request" in text
