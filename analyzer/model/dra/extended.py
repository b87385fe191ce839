"""Extended resources served through DRA (dra.md; KEP-5004): a DeviceClass with `extendedResourceName`, or the
implicit `deviceclass.resource.kubernetes.io/<class>`, lets a pod that asks for an extended resource in its
limits get devices of that class on a node whose device plugin does not advertise it. A part of DraWorld
(allocate.py), apart because it answers a different question: not a claim's devices, a resource's."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from analyzer.model.dra.outcomes import ExtendedOffer, NodeLike
from analyzer.model.matching import untolerated

IMPLICIT_EXTENDED_PREFIX = "deviceclass.resource.kubernetes.io/"


class ExtendedResources:
    """DraWorld's extended-resource questions; they read its views, devices, holders and class matching."""

    if TYPE_CHECKING:  # what it reads of DraWorld
        views: Any
        _extended: dict[str, str | None]
        _devices: list
        _holders: dict

        def devices_on(self, node: "NodeLike") -> tuple[int, ...]: ...

        def class_matches(self, class_name: str, index: int) -> Any: ...

    def extended_class(self, resource_name: str) -> str | None:
        """The DeviceClass serving an extended resource: explicit extendedResourceName (newest class wins,
        then name), else the implicit deviceclass.resource.kubernetes.io/<class>. Asked per node and pod
        shape by the funnel, so remembered per name."""
        if resource_name not in self._extended:
            self._extended[resource_name] = self._find_extended_class(resource_name)
        return self._extended[resource_name]

    def _find_extended_class(self, resource_name: str) -> str | None:
        named = [c for c in self.views.classes.values() if c.extended_resource_name == resource_name]
        if named:
            return sorted(named, key=lambda c: (c.created, c.name), reverse=True)[0].name
        if resource_name.startswith(IMPLICIT_EXTENDED_PREFIX):
            name = resource_name[len(IMPLICIT_EXTENDED_PREFIX):]
            return name if name in self.views.classes else None
        return None

    def extended_offer(self, resource_name: str, node: NodeLike) -> ExtendedOffer | None:
        """Devices of the class serving `resource_name` on a node that does not advertise it; None otherwise."""
        if resource_name in (getattr(node, "allocatable", None) or {}):
            return None  # the device plugin serves it there
        name = self.extended_class(resource_name)
        if name is None:
            return None
        offered = [i for i in self.devices_on(node)
                   if not self._devices[i].unmodelled and self.class_matches(name, i).matched]
        # The scheduler's claim for an extended resource has no tolerations: tainted devices are not free.
        free = [i for i in offered if self._devices[i].ref not in self._holders and not untolerated(self._devices[i].taints, ())]
        return ExtendedOffer(device_class=name, offered=len(offered), free=len(free))

