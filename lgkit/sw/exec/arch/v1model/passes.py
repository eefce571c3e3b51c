"""v1model's packet passes as BMv2 simple_switch runs them: ingress and egress passes with the
traffic-manager decisions in BMv2's order, and an untimed driver for STF and tests.

End of ingress: I2E clone (original bytes re-parsed; all metadata then reset except the field
list; instance_type 1) -> digest -> resubmit (instance_type 6; nothing else happens) -> multicast
(copies with instance_type 5 and egress_rid; original discarded) -> drop (egress_spec 511) ->
unicast (instance_type reset to 0).
End of egress: E2E clone (post-egress headers, metadata reset + field list, instance_type 2)
-> drop (egress_spec 511) -> deparse (compute checksum + deparser) -> recirculate (deparsed
bytes, instance_type 4; not transmitted) -> transmit (truncate applied).
"""

from __future__ import annotations

from collections import deque
from functools import partial
from typing import TYPE_CHECKING, Any, cast

from lgkit.sw.exec.interp.passthrough import header_writes
from lgkit.sw.exec.interp.runtime import Ctx, ExitBlock, LoopLimit, StackIndexError, deparse
from lgkit.sw.exec.jobs import EgressJob, EgressResult, IngressJob, IngressResult

if TYPE_CHECKING:
    from collections.abc import Iterable

    from lgkit.sw.exec.pfc import UntimedPause
    from lgkit.sw.exec.pipeline import Pipeline

NORMAL, INGRESS_CLONE, EGRESS_CLONE, COALESCED, RECIRC, REPLICATION, RESUBMIT = range(7)


# What an egress job carries (EgressJob.state), a plain tuple for speed:
# (S, payload, plen, truncate, count_len, recirc, parsed, data): the slots, the payload, the
# length register, the truncation, the length the packet had when it entered the switch (BMv2's
# ingress_length: what counters and meters count, also in egress and for clones and replicas),
# a recirculate request made in ingress (BMv2 keeps it for a unicast packet), and the parse-memo
# entry of its ingress parse with the frame it came in as (interp/passthrough.py; else None).
EgressState = tuple[list[Any], bytes, int, int | None, int, int | None, tuple[Any, ...] | None,
                    bytes | None]


class Slots:
    """standard_metadata slot indices and the generated block functions, bound once; and the
    program's pass functions (`passes`: ingress, ingress_job, egress, the Pipeline's), generated
    with the slot indices as constants and the blocks called by name (see PASSES)."""

    def __init__(self, pl: Pipeline):
        code = pl.code
        sm = code.sm
        self.ingress_port = sm["ingress_port"]
        self.egress_spec = sm["egress_spec"]
        self.egress_port = sm["egress_port"]
        self.instance_type = sm["instance_type"]
        self.packet_length = sm["packet_length"]
        self.enq_timestamp = sm["enq_timestamp"]
        self.enq_qdepth = sm["enq_qdepth"]
        self.deq_timedelta = sm["deq_timedelta"]
        self.deq_qdepth = sm["deq_qdepth"]
        self.ingress_ts = sm["ingress_global_timestamp"]
        self.egress_ts = sm["egress_global_timestamp"]
        self.mcast_grp = sm["mcast_grp"]
        self.egress_rid = sm["egress_rid"]
        self.priority = sm["priority"]
        blocks = code.blocks
        self.parser = blocks["parser"]
        empty = code.empty_blocks  # None: nothing to run (skipped, not called)
        self.verify = None if "verify" in empty else blocks["verify"]
        self.ingress = blocks["ingress"]
        self.egress = blocks["egress"]
        self.compute = None if "compute" in empty else blocks["compute"]
        self.deparser = blocks["deparser"]
        self.template = code.template
        self.field_lists = code.field_lists
        self.runs = {ident: _runs(slots) for ident, slots in code.field_lists.items()}
        self.hdr_range = code.hdr_range
        roots = [f.__name__ for f in (self.compute, self.deparser) if f is not None]
        self.pass_writes = header_writes(code.source, roots, self.hdr_range, code.ns)
        self.passes = _generate(self, code.ns, pl)


