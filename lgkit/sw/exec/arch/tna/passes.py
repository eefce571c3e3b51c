"""TNA's packet passes on the bytes between the blocks, as Tofino 1 runs them: the ingress
parser reads the intrinsic metadata and port metadata (or resubmit data) before the packet, the
ingress deparser's bytes cross the traffic manager, the egress parser reads the egress intrinsic
metadata before them. The decisions (docs/tofino.md, "The TNA model"):

End of ingress (after the ingress deparser): mirror (mirror_type != 0 and Mirror.emit: the
original packet behind the mirror header, to each target of the session, cut to the session's
max_pkt_len (pl.mirror_max_len; the mirror header and the FCS count); not with drop_ctl bit 2)
-> digest (digest_type != 0 and Digest.pack) -> drop (drop_ctl bit 0: unicast, multicast and
resubmit) -> resubmit (resubmit_type != 0 and Resubmit.emit: the original packet again, the
resubmit header as its port metadata, resubmit_flag 1; nothing else) -> multicast (mcast_grp_a,
mcast_grp_b: a copy per member) and unicast (ucast_egress_port, when ingress wrote it), each in
the egress queue `qid` names (the traffic manager's priority; mirror copies: their session's
queue, 0 unless set); nowhere to go is a drop. bypass_egress sends the copies out without the
egress blocks.
End of egress (after the egress deparser): mirror (the deparsed packet behind the mirror
header, cut the same way) -> drop (drop_ctl bit 0) -> a recirculation port (RECIRC_PORTS)
takes the packet back to ingress on that port; any other port transmits it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from lgkit.sw.exec.arch.tna.program import NO_PORT
from lgkit.sw.exec.arch.v1model.passes import _run
from lgkit.sw.exec.interp.layout import scalar_width
from lgkit.sw.exec.interp.runtime import Ctx, deparse
from lgkit.sw.exec.jobs import EgressJob, EgressResult, IngressJob, IngressResult
from lgkit.sw.lang.types import StructLikeT

if TYPE_CHECKING:
    from lgkit.sw.exec.pipeline import Pipeline

NORMAL, MIRROR, REPLICA, RESUBMIT, RECIRC = range(5)  # the jobs' instance_type
# Tofino 1's recirculation ports: local port 68 of each of the four pipes (port = pipe << 7 | 68)
RECIRC_PORTS = frozenset({68, 196, 324, 452})
PORT_METADATA_BYTES = 8  # tofino1_specs.p4: PORT_METADATA_SIZE = 64 bits
FCS_BYTES = 4  # in a mirror session's max_pkt_len, not in the model's frames

IG_INTR = "ingress_intrinsic_metadata_t"
EG_INTR = "egress_intrinsic_metadata_t"
TM = "ingress_intrinsic_metadata_for_tm_t."
IG_DPRSR = "ingress_intrinsic_metadata_for_deparser_t."
EG_DPRSR = "egress_intrinsic_metadata_for_deparser_t."


def pack_header(t: StructLikeT, values: dict[str, int]) -> bytes:
    """A header's bytes with the named fields set (the others, padding included, zero)."""
    acc = nbits = 0
    for name, ft in t.fields:
        w = scalar_width(ft)
        acc = (acc << w) | (values.get(name, 0) & ((1 << w) - 1))
        nbits += w
    return acc.to_bytes(nbits // 8, "big")


class Slots:
    """The intrinsic metadata slots and the block functions of a loaded TNA program."""

    def __init__(self, pl: Pipeline):
        code = pl.code
        self.sm = code.sm
        self.template = code.template
        self.blocks = code.blocks
        self.types: dict[str, StructLikeT] = code.ns["_tna_types"]
        self.port_metadata: dict[int, bytes] = {}  # port -> its 64 bits (port_metadata.py)

    def get(self, S: list, name: str, default: int = 0) -> int:
        slot = self.sm.get(name)
        return default if slot is None else S[slot]

    def put(self, S: list, name: str, value: int) -> None:
        slot = self.sm.get(name)
        if slot is not None:
            S[slot] = value


def _blocks(pl: Pipeline, x: Slots, side: str, S: list, P: Ctx) -> bytes:
    """Parser, control and deparser of one side; the deparsed packet."""
    parser = x.blocks[f"{side}_parser"]
    parser(S, P)
    P.payload = P.data[P.pos >> 3:]
    _run(pl, x.blocks["ingress" if side == "ig" else "egress"], S, P)
    _run(pl, x.blocks[f"{side}_deparser"], S, P)
    return deparse(P.out) + P.payload


def ingress(pl: Pipeline, port: int, data: bytes, now_us: int,
            resubmitted: bytes | None = None) -> IngressResult:
    x = cast(Slots, pl.slots)  # what Tna.bind keeps on the pipeline
    S = x.template[:]
    intr = {"resubmit_flag": int(resubmitted is not None), "ingress_port": port,
            "ingress_mac_tstamp": now_us * 1000}
    prefix = pack_header(x.types[IG_INTR], intr) if IG_INTR in x.types else b""
    if resubmitted is None:
        port_md = x.port_metadata.get(port, bytes(PORT_METADATA_BYTES))
    else:
        port_md = resubmitted[:PORT_METADATA_BYTES].ljust(PORT_METADATA_BYTES, b"\0")
    P = Ctx(prefix + port_md + data, now_us)
    P.count_len = len(data)
    x.put(S, "ingress_intrinsic_metadata_from_parser_t.global_tstamp", now_us * 1000)
    out = _blocks(pl, x, "ig", S, P)
    return _ingress_end(pl, x, port, data, out, S, P)


def _ingress_end(pl: Pipeline, x: Slots, port: int, data: bytes, out: bytes, S: list,
                 P: Ctx) -> IngressResult:
    result = IngressResult([], None, 0)
    drop_ctl = x.get(S, IG_DPRSR + "drop_ctl")
    mirrors: list[EgressJob] = []
    if P.clone is not None and x.get(S, IG_DPRSR + "mirror_type") and not drop_ctl & 4:
        session, hdr = _mirror_request(P)
        mirrors = _mirrors(pl, session, hdr + data)
    if P.digest is not None and x.get(S, IG_DPRSR + "digest_type"):
        pl.digests.append(P.digest)
    if drop_ctl & 1:
        result.egress, result.drops = mirrors, 1
        return result
    if P.resubmit is not None and x.get(S, IG_DPRSR + "resubmit_type"):
        result.egress, result.resubmit = mirrors, IngressJob(data, RESUBMIT, (port, P.resubmit))
        return result
    state = (out, bool(x.get(S, TM + "bypass_egress")))
    qid = x.get(S, TM + "qid")  # the egress queue of every copy (the TM's priority)
    for group in (x.get(S, TM + "mcast_grp_a"), x.get(S, TM + "mcast_grp_b")):
        for rid, member in pl.mc_groups.get(group, ()) if group else ():
            result.egress.append(EgressJob(member, qid, REPLICA, rid, len(out), state))
    ucast = x.get(S, TM + "ucast_egress_port", NO_PORT)
    if ucast != NO_PORT:
        result.egress.append(EgressJob(ucast, qid, NORMAL, 0, len(out), state))
    if not result.egress:
        result.drops = 1
    result.egress.extend(mirrors)
    return result


def _mirror_request(P: Ctx) -> tuple[int, bytes]:
    """Mirror.emit's request: the session and the mirror header's bytes (externs/tna_paths.py
    keeps them where v1model's clone keeps its session and field list)."""
    return cast("tuple[int, bytes]", P.clone)


def _mirrors(pl: Pipeline, session: int, copy: bytes) -> list[EgressJob]:
    """The session's copies; its max_pkt_len cuts them: the mirror header, the packet behind it
    and the 4-byte FCS together (the authors' set-up scripts give 26 for an 8-byte mirror header
    and a 14-byte Ethernet header, 21 for 3 + 14); its queue (P4Runtime's class_of_service, a
    Tofino mirror session's egress queue) is theirs, 0 unless set."""
    limit = pl.mirror_max_len.get(session)
    copy = copy[:max(limit - FCS_BYTES, 0)] if limit else copy
    queue = pl.mirror_queue.get(session, 0)
    return [EgressJob(port, queue, MIRROR, rid, len(copy), (copy, False))
            for port, rid in pl.clone_sessions.get(session, ())]


def ingress_job(pl: Pipeline, job: IngressJob, now_us: int) -> IngressResult:
    """A resubmitted or recirculated packet (preserved: its port, and the resubmit header)."""
    port = job.preserved[0]
    resubmitted = job.preserved[1] if job.instance_type == RESUBMIT else None
    return ingress(pl, port, job.data, now_us, resubmitted)


def egress(pl: Pipeline, job: EgressJob, now_us: int, enq_qdepth: int = 0, deq_qdepth: int = 0,
           enq_timestamp: int = 0, deq_timedelta: int = 0) -> EgressResult:
    x = cast(Slots, pl.slots)  # what Tna.bind keeps on the pipeline
    data, bypass = cast("tuple[bytes, bool]", job.state)  # made by _ingress_end
    result = EgressResult(None, [], None, False)
    if bypass:
        return _transmit(job.port, data, result)
    S = x.template[:]
    intr = {"egress_port": job.port, "enq_qdepth": enq_qdepth, "enq_tstamp": enq_timestamp,
            "deq_qdepth": deq_qdepth, "deq_timedelta": deq_timedelta, "egress_rid": job.rid,
            "pkt_length": len(data), "egress_qid": job.priority}
    prefix = pack_header(x.types[EG_INTR], intr) if EG_INTR in x.types else b""
    P = Ctx(prefix + data, now_us)
    P.count_len = len(data)
    x.put(S, "egress_intrinsic_metadata_from_parser_t.global_tstamp", now_us * 1000)
    out = _blocks(pl, x, "eg", S, P)
    drop_ctl = x.get(S, EG_DPRSR + "drop_ctl")
    if P.clone is not None and x.get(S, EG_DPRSR + "mirror_type") and not drop_ctl & 4:
        session, hdr = _mirror_request(P)
        result.clones = _mirrors(pl, session, hdr + out)
    if drop_ctl & 1:
        result.dropped = True
        return result
    return _transmit(job.port, out, result)


def _transmit(port: int, out: bytes, result: EgressResult) -> EgressResult:
    if port in RECIRC_PORTS:
        result.recirculate = IngressJob(out, RECIRC, (port,))
    else:
        result.out = (port, out)
    return result
