"""Why one node fails one check: the value every check returns (rules/checks.py, rules/dra_devices.py)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Check(StrEnum):
    """The checks a node can fail, named as `-o json` prints them (a str, so JSON and comparisons read it)."""

    NODE_NAME = "node-name"
    SELECTOR = "selector"
    NOT_ADVERTISED = "not-advertised"
    OTHER_NAME = "other-name"  # the vendor's devices advertised under another name (row 16)
    NO_DEVICES = "no-devices"
    DEVICE_SELECTORS = "device-selectors"
    DEVICE_CONSTRAINTS = "device-constraints"
    CLAIM_PINNED = "claim-pinned"
    CORDON = "cordon"
    TAINT = "taint"
    DEVICE_TAINT = "device-taint"
    ZERO_ALLOCATABLE = "zero-allocatable"
    FIT = "fit"
    DEVICES = "devices"
    VOLUME_TOPOLOGY = "volume-topology"
    VOLUME_ZONE = "volume-zone"
    VOLUME_BINDING = "volume-binding"
    POD_AFFINITY = "pod-affinity"
    TOPOLOGY_SPREAD = "topology-spread"
    HOST_PORT = "host-port"
    RWOP = "rwop"
    VOLUME_LIMIT = "volume-limit"


@dataclass(frozen=True, slots=True, kw_only=True)
class Reason:
    """Why one node fails one check (a funnel stage's removed node)."""

    check: Check
    text: str  # for a person
    scheduler: tuple[str, ...] = ()  # what the scheduler writes for this node, when this is its first failure
