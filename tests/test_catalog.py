"""The kinds catalog (analyzer/bundle/catalog.py) is the one list of kinds; the collector's stdlib copy must
say the same, field by field, and the schemas and the sealer follow it."""

from __future__ import annotations

from analyzer.bundle.catalog import KINDS, MAY_BE_UNSERVED
from analyzer.collect_bridge import load_collector
from helpers import REPO


def test_collector_kinds_are_the_catalog():
    collector = load_collector()
    theirs = [(k.file, k.resource, k.group, k.namespaced, k.required, k.only) for k in collector.KINDS]
    ours = [(k.file, k.resource, k.group, k.namespaced, k.required, k.only) for k in KINDS]
    assert theirs == ours
    assert collector.MAY_BE_UNSERVED == MAY_BE_UNSERVED


def test_the_one_configmap_is_read_by_name():
    """cluster-autoscaler's status is the only ConfigMap: the catalog's command is the collector's, by field
    selector in kube-system (bundle.md), and the collector's guard lets exactly that command through."""
    (kind,) = [k for k in KINDS if k.item_kind == "ConfigMap"]
    assert kind.command == ("kubectl", "get", "configmap", "-n", "kube-system", "--field-selector",
                            "metadata.name=cluster-autoscaler-status", "-o", "json")
    collector = load_collector()
    collector.Kubectl.check_reading(list(kind.command[1:]))


def test_every_kind_has_a_schema():
    for k in KINDS:
        assert (REPO / "schemas" / f"{k.name}.schema.json").is_file(), k.file


def test_sealer_lists_the_catalog(tmp_path):
    import importlib.util

    spec = importlib.util.spec_from_file_location("seal_bundle", REPO / "scripts" / "seal_bundle.py")
    seal = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(seal)  # type: ignore[union-attr]
    assert [k for k in seal.KINDS if k != "version"] == [k.name for k in KINDS]


def test_events_are_read_before_the_owners_they_name():
    """The reader keeps only the owners a FailedCreate event names (pipeline._Wanted): events.json comes first."""
    from analyzer.bundle.catalog import EVENTS, KINDS, NAMES

    owners = [k.name for k in KINDS if k.owns_pods]
    assert owners and all(NAMES.index(EVENTS.name) < NAMES.index(k) for k in owners)
