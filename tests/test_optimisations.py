"""Every optimisation gives the same words and evidence as the straightforward path.

The classifier shares one funnel per distinct pod shape (rules/funnel.PodFacts is the cache key) and builds
shape evidence once. Here the same bundles are answered through the production pipeline, then classified
again with sharing turned off (one funnel per pod): the JSON of every verdict must be identical.
"""

from __future__ import annotations


import orjson

from analyzer.classify import classify_all
from analyzer.pipeline import Options, analyse
from helpers import LAB


def _both(path) -> tuple[list[bytes], list[bytes]]:
    analysis = analyse(path, Options())
    with analysis.bundle:
        slow = classify_all(analysis.cluster, analysis.extra, cache=False)
        dump = lambda vs: [orjson.dumps(v.to_dict(), option=orjson.OPT_SORT_KEYS) for v in vs]  # noqa: E731
        return dump(analysis.verdicts), dump(slow)


def test_shared_funnels_equal_the_straightforward_path_on_the_lab():
    fast, slow = _both(LAB)
    assert len(fast) == 9
    assert fast == slow


def test_shared_funnels_equal_the_straightforward_path_on_a_generated_bundle(generated):
    fast, slow = _both(generated)
    assert len(fast) > 20
    assert fast == slow
    words = {orjson.loads(v)["word"] for v in fast}
    assert {"exhausted", "no-gpu-node", "allocatable-zero", "untolerated-taint", "selector-mismatch"} <= words


def test_requests_memo_equals_computing_every_pod(generated):
    # model/build.PodsIndex computes effective requests once per distinct set of the fields they read.
    import orjson as _orjson

    from analyzer.model.podspec import effective_requests

    analysis = analyse(generated, Options())
    with analysis.bundle:
        c = analysis.cluster
        pods = {f"{p['metadata']['namespace']}/{p['metadata']['name']}": p
                for p in _orjson.loads((generated / "pods.json").read_bytes())["items"]}
        checked = 0
        for holders in c.pods_on.values():
            for h in holders:
                assert h.requests == effective_requests(pods[h.key]["spec"]), h.key
                checked += 1
        assert checked > 500
