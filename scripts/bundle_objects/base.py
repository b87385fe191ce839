"""Placeholders and templates (Tpl), times, quantities and the names and uids kubectl would show: what every
object of the synthetic bundles is made from."""

from __future__ import annotations

import hashlib
import json
import re
from datetime import datetime, timedelta, timezone


MARKER = "REDACTED-BY-GPU-TRIAGE"
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"

# A fixed clock: every timestamp is an offset (in seconds, into the past)
# from BASE, so the same seed always gives the same bytes.
BASE = datetime(2026, 11, 29, 12, 0, 0, tzinfo=timezone.utc)
BASE_EPOCH = int(BASE.timestamp())


def ts(sec_before: float) -> str:
    """RFC 3339 second precision, as the API server prints it."""
    return (BASE - timedelta(seconds=int(sec_before))).strftime("%Y-%m-%dT%H:%M:%SZ")


def ts_micro(sec_before: float, micros: int) -> str:
    """MicroTime (events' eventTime)."""
    t = BASE - timedelta(seconds=int(sec_before)) + timedelta(microseconds=micros)
    return t.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def P(key: str) -> str:
    return f"@@{key}@@"


def RAW(key: str) -> str:
    return f"@@R:{key}@@"


def js(s: str) -> str:
    """Escape a value for insertion inside a JSON string literal (Go-style)."""
    out = json.dumps(s, ensure_ascii=False)[1:-1]
    # encoding/json escapes these HTML characters; kubectl prints them so.
    return out.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


_PH = re.compile(r'"@@R:([A-Za-z0-9_]+)@@"|@@([A-Za-z0-9_]+)@@')


class Tpl:
    """One object shape, pre-encoded; ``render(values)`` fills the placeholders."""

    __slots__ = ("parts", "keys", "redactions")

    def __init__(self, obj, level: int = 2):
        text = json.dumps(obj, indent=4, sort_keys=True, ensure_ascii=False)
        # encoding/json (kubectl) escapes <, > and & inside strings; outside
        # strings JSON text never holds them, so a global replace is exact.
        text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
        # What the collector's redaction would count in one rendered object
        # (placeholders never hold the marker).
        self.redactions = {
            "env-value": text.count('"value": "' + MARKER + '"'),
            "last-applied-configuration": text.count('"' + LAST_APPLIED + '": "' + MARKER + '"'),
        }
        if level:
            pad = " " * (4 * level)
            text = pad + text.replace("\n", "\n" + pad)
        pieces = _PH.split(text)
        lits = pieces[0::3]
        keys = [r if r is not None else s for r, s in zip(pieces[1::3], pieces[2::3])]
        parts: list[str] = []
        for i, _k in enumerate(keys):
            parts.append(lits[i])
            parts.append("")
        parts.append(lits[-1])
        self.parts = parts
        self.keys = keys

    def render(self, v: dict) -> str:
        parts = self.parts
        i = 1
        for k in self.keys:
            parts[i] = v[k]
            i += 2
        return "".join(parts)


# ---------------------------------------------------------------- quantities

_BIN = {"Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30, "Ti": 1 << 40}


def qty(res: str, s: str) -> int:
    """The few quantity forms this generator writes -> int (cpu in milli)."""
    if res == "cpu":
        return int(s[:-1]) if s.endswith("m") else int(s) * 1000
    for suf, mul in _BIN.items():
        if s.endswith(suf):
            return int(s[: -len(suf)]) * mul
    return int(s)


def fmt_cpu(m: int) -> str:
    return str(m // 1000) if m % 1000 == 0 else f"{m}m"


def fmt_mem(b: int) -> str:
    if b == 0:
        return "0"
    for suf, mul in (("Ti", 1 << 40), ("Gi", 1 << 30), ("Mi", 1 << 20), ("Ki", 1 << 10)):
        if b % mul == 0:
            return f"{b // mul}{suf}"
    return str(b)


# ------------------------------------------------------------------ hashing

def h64(*parts: str) -> bytes:
    return hashlib.blake2b("\x1f".join(parts).encode(), digest_size=64).digest()


def uid_from(b: bytes) -> str:
    h = bytearray(b[:16])
    h[6] = (h[6] & 0x0F) | 0x40
    h[8] = (h[8] & 0x3F) | 0x80
    x = h.hex()
    return f"{x[0:8]}-{x[8:12]}-{x[12:16]}-{x[16:20]}-{x[20:32]}"


_ALNUM = "bcdfghjklmnpqrstvwxz2456789"  # k8s utilrand alphabet


def suffix_from(b: bytes, n: int = 5) -> str:
    return "".join(_ALNUM[c % len(_ALNUM)] for c in b[:n])


def digest_of(name: str) -> str:
    return hashlib.sha256(name.encode()).hexdigest()


# ------------------------------------------------------------------- pieces
