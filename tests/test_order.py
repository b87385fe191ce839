"""The order of causes.md (version 4) in one table (analyzer/rules/order.py): its rules name the words they give
in the contract's order, each once; and words.py holds every word of the contract with its row number."""

from __future__ import annotations

from analyzer import words
from analyzer.rules.order import ORDER
from conftest import ORDER_WORDS


def test_the_order_table_gives_the_words_of_causes_md_in_order():
    given = [w for rule in ORDER for w in rule.words if w != words.INSUFFICIENT_EVIDENCE]
    # `quota-exceeded` appears twice (admission for never-created pods; the claim controller's refusal for claims).
    once = list(dict.fromkeys(given))
    assert once == [word for word in ORDER_WORDS if word in once]


def test_words_py_numbers_the_rows_of_causes_md():
    assert [w.word for w in words.ROWS] == list(ORDER_WORDS)
    assert [w.row for w in words.ROWS] == list(range(1, 38))


def test_the_last_rule_always_decides():
    assert ORDER[-1].words == (words.UNCLASSIFIED, words.FITS_NOW)