# The passes of a program, generated once per pipeline with its slot indices (S[...]), block
# functions and the pipeline itself (_v1_pl) as constants; the decisions in BMv2's order (module
# docstring). The Pipeline's ingress / ingress_job / egress are these functions themselves (a
# call less per pass). The rare outcomes (clone, digest, resubmit, multicast) continue in
# _ingress_end / _egress_clone below.
PASSES = """
def _v1_pass_ingress(port, data, now_us):
    now = now_us
    S = _v1_template[:]
    S[{ingress_port}] = port & 0x1FF
    S[{ingress_ts}] = now & 0xFFFFFFFFFFFF
    S[{instance_type}] = 0
{ingress_body}

def _v1_pass_ingress_job(job, now_us):
    now = now_us
    data = job.data
    S = _v1_template[:]
    preserved = job.preserved
    if preserved:
        for lo, hi, values in preserved:
            S[lo:hi] = values
    instance_type = job.instance_type
    if instance_type == 0:
        S[{ingress_port}] = 0
        S[{ingress_ts}] = now & 0xFFFFFFFFFFFF
    S[{instance_type}] = instance_type
{ingress_body}

def _v1_pass_egress(job, now_us, enq_qdepth=0, deq_qdepth=0, enq_timestamp=0, deq_timedelta=0):
    now = now_us
    state = job.state
    if state.__class__ is not tuple:
        raise TypeError("egress job state was not made by an ingress pass")
    S, payload, plen, truncate, count_len, recirc, parsed, data = state
    S[{egress_port}] = job.port & 0x1FF
    S[{egress_spec}] = 0
    S[{packet_length}] = plen
    S[{instance_type}] = job.instance_type
    S[{egress_rid}] = job.rid & 0xFFFF
    S[{enq_timestamp}] = enq_timestamp & 0xFFFFFFFF
    S[{enq_qdepth}] = enq_qdepth & 0x7FFFF
    S[{deq_timedelta}] = deq_timedelta & 0xFFFFFFFF
    S[{deq_qdepth}] = deq_qdepth & 0x7FFFF
    S[{egress_ts}] = now & 0xFFFFFFFFFFFF
    P = _v1_Ctx(b"", now)
    P.payload = payload
    P.plen = plen
    P.count_len = count_len
    P.truncate = truncate
    P.recirc = recirc
    try:
        _v1_egress(S, P)
    except _v1_ExitBlock:
        pass
    except _v1_SIE:
        _v1_pl.logs.append("error: header stack index out of bounds in egress; the block ended")
    except _v1_Loop as exc:
        return _v1_loop_drop({egress_dropped}, exc)
    result = _v1_EgressResult(None, [], None, False)
    if P.clone is not None:
        _v1_egress_clone(_v1_pl, _v1_pl.slots, S, P, result)
    if S[{egress_spec}] == _drop_port:
        result.dropped = True
        return result
{pass_check}{compute}
    try:
        _v1_deparser(S, P)
    except _v1_ExitBlock:
        pass
    except _v1_SIE:
        _v1_pl.logs.append("error: header stack index out of bounds; the block ended")
    except _v1_Loop as exc:
        result.dropped = True
        return _v1_loop_drop(result, exc)
    parts = P.out
    parts.append(P.payload)
    try:
        out = b"".join(parts)
    except TypeError:  # headers that are not whole bytes
        parts.pop()
        out = _v1_deparse(parts) + P.payload
    if P.recirc is not None:
{pass_learn}        preserved = _v1_preserved(_v1_pl.slots, S, P.recirc)
        result.recirculate = _v1_IngressJob(out, 4, preserved)
        return result
    if P.truncate is not None and P.truncate < len(out):
        out = out[: P.truncate]
    result.out = (job.port, out)
    return result
"""

# The rest of an ingress pass, the same after either start (a fresh packet, a job).
INGRESS_BODY = """
    S[{packet_length}] = len(data)
    P = _v1_Ctx(data, now)
    _v1_parser(S, P)
    P.payload = data[P.pos >> 3 :]
{verify}
    try:
        _v1_ingress(S, P)
    except _v1_ExitBlock:
        pass
    except _v1_SIE:
        _v1_pl.logs.append("error: header stack index out of bounds in ingress; the block ended")
    except _v1_Loop as exc:
        return _v1_loop_drop({ingress_dropped}, exc)
    if P.clone is None and P.digest is None and P.resubmit is None and not S[{mcast_grp}]:
        spec = S[{egress_spec}]
        if spec == _drop_port:
            return _v1_IngressResult([], None, 1)
        S[{instance_type}] = 0
        plen = P.plen
        state = (S, P.payload, plen, P.truncate, P.count_len, P.recirc, P.parsed, data)
        job = _v1_EgressJob(spec, S[{priority}], 0, S[{egress_rid}], plen, state)
        return _v1_IngressResult([job], None, 0)
    return _v1_ingress_end(_v1_pl, data, S, P)"""

