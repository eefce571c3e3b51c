#!/usr/bin/env python3
"""Exercise 5: the LinkGuardian control plane. Measure the protected link's loss rate from the
switches' counters, pick the number of retransmitted copies N from Eq. 2 for a target
effective loss rate, and switch LinkGuardian on over P4Runtime.

  lgcontrol.py [--target-loss 1e-6] [--blocking 1]
"""

import argparse
import math  # noqa: F401 (Eq. 2 needs it)
import os
import sys

sys.path.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), "../utils/"))
import p4runtime_lib.bmv2  # noqa: E402
import p4runtime_lib.helper  # noqa: E402
from p4runtime_lib.switch import ShutdownAllSwitchConnections  # noqa: E402

P4INFO = "build/lglite.p4.p4info.txtpb"
SENDER, RECEIVER = ("127.0.0.1:50051", 0), ("127.0.0.1:50052", 1)  # s1, s2
LINK_PORT, RETX_GROUP, TIMEOUT_US = 2, 1, 1_000_000
STAT_RECEIVED = 1


def loss_rate(sent, received):
    """The link's loss rate from frames put on it (B) and frames received from it (C)."""
    # TODO (exercise 5): (B - C) / B, and 0 when nothing was sent.
    return None


def copies(loss, target):
    """Eq. 2: N = ceil(log(target) / log(loss)) - 1 retransmitted copies (0: no loss)."""
    # TODO (exercise 5): Eq. 2 of the paper; 0 copies when there is no loss.
    return None


def counter(sw, helper, name, index):
    for response in sw.ReadCounters(helper.get_counters_id(name), index):
        for entity in response.entities:
            return entity.counter_entry.data.packet_count
    return 0


def configure(sw, helper, sender, receiver, blocking):
    sw.WriteTableEntry(helper.buildTableEntry(
        "MyIngress.lg_config", default_action=True, action_name="MyIngress.configure",
        action_params={"sender": sender, "receiver": receiver, "blocking": blocking,
                       "retx_group": RETX_GROUP, "timeout_us": TIMEOUT_US}))


def activate(s1, s2, helper, n, blocking):
    """N copies: multicast group RETX_GROUP with N replicas of the link port on the sender;
    then the receiver role on s2 and the sender role on s1 (receiver first, so that no
    protected packet arrives at a switch that does not expect it)."""
    # TODO (exercise 5): write the multicast group (helper.buildMulticastGroupEntry, one
    # replica of LINK_PORT per copy, instances 1..n) to s1, then configure() the roles.
    pass


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target-loss", type=float, default=1e-6)
    parser.add_argument("--blocking", type=int, default=1, choices=[0, 1])
    args = parser.parse_args()
    helper = p4runtime_lib.helper.P4InfoHelper(P4INFO)
    s1 = p4runtime_lib.bmv2.Bmv2SwitchConnection(address=SENDER[0], device_id=SENDER[1])
    s2 = p4runtime_lib.bmv2.Bmv2SwitchConnection(address=RECEIVER[0], device_id=RECEIVER[1])
    try:
        s1.MasterArbitrationUpdate()
        s2.MasterArbitrationUpdate()
        sent = counter(s1, helper, "MyEgress.lg_sent", 0)
        received = counter(s2, helper, "MyIngress.lg_stats", STAT_RECEIVED)
        loss = loss_rate(sent, received)
        n = copies(loss, args.target_loss)
        print(f"measured loss {loss:.4g} ({sent} frames sent, {received} received); "
              f"N = {n} copies for a target of {args.target_loss:g}")
        if n > 0:
            activate(s1, s2, helper, n, args.blocking)
            print(f"LinkGuardian on: {'LG' if args.blocking else 'LG_NB'}, {n} copies")
        else:
            print("no loss measured: LinkGuardian stays off")
    finally:
        ShutdownAllSwitchConnections()


if __name__ == "__main__":
    main()
