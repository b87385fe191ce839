"""nodeSelector, required node affinity and spec.nodeName over label columns: matching.selector_matches for many
nodes at once, the one form the funnel runs. Each requirement is a vector operation on one label column (In/NotIn:
membership of the value codes, Exists/DoesNotExist: present or not); any other (Gt, Lt, an unknown operator, values
that are not a list of strings) is matching's own rule once per distinct value of its key, then looked up per node.
A term or a key in no shape the API gives (the schemas refuse them) matches no node, as the API server would
refuse such a pod. tests/test_columns.py keeps this equal to matching.selector_matches node by node.
"""

from __future__ import annotations

import numpy as np

from analyzer.model.columns import LabelColumn, NodeColumns
from analyzer.model.matching import _requirement


def _clean(expr: dict) -> bool:
    """In, NotIn, Exists, DoesNotExist over a list of strings (or none): the column takes it as codes."""
    values = expr.get("values")
    return expr.get("operator") in ("In", "NotIn", "Exists", "DoesNotExist") and (
        not values or (isinstance(values, list) and all(isinstance(v, str) for v in values)))


def _member(codes: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """np.isin(codes, wanted): for a few values, one comparison each (np.isin sorts, which costs more)."""
    if len(wanted) > 8:
        return np.isin(codes, wanted)
    out = np.zeros(len(codes), dtype=bool)
    for code in wanted.tolist():
        out |= codes == code
    return out


def _requirement_mask(column: LabelColumn, expr: dict, at: np.ndarray) -> np.ndarray:
    codes = column.codes[at]
    op = expr.get("operator")
    if _clean(expr):
        values = expr.get("values") or []
        if op == "In":
            return _member(codes, column.codes_of(values))
        if op == "NotIn":
            return ~_member(codes, column.codes_of(values))
        return codes > 0 if op == "Exists" else codes == 0
    # Gt, Lt or a requirement in another shape: the rule once per distinct value (code 0: absent).
    table = np.array([_requirement(expr, None, False)] + [_requirement(expr, v, True) for v in column.values], dtype=bool)
    return table[codes]


def _term_mask(cols: NodeColumns, term: object, at: np.ndarray) -> np.ndarray:
    none = np.zeros(len(at), dtype=bool)
    if not isinstance(term, dict):
        return none
    exprs = term.get("matchExpressions") or []
    fields = term.get("matchFields") or []
    if not isinstance(exprs, list) or not isinstance(fields, list) or not (exprs or fields):
        return none  # an empty term matches nothing
    mask = np.ones(len(at), dtype=bool)
    for expr in exprs:
        if not isinstance(expr, dict) or not isinstance(expr.get("key", ""), str):
            return none
        mask &= _requirement_mask(cols.label(expr.get("key", "")), expr, at)
    for expr in fields:
        if not isinstance(expr, dict) or expr.get("key") != "metadata.name" or expr.get("operator") not in ("In", "NotIn"):
            return none
        mask &= _requirement_mask(cols.names_column, expr, at)
    return mask


def selector_mask(cols: NodeColumns, node_selector: tuple[tuple[str, str], ...], terms: list[dict] | None,
                  pin: str, at: np.ndarray) -> np.ndarray:
    """Per node of `at`: does it satisfy spec.nodeName (when pinned), nodeSelector and required node affinity?"""
    mask = np.ones(len(at), dtype=bool)
    if pin:
        mask &= cols.names_column.codes[at] == cols.names_column.code.get(pin, -1)
    for key, value in node_selector:
        column = cols.label(key)
        mask &= column.codes[at] == column.code.get(value, -1)
    if terms is None:
        return mask
    anyterm = np.zeros(len(at), dtype=bool)
    for term in terms:
        anyterm |= _term_mask(cols, term, at)
    return mask & anyterm