# Pass-through (interp/passthrough.py) of a recirculating pass whose header slots are those its
# ingress parse got from the parse memo: the entry's last item learns, on the first such pass,
# whether deparsing them gives the frame's own bytes back, and the slots compute wrote.
PASS_CHECK = """
    seen = None
    if parsed is not None and P.recirc is not None and tuple(S[{lo}:{hi}]) == parsed[0]:
        seen = parsed[4]
        kept = seen[0]
        if kept:
{restore}
            preserved = _v1_preserved(_v1_pl.slots, S, P.recirc)
            result.recirculate = _v1_IngressJob(data, 4, preserved)
            return result
"""
PASS_LEARN = """
        if seen is not None and seen[0] is None:
            seen[0] = (True, {written}) if out == data else False
"""

# A pass that runs past the loop bound (Pipeline.max_loop_iterations) ends with its packet dropped.
INGRESS_DROPPED = "_v1_IngressResult([], None, 1)"
EGRESS_DROPPED = "_v1_EgressResult(None, [], None, True)"

_GUARDED = """
    try:
        {fn}(S, P)
    except _v1_ExitBlock:
        pass
    except _v1_SIE:
        _v1_pl.logs.append("error: header stack index out of bounds; the block ended")
    except _v1_Loop as exc:
        return _v1_loop_drop({dropped}, exc)
"""


def _generate(x: Slots, ns: dict, pl: Pipeline) -> tuple[Any, Any, Any]:
    """Compile PASSES for this pipeline into its program's namespace; returns the passes
    (ingress, ingress_job, egress)."""
    ns.update(
        _v1_pl=pl,
        _v1_template=x.template, _v1_parser=x.parser, _v1_verify=x.verify,
        _v1_ingress=x.ingress, _v1_egress=x.egress, _v1_compute=x.compute,
        _v1_deparser=x.deparser, _v1_Ctx=Ctx, _v1_ExitBlock=ExitBlock, _v1_SIE=StackIndexError,
        _v1_Loop=LoopLimit, _v1_loop_drop=partial(_loop_drop, pl),
        _v1_IngressResult=IngressResult, _v1_EgressResult=EgressResult,
        _v1_EgressJob=EgressJob, _v1_IngressJob=IngressJob,
        _v1_deparse=deparse, _v1_preserved=_preserved, _v1_ingress_end=_ingress_end,
        _v1_egress_clone=_egress_clone,
    )
    slots = {name: getattr(x, name) for name in (
        "ingress_port", "ingress_ts", "instance_type", "packet_length", "mcast_grp",
        "egress_spec", "priority", "egress_rid", "egress_port", "enq_timestamp", "enq_qdepth",
        "deq_timedelta", "deq_qdepth", "egress_ts")}
    check = learn = ""
    if x.pass_writes is not None:
        lo, hi = x.hdr_range
        restore = "".join(f"            S[{k}] = kept[{i + 1}]\n"
                          for i, k in enumerate(x.pass_writes))
        check = PASS_CHECK.format(lo=lo, hi=hi, restore=restore.rstrip("\n") or "            pass")
        learn = PASS_LEARN.format(written="".join(f"S[{k}], " for k in x.pass_writes))
    body = INGRESS_BODY.format(
        verify=_GUARDED.format(fn="_v1_verify", dropped=INGRESS_DROPPED)
        if x.verify is not None else "", ingress_dropped=INGRESS_DROPPED, **slots)
    source = PASSES.format(
        ingress_body=body, pass_check=check.lstrip("\n"), pass_learn=learn.lstrip("\n"),
        compute=_GUARDED.format(fn="_v1_compute", dropped=EGRESS_DROPPED)
        if x.compute is not None else "", egress_dropped=EGRESS_DROPPED,
        **slots,
    )
    exec(compile(source, "<lgkit-v1model-passes>", "exec"), ns)  # noqa: S102 - our template
    return ns["_v1_pass_ingress"], ns["_v1_pass_ingress_job"], ns["_v1_pass_egress"]


