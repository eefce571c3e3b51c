"""Three-tier pod/plane fabrics (Facebook fabric, fat-tree) and their link numbering."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class Fabric:
    """A pod/plane fabric: ToRs -> fabric (agg) switches -> spine planes.

    Every ToR of a pod has one uplink to each of the pod's `planes` fabric switches; the
    fabric switch of plane p has one uplink to each of the `spines_per_plane` spines of
    plane p. Links are numbered: first the ToR-agg links, (pod, tor, plane) in row-major
    order, then the agg-spine links, (pod, plane, spine) in row-major order.
    """

    name: str
    """Label used in run names and figures."""
    pods: int
    """Number of pods."""
    tors_per_pod: int
    """ToR switches per pod."""
    planes: int
    """Fabric switches per pod, equal to the number of spine planes."""
    spines_per_plane: int
    """Spine switches per plane (uplinks of each fabric switch)."""
    link_gbps: float = 100.0
    """Line rate of every switch-to-switch link."""

    def __post_init__(self) -> None:
        for field_name in ("pods", "tors_per_pod", "planes", "spines_per_plane"):
            if getattr(self, field_name) < 1:
                raise ValueError(f"{field_name} must be at least 1")
        if self.link_gbps <= 0:
            raise ValueError("link_gbps must be positive")

    @property
    def tor_links_per_pod(self) -> int:
        """ToR-agg links in one pod."""
        return self.tors_per_pod * self.planes

    @property
    def agg_links_per_pod(self) -> int:
        """Agg-spine links in one pod."""
        return self.planes * self.spines_per_plane

    @property
    def n_tor_links(self) -> int:
        """ToR-agg links in the fabric; link ids below this are ToR-agg links."""
        return self.pods * self.tor_links_per_pod

    @property
    def n_links(self) -> int:
        """All switch-to-switch links."""
        return self.pods * (self.tor_links_per_pod + self.agg_links_per_pod)

    @property
    def max_paths(self) -> int:
        """Valley-free ToR-to-spine paths of a ToR in the healthy fabric."""
        return self.planes * self.spines_per_plane

    @property
    def pod_capacity_gbps(self) -> float:
        """ToR-to-spine capacity of a healthy pod (the narrower of its two layers)."""
        return min(self.tor_links_per_pod, self.agg_links_per_pod) * self.link_gbps

    def tor_link(self, pod: int, tor: int, plane: int) -> int:
        """Id of the link from ToR `tor` of `pod` to the pod's fabric switch `plane`."""
        return (pod * self.tors_per_pod + tor) * self.planes + plane

    def agg_link(self, pod: int, plane: int, spine: int) -> int:
        """Id of the link from fabric switch `plane` of `pod` to spine `spine` of that plane."""
        return self.n_tor_links + (pod * self.planes + plane) * self.spines_per_plane + spine

    def is_tor_link(self, link: int) -> bool:
        """True for ToR-agg links, False for agg-spine links."""
        return link < self.n_tor_links

    def decode(self, link: int) -> tuple[int, int, int]:
        """(pod, tor, plane) of a ToR-agg link or (pod, plane, spine) of an agg-spine link."""
        if not 0 <= link < self.n_links:
            raise ValueError(f"link id {link} outside 0..{self.n_links - 1}")
        if link < self.n_tor_links:
            pod_tor, plane = divmod(link, self.planes)
            pod, tor = divmod(pod_tor, self.tors_per_pod)
            return pod, tor, plane
        pod_plane, spine = divmod(link - self.n_tor_links, self.spines_per_plane)
        pod, plane = divmod(pod_plane, self.planes)
        return pod, plane, spine

    def pod_of(self, link: int) -> int:
        """The pod a link belongs to (every constraint involves one pod only)."""
        return self.decode(link)[0]

    def to_dict(self) -> dict[str, Any]:
        """Plain-data form for run metadata."""
        return asdict(self)


def facebook_fabric(
    pods: int = 261, tors_per_pod: int = 48, planes: int = 4, spines_per_plane: int = 48
) -> Fabric:
    """The Facebook data-center fabric; the defaults give ~100K 100G links, 192 paths per ToR."""
    return Fabric("fb", pods, tors_per_pod, planes, spines_per_plane)


def fat_tree(k: int) -> Fabric:
    """A k-ary fat-tree: k pods of k/2 edge and k/2 agg switches, (k/2)^2 cores in k/2 groups."""
    if k < 2 or k % 2:
        raise ValueError("fat-tree k must be an even number >= 2")
    half = k // 2
    return Fabric(f"fattree{k}", k, half, half, half)
