"""A cause family is one module behind one typed interface (analyzer/rules/family.py): every family of the order
implements it, and a family defined in the tests alone (tests/toy_family.py), placed in an order, gives a pod its
word, its reason, its evidence sentences and its part of the scheduler's message, with no change to analyzer/."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from helpers import LAB, REPO
from toy_family import ToyFamily

from analyzer import prose, words
from analyzer.bundle.catalog import KINDS
from analyzer.classify import Classifier
from analyzer.pipeline import Options, analyse
from analyzer.rules.family import Family, families, place
from analyzer.rules.order import ORDER


def test_every_family_of_the_order_implements_the_interface_with_catalog_kinds_and_contract_words():
    for family in families(ORDER):
        assert isinstance(family, Family), family
        assert set(family.kinds) <= set(KINDS), family
        for rule in family.rules:
            assert (rule.decide is None) != (rule.refine is None), (family, rule.rows)
            assert set(rule.words) <= set(words.BY_WORD), (family, rule.rows)
    assert all(placed.rule in placed.family.rules for placed in ORDER)


def test_each_family_module_declares_its_one_object_as_a_family():
    """The static half of the check: `FAMILY: Family = …` in each module the order places, so a type checker
    refuses an object that lacks a member of the interface (kube-scheduler's `var _ FilterPlugin = &Fit{}`)."""
    modules = {type(f).__module__ if type(f).__module__ != "analyzer.rules.family" else None for f in families(ORDER)}
    placed = {Path(REPO, *name.split(".")).with_suffix(".py") for name in modules if name}
    declared = set()
    for path in Path(REPO, "analyzer", "rules").glob("*.py"):
        for node in ast.parse(path.read_text()).body:
            if (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id == "FAMILY"
                    and isinstance(node.annotation, ast.Name) and node.annotation.id == "Family"):
                declared.add(path)
    assert placed <= declared
    assert len(declared) == len(families(ORDER))  # one object per module, each placed


def test_the_classifier_names_no_word_of_the_order_and_no_evidence_of_a_family():
    """Its one word is the one outside the order (a target it cannot read); a pod asked for by name that is no
    target is answered by the order's `running_pod`; the evidence made after a decision is reached only through the
    families' hooks; it imports no family module, only the order and the interface."""
    tree = ast.parse(Path(REPO, "analyzer", "classify.py").read_text())
    used = {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name) and node.value.id == "words"}
    assert used == {"INSUFFICIENT_EVIDENCE"}
    imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    rules = {m for m in imported if m and m.startswith("analyzer.rules")}
    assert rules == {"analyzer.rules.order", "analyzer.rules.family", "analyzer.rules.case", "analyzer.rules.checks"}
    assert {m for m in imported if m and m.startswith("analyzer.evidence")} == {"analyzer.evidence",
                                                                                "analyzer.evidence.makers"}


@pytest.fixture(scope="module")
def lab():
    analysis = analyse(LAB, Options())
    with analysis.bundle:
        yield analysis.cluster


def _target(cluster, key):
    return next(t for t in cluster.pod_targets if t.key == key)


def test_a_toy_family_placed_before_the_funnel_gives_a_pod_its_word_evidence_sentence_and_message(lab):
    toy = ToyFamily("lab/exhausted")
    assert isinstance(toy, Family)
    at = next(i for i, p in enumerate(ORDER) if p.rows == "22-33")
    order = (*ORDER[:at], place(toy, "toy"), *ORDER[at:])

    before = Classifier(lab).classify(_target(lab, "lab/exhausted"))
    held = Classifier(lab, order=order).classify(_target(lab, "lab/exhausted"))
    other = Classifier(lab, order=order).classify(_target(lab, "lab/taint"))

    assert before.word == words.EXHAUSTED
    assert (held.word, held.reason) == (words.UNCLASSIFIED, "held by the toy controller")
    assert list(held.evidence)[-2:] == ["toy_hold", "toy_after"]  # after what the rules before it wrote
    assert prose.lines(held.evidence)[-2:] == ["The pod is held by the toy controller.",
                                               "The toy looked at exhausted once the answer was known."]
    assert held.funnel is None and held.fit is None  # the funnel never ran for it
    assert held.scheduler is not None
    assert held.scheduler["rebuilt"] is None
    assert held.scheduler["comparison"] == "the toy controller holds it before any scheduler sees it"
    # A pod it does not hold is answered as before.
    assert other.to_dict() == Classifier(lab).classify(_target(lab, "lab/taint")).to_dict()


def test_the_readme_example_is_the_schedulers_family_as_written():
    readme = Path(REPO, "README.md").read_text()
    section = readme[readme.index("### Adding a family"):]
    example = section[section.index("```python\n") + len("```python\n"):section.index("```\n", section.index("```python"))]
    assert example in Path(REPO, "analyzer", "rules", "schedulers.py").read_text()
