"""`why --explain`: the evidence for one target, for a person, checkable in the bundle by hand."""

from __future__ import annotations

import re
import textwrap
from typing import TextIO

from analyzer import prose

from analyzer.verdict import Verdict
from analyzer.output_format import Write
from analyzer.text import printable, some_names

_LABEL = re.compile(r"^( *[a-z][a-z ]{0,20}: +)")  # "  next action: ", "  reason:      ": wrap under the value


def fold(line: str, width: int | None) -> list[str]:
    """A line of at most `width` characters per piece, broken at spaces only (never inside a name or number),
    continuation lines under the value of a labelled line, else indented under the line's text."""
    if width is None or len(line) <= width:
        return [line]
    label = _LABEL.match(line)
    lead = len(label.group(1)) if label else len(line) - len(line.lstrip(" ")) + 4
    first = textwrap.wrap(line, width=max(width, lead + MIN_TEXT), break_long_words=False, break_on_hyphens=False,
                          subsequent_indent=" " * lead, drop_whitespace=True)
    indent = len(line) - len(line.lstrip(" "))
    return [" " * indent + first[0].lstrip(" ")] + first[1:] if first else [line]


MIN_TEXT = 30  # below this a wrapped value would be a word per line: let the line run long instead


def render(v: Verdict, out: TextIO, *, width: int | None = None) -> None:
    """`width`: the terminal's (COLUMNS); None (a pipe) keeps every line whole."""
    t = v.target

    def w(text: str) -> None:
        # Our own line breaks are only the leading blank lines and the final one; any line break or control
        # character inside (a pod or rule name from the bundle) is escaped, so no line can be forged.
        body = text.lstrip("\n")
        end = body.endswith("\n")
        shown = "\n".join(fold(printable(body[:-1] if end else body), width))
        out.write("\n" * (len(text) - len(body)) + shown + ("\n" if end else ""))

    w(f"{v.key}: {v.word}\n")
    w(f"  next action: {v.next_action}\n")
    w(f"  reason:      {v.reason}\n")
    w(f"  source:      {t.source}\n")
    if v.funnel is not None:
        w(f"\nNode funnel ({v.funnel[0]['nodes_in']} node(s); first stage to leave none decides):\n")
        for stage in v.funnel:
            w(f"  {stage['stage']:<16} {stage['nodes_in']:>5} -> {stage['nodes_out']}\n")
            _removed(stage, v.reason, w)
    fit = v.fit
    if fit:
        w("\nCandidates at the fit stage (allocatable - used by non-terminated pods = free):\n")
        for row in fit.rows:
            w(f"  {row['node']}\n")
            for line in _amounts(row, None if width is None else width - 4):
                w(f"    {line}\n")
            if row["used_by"]:
                users = ", ".join(f"{u['pod']} ({u['phase']}) " + " ".join(f"{k}={x}" for k, x in u["requests"].items()) for u in row["used_by"][:10])
                hidden = len(row["used_by"]) - 10 + row.get("used_by_more", 0)
                more = f" … +{hidden} more" if hidden > 0 else ""
                w(f"    used by: {users}{more}\n")
            for line in row.get("nominated") or ():
                w(f"    {line}\n")
            if row.get("unknown_usage"):
                w(f"    usage unknown: {row['unknown_usage']}\n")
        if fit.rest:
            rest = fit.rest
            short = ", ".join(f"{n} short of {r}" for r, n in rest["short"].items())
            largest = ", ".join(f"{r} {q}" for r, q in rest["largest_free"].items())
            w(f"  … {rest['candidates'] - rest['shown']} more candidates (of {rest['candidates']}: {short}; "
              f"largest free anywhere: {largest}; every one in `why`)\n")
        if fit.too_large:
            w(f"  too large: it asks more {', '.join(fit.too_large)} than any candidate can ever offer; waiting will not help\n")
        if fit.fragmented:
            w("  fragmented: the free units summed over the candidates would cover the request, but no single node has enough\n")
        elif not fit.too_large and any(r != "devices" for row in fit.rows for r in row["short"]):
            w("  not fragmented: even summed over every candidate the free units do not cover the request\n")
    if "nearest" in v.evidence:
        w("\nNearest nodes (one change away, whatever the word):\n")
        # Nodes whose one change reads the same are one line (348 candidates, each "only what the reason above
        # says", are not five lines of it); -o json keeps each node's own entry.
        alike: dict[str, list[str]] = {}
        for near in v.evidence["nearest"]:
            only, rest = ("only ", near["reason"][5:]) if near["reason"].startswith("only ") else ("", near["reason"])
            alike.setdefault(f"{only}{_once(rest, v.reason)}", []).append(near["node"])
        for text, nodes in alike.items():
            w(f"  {some_names(nodes)}: {text}\n")
        if v.evidence.get("nearest_more"):
            w(f"  … and {v.evidence['nearest_more']} more nodes one change away (counted, not listed)\n")
        if v.evidence.get("nearest_none"):
            w(f"  {v.evidence['nearest_none']}\n")
    devices = v.evidence.get("devices") or []
    if devices:
        w("\nDevices per node, left after each step (what 'cannot allocate all claims' hides):\n")
        for d in devices:
            w(f"  {d['node']}: {_STAGE.get(d['stage'], 'stops at ' + str(d['stage']))}"
              + (" (too large: not even an empty node has enough)" if d.get("too_large") else "")
              + (f" — {d.get('unmodelled') or d.get('unevaluable')}" if d.get("unmodelled") or d.get("unevaluable") else "")
              + "\n")
            for r in d["requests"]:
                left = r["left_after"]
                w(f"    {r['from']} request {r['request']} (class {r['deviceClassName']}, needs {r['needed']}): "
                  f"class {left.get('class', 0)} -> selectors {left.get('selectors', 0)} -> taints {left.get('taints', 0)} "
                  f"-> free {left.get('free', 0)}\n")
                held = r["held_by"][:10]
                if held and all(f"{h['device']} by {h['claim']}" in v.reason for h in held):
                    w("      held: by the claims the reason above names\n")  # said once, in the reason
                    held = []
                for h in held:
                    w(f"      held: {h['device']} by claim {h['claim']}" + (f" ({', '.join(h['pods'])})" if h["pods"] else "") + "\n")
                for e in r["cel_errors"][:3]:
                    w(f"      CEL error on {e['device']}: {e['error']}\n")
                for t in r.get("tainted", [])[:10]:
                    more = f" and {t['taints_more']} more" if t.get("taints_more") else ""
                    w(f"      tainted: {t['device']}: {', '.join(t['taints'])}{more}\n")
    sched = v.scheduler or {}
    if sched:
        w("\nThe scheduler's own message (evidence only; the word never depends on it):\n")
        if sched.get("message") is not None:
            w(f"  {sched.get('source')}: {sched['message']!r}\n")
        else:
            w("  none recorded (no PodScheduled=False condition, no FailedScheduling event)\n")
        if sched.get("event"):
            ev = sched["event"]
            event_text = "the same text" if ev["message"] == sched.get("message") else repr(ev["message"])
            w(f"  {ev['source']}: {event_text}\n")
        if "rebuilt" in sched:
            w(f"  rebuilt from the bundle: {sched['rebuilt']!r}\n" if sched["rebuilt"] else "  rebuilt from the bundle: some node fits now\n")
        if sched.get("comparison"):
            w(f"  {sched['comparison']}\n")
        if sched.get("conflation"):
            w(f"  note: {sched['conflation']}\n")
        if sched.get("preemption"):
            w(f"  {sched['preemption']}\n")
    _admission(v.evidence, w)
    said = prose.lines(v.evidence, skip=_SHOWN_ABOVE)
    if said:
        w("\nEvidence:\n")
        for line in said:
            w(f"  {line}\n")


