"""What the API server said about a pod it refused (or admitted): an attempt's dry-run stderr or an owner's
FailedCreate event, reduced to the admission rule it speaks for. Parsed in linear time: the text is untrusted."""

from __future__ import annotations

import re

from analyzer.model.target import ServerText

_FORBIDDEN = re.compile(r'pods "(?P<name>[^"]*)" is forbidden: (?P<why>.*)')
_QUOTA_PARTS = ("exceeded quota: ", ", requested: ", ", used: ", ", limited: ")
MAX_TEXT = 8192  # a real admission message is a few hundred characters


def _quota_detail(why: str) -> dict | None:
    """`exceeded quota: NAME, requested: …, used: …, limited: …`, split with str.find: linear time
    whatever a hostile event says (a regex with .*? backtracks quadratically)."""
    positions = []
    start = 0
    for part in _QUOTA_PARTS:
        at = why.find(part, start)
        if at < 0:
            return None
        positions.append((at, at + len(part)))
        start = at + len(part)
    names = ("quota", "requested", "used", "limited")
    out = {}
    for i, name in enumerate(names):
        begin = positions[i][1]
        end = positions[i + 1][0] if i + 1 < len(positions) else len(why)
        out[name] = why[begin:end].strip()
    return out
_RUNTIMECLASS = re.compile(r'RuntimeClass "(?P<rc>[^"]*)" not found')

# What the API server's text says, reduced to the rule it speaks for.
SAYS_RUNTIMECLASS = "runtimeclass"
SAYS_QUOTA = "quota"
SAYS_OTHER = "other-refusal"
SAYS_ADMITTED = "admitted"


def read_refusal(why: str) -> ServerText:
    """Classify the part after `is forbidden: ` (both for kubectl apply stderr and FailedCreate events)."""
    why = why[:MAX_TEXT]
    m = _RUNTIMECLASS.search(why)
    if m:
        return ServerText(says=SAYS_RUNTIMECLASS, text=why, detail={"runtimeClassName": m.group("rc")})
    detail = _quota_detail(why)
    if detail is not None:
        return ServerText(says=SAYS_QUOTA, text=why, detail=detail)
    if "failed quota:" in why or "status unknown for quota" in why:
        return ServerText(says=SAYS_QUOTA, text=why)
    return ServerText(says=SAYS_OTHER, text=why)


def text_for_pod(stderr: str, exit_status: int, pod_name: str) -> ServerText | None:
    """What an apply's stderr says about one pod of the manifest (a file can hold several)."""
    for line in stderr[: MAX_TEXT * 16].splitlines():
        m = _FORBIDDEN.search(line[:MAX_TEXT])
        if m and m.group("name") == pod_name:
            return read_refusal(m.group("why"))
    if exit_status == 0:
        return ServerText(says=SAYS_ADMITTED, text="admitted (exit status 0)")
    return None  # the answer is about something else (a connection error, another object)


def text_from_event(message: str) -> ServerText | None:
    m = _FORBIDDEN.search(message[:MAX_TEXT])
    return read_refusal(m.group("why")) if m else None