def _loop_drop(pl: Pipeline, result: Any, exc: LoopLimit) -> Any:
    """A pass that ran past the loop bound ends here: its packet is dropped (`result`)."""
    pl.logs.append(loop_limit_message(pl, exc) + "; the pass ended and its packet was dropped")
    return result


def loop_limit_message(pl: Pipeline, exc: LoopLimit) -> str:
    return (f"error: the loop at {exc.loop} ran past {pl.max_loop_iterations} iterations "
            f"in one pass (max_loop_iterations)")


def _run(pl: Pipeline, block: object, S: list, P: Ctx) -> None:
    try:
        block(S, P)  # type: ignore[operator]
    except ExitBlock:
        pass
    except StackIndexError:
        pl.logs.append("error: header stack index out of bounds; the block ended")
    except LoopLimit as exc:
        pl.logs.append(loop_limit_message(pl, exc) + "; the block ended")


def _parse(pl: Pipeline, x: Slots, S: list, P: Ctx) -> None:
    """Parser then verify-checksum (BMv2 verifies at the end of every parse): an I2E clone's
    parse of the original bytes (the passes do the same in PASSES)."""
    x.parser(S, P)
    P.payload = P.data[P.pos >> 3 :]
    if x.verify is not None:
        _run(pl, x.verify, S, P)


def _fresh(x: Slots, source: list, field_list: int | None) -> list:
    """Reset slots (all metadata zero) with the field list's fields copied from source."""
    S = x.template[:]
    if field_list is not None:
        for lo, hi in x.runs.get(field_list, ()):
            S[lo:hi] = source[lo:hi]
    return S


def _preserved(x: Slots, S: list, field_list: int | None) -> tuple:
    """The field list's values as IngressJob.preserved: (first slot, end slot, values) runs."""
    runs = x.runs.get(field_list) if field_list is not None else None
    if not runs:
        return ()
    if len(runs) == 1:
        lo, hi = runs[0]
        return ((lo, hi, S[lo:hi]),)
    return tuple([(lo, hi, S[lo:hi]) for lo, hi in runs])


def _runs(slots: list[int]) -> tuple[tuple[int, int], ...]:
    """Slots as (first, end) runs of consecutive slots, in order (duplicates dropped)."""
    runs: list[list[int]] = []
    for slot in sorted(set(slots)):
        if runs and runs[-1][1] == slot:
            runs[-1][1] = slot + 1
        else:
            runs.append([slot, slot + 1])
    return tuple((lo, hi) for lo, hi in runs)


def _ingress_end(pl: Pipeline, data: bytes, S: list, P: Ctx) -> IngressResult:
    """The end of an ingress pass that cloned, digested, resubmitted or multicast."""
    x = cast(Slots, pl.slots)  # what V1Model.bind keeps on the pipeline
    result = IngressResult([], None, 0)
    if P.clone is not None:
        _ingress_clone(pl, x, S, P, result)
    if P.digest is not None:
        pl.digests.append(P.digest)
    if P.resubmit is not None:
        result.resubmit = IngressJob(data, RESUBMIT, _preserved(x, S, P.resubmit))
        return result
    mgid = S[x.mcast_grp]
    if mgid:
        members = pl.mc_groups.get(mgid, ())
        for i, (rid, out_port) in enumerate(members):
            copy = S if i == len(members) - 1 else S[:]  # the original is discarded
            copy[x.egress_rid] = rid & 0xFFFF
            copy[x.instance_type] = REPLICATION
            state: EgressState = (copy, P.payload, P.plen, P.truncate, P.count_len, None, None,
                                  None)
            result.egress.append(
                EgressJob(out_port, copy[x.priority], REPLICATION, rid, P.plen, state)
            )
        return result
    spec = S[x.egress_spec]
    if spec == pl.drop_port:
        result.drops = 1
        return result
    S[x.instance_type] = NORMAL
    state = (S, P.payload, P.plen, P.truncate, P.count_len, P.recirc, P.parsed, data)
    result.egress.append(EgressJob(spec, S[x.priority], NORMAL, S[x.egress_rid], P.plen, state))
    return result


