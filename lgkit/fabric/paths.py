"""Incremental count of valley-free ToR-to-spine paths under disabled links.

paths(ToR) = sum over planes p of uplink_p(ToR) * up[pod, p], where uplink_p is 1 while the
ToR's link to fabric switch p is enabled and up[pod, p] counts the enabled spine uplinks of
that fabric switch. Disabling or enabling one link touches one ToR (ToR-agg link) or the
ToRs of one pod attached to one fabric switch (agg-spine link); nothing is recounted.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from lgkit.fabric.topology import Fabric


class PathState:
    """Enabled/disabled state of every link and the path count of every ToR."""

    def __init__(self, fabric: Fabric) -> None:
        self.fabric = fabric
        shape = (fabric.pods, fabric.tors_per_pod)
        self.tor_uplink = np.ones((*shape, fabric.planes), dtype=bool)
        """tor_uplink[pod, tor, plane]: the ToR's link to fabric switch `plane` is enabled."""
        self.agg_up = np.full((fabric.pods, fabric.planes), fabric.spines_per_plane, np.int64)
        """agg_up[pod, plane]: enabled spine uplinks of that fabric switch."""
        self.tor_paths = np.full(shape, fabric.max_paths, dtype=np.int64)
        """tor_paths[pod, tor]: valley-free paths from the ToR to the spine layer."""
        self.pod_min = np.full(fabric.pods, fabric.max_paths, dtype=np.int64)
        """pod_min[pod]: the least path count of any ToR in the pod."""
        self.enabled = np.ones(fabric.n_links, dtype=bool)
        """enabled[link]: the link carries traffic."""

    def least_paths(self) -> int:
        """Least path count of any ToR in the fabric."""
        return int(self.pod_min.min())

    def disable(self, link: int) -> None:
        """Take a link out of service."""
        self._set(link, enabled=False)

    def enable(self, link: int) -> None:
        """Return a link to service."""
        self._set(link, enabled=True)

    def _set(self, link: int, enabled: bool) -> None:
        if self.enabled[link] == enabled:
            raise ValueError(f"link {link} is already {'enabled' if enabled else 'disabled'}")
        self.enabled[link] = enabled
        sign = 1 if enabled else -1
        pod, a, b = self.fabric.decode(link)
        if self.fabric.is_tor_link(link):
            tor, plane = a, b
            self.tor_uplink[pod, tor, plane] = enabled
            self.tor_paths[pod, tor] += sign * self.agg_up[pod, plane]
        else:
            plane = a
            self.agg_up[pod, plane] += sign
            self.tor_paths[pod, self.tor_uplink[pod, :, plane]] += sign
        self.pod_min[pod] = self.tor_paths[pod].min()

    def keeps_minimum(self, link: int, min_paths: int) -> bool:
        """Would every ToR this enabled link serves keep `min_paths` paths without it?"""
        pod, a, b = self.fabric.decode(link)
        if self.fabric.is_tor_link(link):
            return bool(self.tor_paths[pod, a] - self.agg_up[pod, b] >= min_paths)
        attached = self.tor_uplink[pod, :, a]
        return not attached.any() or bool(self.tor_paths[pod, attached].min() - 1 >= min_paths)

    def pod_paths_without(self, pod: int, links: Iterable[int]) -> np.ndarray:
        """Path counts of the pod's ToRs if the given enabled links of that pod were disabled."""
        tor_paths = self.tor_paths[pod].copy()
        tor_uplink = self.tor_uplink[pod].copy()
        agg_up = self.agg_up[pod].copy()
        for link in links:
            link_pod, a, b = self.fabric.decode(link)
            if link_pod != pod:
                raise ValueError(f"link {link} is not in pod {pod}")
            if self.fabric.is_tor_link(link):
                tor_paths[a] -= agg_up[b]
                tor_uplink[a, b] = False
            else:
                agg_up[a] -= 1
                tor_paths[tor_uplink[:, a]] -= 1
        return tor_paths

    def affected_tors(self, link: int) -> np.ndarray:
        """Indices (within the pod) of the ToRs whose path count the link contributes to."""
        pod, a, b = self.fabric.decode(link)
        if self.fabric.is_tor_link(link):
            return np.array([a])
        return np.flatnonzero(self.tor_uplink[pod, :, a])
