"""Why one node fails one check: the value every check returns (rules/checks.py, rules/dra_devices.py)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True, kw_only=True)
class Reason:
    """Why one node fails one check (a funnel stage's removed node)."""

    check: str  # the check that failed (selector, node-name, cordon, taint, not-advertised, devices, fit, …)
    text: str  # for a person
    scheduler: tuple[str, ...] = ()  # what the scheduler writes for this node, when this is its first failure