GROUPS_SHOWN = 8  # reasons listed per stage; the rest counted (every one in -o json)
NAMES_SHOWN = 3  # nodes named per reason


def _removed(stage: dict, reason: str, w: Write) -> None:
    """A stage's removed nodes, one line per reason: its nodes named (the first few, then how many more), then
    the reason once. 4,999 nodes removed for one reason read as one line, not twenty alike."""
    groups = sorted(stage["removed"], key=lambda g: -g["count"])  # the largest first (stable: then by first node)
    for group in groups[:GROUPS_SHOWN]:
        names = some_names([str(n) for n in group["nodes"]], NAMES_SHOWN, total=group["count"])
        w(f"      removed {names}: {_once(group['reason'], reason)}\n")
    hidden = groups[GROUPS_SHOWN:]
    more = stage.get("removed_more") or {}
    reasons = len(hidden) + more.get("reasons", 0)
    if reasons:
        nodes = sum(g["count"] for g in hidden) + more.get("count", 0)
        w(f"      … and {nodes} more node(s) for {reasons} other reason(s) (every one in -o json)\n")


def _amounts(row: dict, room: int | None = None) -> list[str]:
    """A fit row's resources as a table with a header, each column as wide as its longest value (1381109650Ki
    and 500m in one column), so no line breaks inside a row at 80 columns. `room`: the characters a line may
    take (None: any). A table wider than that (nvidia.com/mig-3g.40gb beside amounts in Ki) puts each resource's
    name on a line of its own above its amounts; narrower still, one labelled line per resource, which folds
    at its spaces: folding a table row would put its last columns under its first."""
    head = ("", "allocatable", "used", "free", "requested")
    cells = [head] + [(r, q["allocatable"], q["used"], q["free"], q["requested"]) for r, q in row["resources"].items()]
    marks = [""] + ["  SHORT" if r in row["short"] else "" for r in row["resources"]]
    widths = [max(len(str(c[k])) for c in cells) for k in range(len(head))]

    def amounts(c: tuple) -> str:
        return "".join(f"  {str(c[k]):>{widths[k]}}" for k in range(1, len(head)))

    lines = [(f"{str(c[0]):<{widths[0]}}" + amounts(c) + mark).rstrip() for c, mark in zip(cells, marks)]
    if room is None or max(len(line) for line in lines) <= room:
        return lines
    lines = [amounts(head).rstrip()]
    for c, mark in zip(cells[1:], marks[1:]):
        lines += [str(c[0]), (amounts(c) + mark).rstrip()]
    if max(len(line) for line in lines) <= room:
        return lines
    return [f"{c[0]}: allocatable {c[1]}, used {c[2]}, free {c[3]}, requested {c[4]}{mark}"
            for c, mark in zip(cells[1:], marks[1:])]


