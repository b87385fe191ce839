"""nodeSelector, required node affinity and spec.nodeName over label columns: matching.selector_matches for many
nodes at once. Each requirement is a vector operation on one label column (In/NotIn: membership of the value
codes, Exists/DoesNotExist: present or not); an operator without one (Gt, Lt, an unknown one) is judged by the
scalar rule once per distinct value of its key, then looked up per node. Anything not in the shape the API
gives (a key that is not a string, values that are not a list) answers None: the caller then judges node by
node with the scalar rule, which stays the reference (tests/test_columns.py keeps both equal).
"""

from __future__ import annotations

import numpy as np

from analyzer.model.columns import LabelColumn, NodeColumns
from analyzer.model.matching import _requirement


class _Unusual(Exception):
    """A selector the vector form does not take: judged by the scalar rule instead."""


def _values(expr: dict) -> list:
    values = expr.get("values") or []
    if not isinstance(values, list):
        raise _Unusual
    return values


def _requirement_mask(column: LabelColumn, expr: dict, at: np.ndarray) -> np.ndarray:
    codes = column.codes[at]
    op = expr.get("operator")
    if op == "In":
        return np.isin(codes, column.codes_of(_values(expr)))
    if op == "NotIn":
        return ~np.isin(codes, column.codes_of(_values(expr)))
    if op == "Exists":
        return codes > 0
    if op == "DoesNotExist":
        return codes == 0
    # Gt, Lt or an operator the rule refuses: the scalar rule once per distinct value (code 0: absent).
    table = np.array([_requirement(expr, None, False)] + [_requirement(expr, v, True) for v in column.values], dtype=bool)
    return table[codes]


def _term_mask(cols: NodeColumns, term: object, at: np.ndarray) -> np.ndarray:
    if not isinstance(term, dict):
        raise _Unusual
    exprs = term.get("matchExpressions") or []
    fields = term.get("matchFields") or []
    if not isinstance(exprs, list) or not isinstance(fields, list):
        raise _Unusual
    if not exprs and not fields:
        return np.zeros(len(at), dtype=bool)  # an empty term matches nothing
    mask = np.ones(len(at), dtype=bool)
    for expr in exprs:
        if not isinstance(expr, dict) or not isinstance(expr.get("key", ""), str):
            raise _Unusual
        mask &= _requirement_mask(cols.label(expr.get("key", "")), expr, at)
    for expr in fields:
        if not isinstance(expr, dict):
            raise _Unusual
        if expr.get("key") != "metadata.name" or expr.get("operator") not in ("In", "NotIn"):
            return np.zeros(len(at), dtype=bool)
        mask &= _requirement_mask(cols.names_column, expr, at)
    return mask


def selector_mask(cols: NodeColumns, node_selector: tuple[tuple[str, str], ...], terms: list[dict] | None,
                  pin: str, at: np.ndarray) -> np.ndarray | None:
    """Per node of `at`: does it satisfy spec.nodeName (when pinned), nodeSelector and required node affinity?
    None when the selector is not in a shape the columns take (then use matching.selector_matches)."""
    mask = np.ones(len(at), dtype=bool)
    if pin:
        mask &= cols.names_column.codes[at] == cols.names_column.code.get(pin, -1)
    for key, value in node_selector:
        column = cols.label(key)
        mask &= column.codes[at] == column.code.get(value, -1)
    if terms is None:
        return mask
    try:
        anyterm = np.zeros(len(at), dtype=bool)
        for term in terms:
            anyterm |= _term_mask(cols, term, at)
    except _Unusual:
        return None
    return mask & anyterm
