"""Every default kube-scheduler Filter plugin, in the scheduler's own order, as the checks that stand for them
(the rebuilt scheduler message reports each node's first failure in this order; evidence/scheduler_message.py).

The default plugin order (pkg/scheduler/apis/config/v1/default_plugins.go, v1.34-v1.36): NodeUnschedulable,
NodeName, TaintToleration, NodeAffinity, NodePorts, NodeResourcesFit, VolumeRestrictions, NodeVolumeLimits,
VolumeBinding, VolumeZone, PodTopologySpread, InterPodAffinity, DynamicResources. The funnel runs the same checks
in causes.md's order instead (rules/funnel.py).
"""

from __future__ import annotations

from collections.abc import Callable

from analyzer.model.nodes import NodeView
from analyzer.model.views import Cluster
from analyzer.rules.checks import (
                                   PodFacts,
                                   check_affinity,
                                   check_claims,
                                   check_cordon,
                                   check_fit,
                                   check_node_name,
                                   check_taint,
)
from analyzer.rules.in_use import check_ports, check_rwop, check_volume_limits
from analyzer.rules.interpod import check_interpod
from analyzer.rules.reason import Reason
from analyzer.rules.spread import check_spread
from analyzer.rules.volumes import check_volume_binding, check_volume_zone

SCHEDULER_FILTERS: tuple[Callable[[PodFacts, NodeView, Cluster], Reason | None], ...] = (
    check_cordon, check_node_name, check_taint, check_affinity, check_ports, check_fit, check_rwop,
    check_volume_limits, check_volume_binding, check_volume_zone, check_spread, check_interpod, check_claims,
)