SAID_ONCE = 40  # a clause this long that the reason already holds is referred to, not said again


def _once(text: str, reason: str) -> str:
    """A long clause the reason line already says (a claim's whole device story: request, class, free, held)
    is referred to below it, not repeated: each fact is said once."""
    return "what the reason above says" if len(text) >= SAID_ONCE and text in reason else text


# The step where a node's devices ran out, as a sentence: "dx1: free" read as if dx1 had free devices.
_STAGE = {"class": "no device of the class", "selectors": "no device its selectors accept",
          "taints": "every device it could use is tainted", "free": "no device free (all held)",
          "enough": "not enough devices free together", "constraints": "no devices meet its constraints together",
          "ok": "its claims fit", "pinned": "its claim is allocated to another node",
          "unmodelled": "cannot be judged", "unevaluable": "cannot be judged"}

_SHOWN_ABOVE = ("nearest", "nearest_more", "nearest_none", "devices", "admission", "answer")


def _admission(ev: dict, w: Write) -> None:
    """An attempt: what the API server answered, then the same judgement rebuilt from the bundle's objects."""
    answer = ev.get("answer")
    if isinstance(answer, dict):
        command = " ".join(map(str, answer.get("command") or [])) or "the stored command"
        w(f"\nThe API server's answer ({command}, exit {answer.get('exitStatus')}):\n")
        for line in str(answer.get("stderr") or answer.get("stdout") or "(nothing written)").strip().splitlines():
            w(f"  {line}\n")
    adm = ev.get("admission")
    if not isinstance(adm, dict):
        return
    w("\nAdmission, rebuilt from the bundle's objects:\n")
    for line in prose.lines({"admission": adm}):
        w(f"  {line}\n")
