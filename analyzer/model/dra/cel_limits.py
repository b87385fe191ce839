"""Bounds on hostile CEL selectors: the limits Kubernetes puts on an expression and a device, and a token
scan that refuses, before the library parses anything, what would nest too deep or make comprehension
macros do unbounded work; it also finds what of `device` an expression reads (the evaluator's cache key).
Separate from the evaluator (cel.py) because it never evaluates: it only measures and refuses, and the
numbers here are the one place the work budget is tuned.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# resourceapi.CELSelectorExpressionMaxLength (k8s.io/api/resource/v1/types.go), counted in bytes as Go does.
MAX_EXPRESSION_BYTES = 10 * 1024
# Brackets nested deeper than this are refused before the parser sees them (cel-go's parser stops at a
# recursion limit too; real selectors nest a handful deep).
MAX_NESTING = 50
# The comprehension macros' estimated work, iterations x body tokens (see scan). Kubernetes allows
# resourceapi.CELSelectorExpressionMaxCost = 1,000,000 of cel-go's cost units (~0.1 s in the scheduler);
# here 25,000 of these units is at most ~0.25 s for the library, measured.
MAX_ESTIMATED_COST = 25_000
# One macro unit costs the library about as much as this many plain tokens (measured: ~1.4 us vs ~0.08 us).
MACRO_WEIGHT = 16
# Work for the whole bundle, in tokens evaluated (+ MACRO_WEIGHT x macro units): a hostile selector x
# 40,000 distinct devices stops here (~4 s) instead of running for minutes. Real selectors are ~10-40
# tokens, so 40,000 devices x 10 selectors is under a fifth of it.
WORK_BUDGET = 50_000_000
# Size assumed for a macro's receiver that is not a list literal: lists made by the functions below are
# capped at this, and a device's maps hold at most 32 entries.
MAX_LIST = 1000
# A macro body may name its variable this often (real selectors: once or twice).
MAX_VARIABLE_USES = 16
# Strings and lists made by the string functions are capped so chained calls cannot grow without bound.
MAX_STRING = 16 * 1024
# k8s.io/api/resource/v1: ResourceSliceMaxAttributesAndCapacitiesPerDevice, DeviceAttributeMaxValueLength.
MAX_ATTRIBUTES_AND_CAPACITIES = 32
MAX_ATTRIBUTE_VALUE_LENGTH = 64

def is_panic(exc: BaseException) -> bool:
    """A Rust panic reaches Python as pyo3's PanicException, a BaseException: a library bug, not a verdict."""
    return type(exc).__name__ == "PanicException"


_MACROS = frozenset({"all", "exists", "exists_one", "map", "filter"})


# --- bounds: a token scan before the library parses (refuses, never evaluates) ------------------------

_TOKEN = re.compile(
    r"""(?P<ws>\s+)
      | (?P<str>(?:[rR][bB]?|[bB][rR]?)?(?:\"\"\"|'''|"|'))
      | (?P<id>[A-Za-z_][A-Za-z0-9_]*)
      | (?P<num>0[xX][0-9a-fA-F]+[uU]?|[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?[uU]?|\.[0-9]+(?:[eE][+-]?[0-9]+)?)
      | (?P<open>[(\[{])
      | (?P<close>[)\]}])
      | (?P<op>.)""",
    re.VERBOSE | re.DOTALL,
)


@dataclass(frozen=True, kw_only=True)
class _Token:
    kind: str
    text: str
    value: str | None = None  # a string literal's text when it has no escapes


def _tokens(expression: str) -> list[_Token]:
    tokens: list[_Token] = []
    pos = 0
    while pos < len(expression):
        m = _TOKEN.match(expression, pos)
        assert m is not None  # the `op` branch matches any character
        kind = m.lastgroup or "op"
        if kind == "str":
            prefix = m.group().rstrip("'\"")
            quote = m.group()[len(prefix):]
            raw = "r" in prefix.lower()
            i = m.end()
            while i < len(expression) and not expression.startswith(quote, i):
                i += 2 if expression[i] == "\\" and not raw else 1
            body = expression[m.end():i]
            tokens.append(_Token(kind="str", text=expression[pos:i + len(quote)],
                                 value=None if "\\" in body else body))
            pos = i + len(quote)
            continue
        if kind != "ws":
            tokens.append(_Token(kind=kind, text=m.group()))
        pos = m.end()
    return tokens


@dataclass(frozen=True, kw_only=True)
class Scan:
    refusal: str | None
    domains: frozenset[str] = frozenset()  # literal keys of device.attributes[...] / device.capacity[...]
    work: int = 0  # estimated cost of one evaluation, in WORK_BUDGET units
    device_work: int = 0  # more work per entry of the device (macros over its maps)
    # Everything the expression reads of `device` ((driver,), (attributes|capacity, domain, name)), or None
    # when it uses a whole map (size(), a macro, ==) and so may read anything.
    reads: tuple[tuple[str, ...], ...] | None = None


def _receiver_start(tokens: list[_Token], opener: dict[int, int], end: int) -> int:
    """First token of the postfix chain ending at `end` (the receiver of `.macro(`)."""
    j = end
    while j >= 0:
        if tokens[j].kind == "close":
            j = opener.get(j, 0)
            # a call `f(...)`, an index `x[...]` or `Msg{...}`: the chain goes on before the bracket
            if j > 0 and (tokens[j - 1].kind in ("id", "close", "str", "num")):
                j -= 1
                continue
        if j >= 2 and tokens[j - 1].text == ".":
            j -= 2
            continue
        return j
    return 0


