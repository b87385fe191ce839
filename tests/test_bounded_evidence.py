"""Bounded evidence: `analyze` shows an exhausted pod the 10 candidates closest to fitting with their fit rows
and counts for the rest, and at most 20 reasons per funnel stage; `why` (one pod) still names every node.
On a generated bundle of diverse shapes (scripts/generate_bundle.py --diverse), checked against the unbounded
answer of the same pod."""

from __future__ import annotations

import pytest
from helpers import generate

from analyzer.classify import Classifier
from analyzer.model.quantity import parse
from analyzer.pipeline import Options, analyse


@pytest.fixture(scope="module")
def diverse(tmp_path_factory):
    where = tmp_path_factory.mktemp("gen")
    truth = where / "truth.tsv"
    bundle = generate(where, nodes=120, pods=3000, seed=5, extra=("--diverse", "--truth", str(truth)))
    return bundle, dict(line.split("\t") for line in truth.read_text().splitlines())


@pytest.fixture(scope="module")
def analysed(diverse):
    analysis = analyse(diverse[0], Options())
    with analysis.bundle:
        every = Classifier(analysis.cluster, node_limit=None)  # what `why` builds
        yield [(v, every.classify(v.target)) for v in analysis.verdicts]


def test_the_diverse_generator_gives_many_shapes_and_its_truth_is_the_answer(diverse, analysed):
    words = {bounded.key if bounded.target.kind in ("Pod", "Attempt") else
             f"{bounded.target.namespace}/{bounded.target.kind.lower()}/{bounded.target.name}": bounded.word
             for bounded, _ in analysed}
    assert words == diverse[1]
    shapes = {id(bounded.funnel) for bounded, _ in analysed if bounded.funnel is not None}
    assert len(shapes) >= 20  # 345 on 5,000 nodes / 150,000 pods


def _closeness(row: dict) -> int:
    return len(row["short"])


def test_an_exhausted_pod_shows_the_ten_closest_candidates_and_counts_the_rest(analysed):
    checked = 0
    for bounded, full in analysed:
        fit = bounded.fit
        if fit is None or fit.rest is None:
            continue
        rows, every = fit.rows, full.fit.rows
        assert len(rows) == 10 and fit.rest["shown"] == 10
        assert fit.rest["candidates"] == len(every) > 10
        assert all(row in every for row in rows)
        hidden = [row for row in every if row not in rows]
        assert max(map(_closeness, rows)) <= min(map(_closeness, hidden))
        for r, n in fit.rest["short"].items():
            assert n == sum(1 for row in every if r in row["short"])
        for r, largest in fit.rest["largest_free"].items():
            assert parse(largest) == max(parse(row["resources"][r]["free"]) for row in every)
        assert (fit.fragmented, fit.too_large) == (full.fit.fragmented, full.fit.too_large)
        checked += 1
    assert checked >= 3


def test_analyze_lists_at_most_twenty_reasons_per_stage_and_why_names_every_node(analysed):
    limited = 0
    for bounded, full in analysed:
        for short, whole in zip(bounded.funnel or (), full.funnel or ()):
            removed = short["nodes_in"] - short["nodes_out"]
            assert len(short["removed"]) <= 20
            more = short.get("removed_more", {"reasons": 0, "count": 0})
            assert sum(g["count"] for g in short["removed"]) + more["count"] == removed
            assert len(whole["removed"]) == len(short["removed"]) + more["reasons"]
            assert "removed_more" not in whole
            assert sum(len(g["nodes"]) for g in whole["removed"]) == removed
            limited += bool(more["reasons"])
    assert limited >= 1