def _ingress_clone(pl: Pipeline, x: Slots, S: list, P: Ctx, result: IngressResult) -> None:
    """BMv2: the original bytes are parsed again (with ingress_port set, so the parser sees
    it), then all metadata is reset and only the field list and instance_type 1 are set."""
    assert P.clone is not None  # called for a clone request only
    session, field_list = P.clone
    targets = pl.clone_sessions.get(session)
    if not targets:
        return
    parsed = x.template[:]
    parsed[x.ingress_port] = S[x.ingress_port]
    P2 = Ctx(P.data, P.now)
    _parse(pl, x, parsed, P2)
    copy = _fresh(x, S, field_list)
    hdr_lo, hdr_hi = x.hdr_range
    copy[hdr_lo:hdr_hi] = parsed[hdr_lo:hdr_hi]
    copy[x.instance_type] = INGRESS_CLONE
    result.egress.extend(_replicas(x, copy, targets, INGRESS_CLONE, P2))


def _egress_clone(pl: Pipeline, x: Slots, S: list, P: Ctx, result: EgressResult) -> None:
    assert P.clone is not None  # called for a clone request only
    session, field_list = P.clone
    targets = pl.clone_sessions.get(session)
    if not targets:
        return
    copy = _fresh(x, S, field_list)
    hdr_lo, hdr_hi = x.hdr_range
    copy[hdr_lo:hdr_hi] = S[hdr_lo:hdr_hi]
    copy[x.instance_type] = EGRESS_CLONE
    result.clones.extend(_replicas(x, copy, targets, EGRESS_CLONE, P))


def _replicas(
    x: Slots, copy: list, targets: list[tuple[int, int]], instance_type: int, P: Ctx
) -> list[EgressJob]:
    """One egress job per clone-session target (port, rid), each with its own metadata copy
    (the last one takes `copy` itself, which nothing else holds)."""
    jobs = []
    last = len(targets) - 1
    for i, (out_port, rid) in enumerate(targets):
        replica = copy if i == last else copy[:]
        replica[x.egress_rid] = rid & 0xFFFF
        state = (replica, P.payload, P.plen, None, P.count_len, None, None, None)
        jobs.append(EgressJob(out_port, replica[x.priority], instance_type, rid, P.plen, state))
    return jobs


def run_untimed(pl: Pipeline, port: int, data: bytes | None,
                jobs: Iterable[EgressJob] = (), pause: UntimedPause | None = None
                ) -> list[tuple[int, bytes]]:
    """Drive one packet and everything it causes to completion on the pipeline's virtual clock
    (passclock.py: each pass costs the clock's pass_ns; the traffic manager costs nothing, so
    a job is enqueued and dequeued at the same time); returns transmitted packets in order.
    Resubmitted/recirculated packets are served before egress work (BMv2's high-priority
    ingress queue); egress copies are processed FIFO. The work stops, with an error logged,
    when it has taken the clock's limit_ns of virtual time. With `data` None only `jobs` (egress
    jobs a PFC pause held) run; `pause` holds the egress jobs of paused queues (exec/pfc.py)."""
    clock = pl.untimed_clock
    deadline = clock.now_ns + clock.limit_ns
    outputs: list[tuple[int, bytes]] = []
    ingress_q: deque[IngressJob | None] = deque([None] if data is not None else [])
    egress_q: deque[EgressJob] = deque(jobs)
    while ingress_q or egress_q:
        if clock.now_ns >= deadline:
            pl.logs.append(f"error: too many resubmit/recirculate/clone passes; stopped after "
                           f"{clock.limit_ns / 1e9:g} s of virtual time")
            break
        if pause is not None and not ingress_q and pause.holds(egress_q[0], clock.now_ns):
            egress_q.popleft()
            continue
        now = clock.tick()
        if ingress_q:
            job = ingress_q.popleft()
            res = pl.ingress(port, cast(bytes, data), now) if job is None \
                else pl.ingress_job(job, now)
            egress_q.extend(res.egress)
            if res.resubmit is not None:
                ingress_q.append(res.resubmit)
            continue
        ejob = egress_q.popleft()
        eres = pl.egress(ejob, now, 0, len(egress_q), now, 0)
        egress_q.extend(eres.clones)
        if eres.recirculate is not None:
            ingress_q.append(eres.recirculate)
        if eres.out is not None:
            outputs.append(eres.out)
    return outputs
