/* Run-time configuration: P4Runtime table entries, looked up in every pass (docs/protocol.md §4).
 * Tables rather than registers because BMv2's P4Runtime cannot write registers; so one control
 * path (table entries, clone sessions, multicast groups) serves BMv2 and the built-in target.
 * Registers keep the state; the control plane only reads them. */
#ifndef LG_CONFIG_P4
#define LG_CONFIG_P4

/* The actions the control plane installs; `cfg` is bound by each table to its metadata. */
action lg_set_global(inout lg_global_cfg_t cfg, bit<9> recirc_port, bit<32> recirc_session,
                     bit<3> prio_normal, bit<3> prio_high, bit<9> loop_port) {
    cfg.recirc_port = recirc_port;
    cfg.recirc_session = recirc_session;
    cfg.prio_normal = prio_normal;
    cfg.prio_high = prio_high;
    cfg.loop_port = loop_port;
}

action lg_set_port(inout lg_port_cfg_t cfg, bit<8> tx_epoch, bit<1> tx_on, bit<1> tx_blocking,
                   bit<16> tx_mgid, bit<8> dummy_repeat, bit<8> rx_epoch, bit<1> rx_on,
                   bit<8> rx_max_holes, bit<32> rx_timeout_us, bit<32> rx_pause_bytes,
                   bit<32> rx_resume_bytes, bit<8> ack_repeat, bit<32> port_session,
                   bit<19> ecn_qdepth, bit<32> drop_threshold, bit<32> tx_pause_timeout_us) {
    cfg.tx_epoch = tx_epoch;
    cfg.tx_on = tx_on;
    cfg.tx_blocking = tx_blocking;
    cfg.tx_mgid = tx_mgid;
    cfg.dummy_repeat = dummy_repeat;
    cfg.rx_epoch = rx_epoch;
    cfg.rx_on = rx_on;
    cfg.rx_max_holes = rx_max_holes;
    cfg.rx_timeout_us = rx_timeout_us;
    cfg.rx_pause_bytes = rx_pause_bytes;
    cfg.rx_resume_bytes = rx_resume_bytes;
    cfg.ack_repeat = ack_repeat;
    cfg.port_session = port_session;
    cfg.ecn_qdepth = ecn_qdepth;
    cfg.drop_threshold = drop_threshold;
    cfg.tx_pause_timeout_us = tx_pause_timeout_us;
}

/* Epoch of the configuration each port's sender / receiver state was last reset for. */
register<bit<8>>(LG_PORTS) lg_tx_epoch;
register<bit<8>>(LG_PORTS) lg_rx_epoch;

/* The global configuration: the default action of a keyless table (no entry: all zero). */
control LgGlobalConfig(inout lg_global_cfg_t cfg) {
    table lg_global {
        actions = { lg_set_global(cfg); @defaultonly NoAction; }
        default_action = NoAction();
    }

    apply {
        lg_global.apply();
        if (cfg.loop_port == 0) { cfg.loop_port = cfg.recirc_port; }
    }
}

/* The configuration of one port (no entry: all zero, LG off). A new epoch in the entry resets
 * the role's state first, here, before any pass touches it: activation is one table write. */
control LgPortConfig(in bit<9> port, inout lg_port_cfg_t cfg) {
    LgTxReset() tx_reset;
    LgRxReset() rx_reset;

    table lg_port {
        key = { port: exact; }
        actions = { lg_set_port(cfg); @defaultonly NoAction; }
        size = LG_PORTS;
        default_action = NoAction();
    }

    apply {
        lg_port.apply();
        bit<32> pidx = (bit<32>)port;
        bit<8> epoch;
        lg_tx_epoch.read(epoch, pidx);
        if (epoch != cfg.tx_epoch) {
            lg_tx_epoch.write(pidx, cfg.tx_epoch);
            tx_reset.apply(pidx);
        }
        lg_rx_epoch.read(epoch, pidx);
        if (epoch != cfg.rx_epoch) {
            lg_rx_epoch.write(pidx, cfg.rx_epoch);
            rx_reset.apply(pidx);
        }
    }
}

#endif