def _reads(tokens: list[_Token]) -> tuple[tuple[str, ...], ...] | None:
    """What of `device` the expression reads, when every use is `device.driver`,
    `device.attributes["domain"].name` or `device.capacity["domain"]["name"]`; else None."""
    reads: set[tuple[str, ...]] = set()

    def text(j: int) -> str | None:
        return tokens[j].text if j < len(tokens) else None

    for i, token in enumerate(tokens):
        if token.kind != "id" or token.text != "device" or (i > 0 and tokens[i - 1].text == "."):
            continue
        if text(i + 1) != ".":
            return None
        if text(i + 2) == "driver":
            reads.add(("driver",))
            continue
        if (text(i + 2) not in ("attributes", "capacity") or text(i + 3) != "[" or i + 4 >= len(tokens)
                or tokens[i + 4].value is None or text(i + 5) != "]"):
            return None
        domain = tokens[i + 4].value
        if text(i + 6) == "." and i + 7 < len(tokens) and tokens[i + 7].kind == "id" and text(i + 8) != "(":
            name = tokens[i + 7].text
        elif text(i + 6) == "[" and i + 7 < len(tokens) and tokens[i + 7].value is not None and text(i + 8) == "]":
            name = tokens[i + 7].value
        else:
            return None
        reads.add((tokens[i + 2].text, domain, name))
    return tuple(sorted(reads))


def scan(expression: str) -> Scan:
    size = len(expression.encode("utf-8", "surrogatepass"))
    if size > MAX_EXPRESSION_BYTES:
        return Scan(refusal=f"the expression is {size} bytes, over the {MAX_EXPRESSION_BYTES} Kubernetes allows "
                             "(CELSelectorExpressionMaxLength)")
    tokens = _tokens(expression)
    stack: list[int] = []
    opener: dict[int, int] = {}
    closer: dict[int, int] = {}
    macros: list[int] = []  # indexes of the "(" opening each comprehension macro
    macro_opens: set[int] = set()
    domains: set[str] = set()
    for i, token in enumerate(tokens):
        if token.kind == "open":
            if len(stack) >= MAX_NESTING:
                return Scan(refusal=f"brackets nest deeper than {MAX_NESTING}")
            is_macro = (token.text == "(" and i >= 2 and tokens[i - 1].kind == "id"
                        and tokens[i - 1].text in _MACROS and tokens[i - 2].text == ".")
            if is_macro:
                if any(s in macro_opens for s in stack):
                    return Scan(refusal=f"the comprehension macro {tokens[i - 1].text}() is nested inside "
                                         "another one; nested macros can make the work grow without bound")
                macros.append(i)
                macro_opens.add(i)
            stack.append(i)
        elif token.kind == "close" and stack:
            opener[i] = stack.pop()
            closer[opener[i]] = i
        elif (token.kind == "str" and token.value is not None and i >= 3 and tokens[i - 1].text == "["
              and tokens[i - 2].text in ("attributes", "capacity") and tokens[i - 3].text == "."):
            domains.add(token.value)
    cost = 0  # worst case, for refusing
    fixed = 0  # the part that does not depend on the device
    device_body = 0  # x the device's entry count at evaluation
    for m in macros:
        receiver_end = m - 3  # tokens: <receiver> . name (
        if receiver_end < 0:
            continue
        start = _receiver_start(tokens, opener, receiver_end)
        if any(start <= other < m - 2 for other in macros):
            return Scan(refusal=f"the comprehension macro {tokens[m - 1].text}() is applied to the result of "
                                 "another macro; chained macros can make the work grow without bound")
        iterations = MAX_LIST
        on_device = tokens[start].text == "device"  # one of the device's maps: at most 32 entries
        if on_device:
            iterations = MAX_ATTRIBUTES_AND_CAPACITIES
        elif tokens[start].text == "[" and closer.get(start) == receiver_end and (start == 0 or tokens[start - 1].kind
                                                                                 not in ("id", "close", "str", "num")):
            depth = 0
            elements = 0 if receiver_end == start + 1 else 1
            for t in tokens[start + 1:receiver_end]:
                depth += t.kind == "open"
                depth -= t.kind == "close"
                elements += depth == 0 and t.text == ","
            iterations = elements
        end = closer.get(m, len(tokens))
        variable = tokens[m + 1].text if m + 1 < end and tokens[m + 1].kind == "id" else None
        uses = sum(1 for j in range(m + 2, end) if tokens[j].kind == "id" and tokens[j].text == variable
                   and tokens[j - 1].text != ".")
        if uses > MAX_VARIABLE_USES:
            # x + x + ... on a long element copies it quadratically: the one way a body grows its value.
            return Scan(refusal=f"the comprehension macro {tokens[m - 1].text}() uses its variable {variable} "
                                 f"{uses} times, more than {MAX_VARIABLE_USES}")
        body = end - m - 1
        cost += iterations * max(body, 1)
        if on_device:
            device_body += max(body, 1)
        else:
            fixed += iterations * max(body, 1)
        if cost > MAX_ESTIMATED_COST:
            return Scan(refusal=f"the comprehension macros' estimated work ({cost:,} steps) is over "
                                 f"{MAX_ESTIMATED_COST:,} (CELSelectorExpressionMaxCost)")
    return Scan(refusal=None, domains=frozenset(domains), work=len(tokens) + MACRO_WEIGHT * fixed,
                 device_work=MACRO_WEIGHT * device_body, reads=_reads(tokens))

