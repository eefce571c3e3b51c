"""The native device layer (C text appended to a generated program, with jobs_c.py's packet jobs
and tm_c.py's traffic manager): frames into the device -> the frames it sends, untimed, and a
port loop over AF_PACKET sockets that runs without the interpreter.

C API (every function takes the device; `ctx` is a context of the program, lg_new):

    lg_dev *lg_dev_new(ctx *c, u64 start_ns, const u64 *fls, uint32_t nfls, uint32_t flwords,
                       const uint32_t *hdr, uint32_t nhdr)
                                                 a device on context `c`; start_ns is
                                                 CLOCK_MONOTONIC at the switch clock's zero; the
                                                 program's field lists (id, count, slots...) and
                                                 header slots with the cursor registers
    void lg_dev_free(lg_dev *d)
    int  lg_dev_port(lg_dev *d, uint32_t port, int fd)   attach a non-blocking AF_PACKET socket
                                                 bound to an interface as `port`: 0, or -1 when
                                                 the device has MAX_PORTS ports or port > 511
    int  lg_dev_ring(lg_dev *d, uint32_t port)  read the port through a PACKET_MMAP ring
                                                 (ring_c.py) from now on, the frames its socket
                                                 already holds first: 0, or -errno (then the
                                                 loop reads its socket with recvmmsg)
    u64  lg_dev_ring_drops(lg_dev *d)           frames the kernel dropped on full rings since
                                                 the last call
    int  lg_dev_ring_frames(lg_dev *d, uint32_t port)   frames waiting on the port's ring
    int  lg_dev_frame(lg_dev *d, uint32_t port, const uint8_t *data, uint32_t len, u64 now_ns,
                      u64 pass_ns, u64 limit_ns, u64 *end_ns, int *over)
                                                 one frame and everything it causes (clones,
                                                 resubmissions, recirculations, replicas) driven
                                                 as v1model's untimed driver drives them
                                                 (passes.py's run_untimed: ingress work first,
                                                 egress jobs in order, each pass pass_ns later,
                                                 stopped after limit_ns, *over set): the frames
                                                 sent (then lg_dev_out), -1 out of memory; the
                                                 clock's end in *end_ns. The context's own
                                                 random(): the Python engine's numbers
    const uint8_t *lg_dev_out(lg_dev *d, int i, uint32_t *port, uint32_t *len)
                                                 frame i of the last lg_dev_frame, or of those the
                                                 loop sent to the CPU port since lg_dev_take
    int  lg_dev_take(lg_dev *d)                  how many frames the loop left for the CPU port
                                                 (lg_dev_out), kept until the next call
    int  lg_dev_inject(lg_dev *d, uint32_t port, const uint8_t *data, uint32_t len)
                                                 a frame into the running loop as if received on
                                                 `port` (a controller's packet-out): 0, -1 full
    int  lg_dev_run(lg_dev *d)                  the port loop (blocks; call it without the GIL):
                                                 epoll over the ports and a timerfd on the
                                                 traffic manager's next departure or
                                                 recirculation, batches from the rings (else
                                                 recvmmsg), the passes and their jobs, the
                                                 traffic manager, a batch per output port
                                                 through its transmit ring (else sendmmsg);
                                                 random() from a C generator seeded by
                                                 lg_dev_seed; 0 after lg_dev_stop, else -errno
    void lg_dev_seed(lg_dev *d, u64 seed)       the loop generator's seed
    void lg_dev_stop(lg_dev *d)                 ask the loop to return (any thread)
    int  lg_dev_give_back(lg_dev *d)            the ports' frames to their sockets again
                                                 (after the loop ended): the frames left on
                                                 the rings are handed back; their number
    const uint8_t *lg_dev_handed(lg_dev *d, int i, uint32_t *port, uint32_t *len)
                                                 frame i of those the rings handed back
                                                 (lg_dev_give_back; NULL past the last), in
                                                 order per port: for the Python switch
    void lg_dev_kick(lg_dev *d)                 wake the loop (a setting changed)
    void lg_dev_lock(lg_dev *d), lg_dev_unlock   the control plane's critical section: the loop
                                                 holds the lock while it runs a batch, so a table
                                                 image or a setting is never seen half-made
    u64  lg_dev_busy(lg_dev *d)                 the number of the pass the loop is in (0:
                                                 between passes), for the pass watchdog
    int  lg_dev_abort(lg_dev *d, u64 pass)      stop that pass at its next loop iteration (1;
                                                 0 when it is over): its frame is dropped (with
                                                 the clones it made) and counted as
                                                 STAT_PASS_TIMEOUT only
    u64 *lg_dev_stats(lg_dev *d)                counters (STAT_* below; per port p at
                                                 STAT_PORTS + PORT_SLOTS * p: rx packets, rx
                                                 bytes, tx packets, tx bytes, the errno of a
                                                 socket error that took the port out of the
                                                 loop); written by the loop only
    u64 *lg_dev_queue_drops(lg_dev *d)          queue_full drops by port * 8 + priority
  The traffic manager's settings (tm.py's, under the lock; a port is served again after them):
    void lg_dev_tm(lg_dev *d, uint32_t nprio, u64 cell, u64 late_ns)
    void lg_dev_defaults(lg_dev *d, uint32_t prio, uint32_t depth, u64 period_ns)
                                                 a queue of a port made from now on
    int  lg_dev_rate(lg_dev *d, uint32_t port, int lane, u64 rate, u64 burst, u64 framing,
                     u64 min_frame)              a port's (lane: its clone lane's) bit rate
    int  lg_dev_queue(lg_dev *d, uint32_t port, int lane, uint32_t prio, uint32_t depth,
                      u64 depth_bytes, u64 period_ns)   a queue's depths and packet period
    int  lg_dev_sessions(lg_dev *d, const u64 *triples, uint32_t n)   (session, port, rid)
    int  lg_dev_mcast(lg_dev *d, const u64 *triples, uint32_t n)      (group, rid, port)
    void lg_dev_cpu_port(lg_dev *d, uint32_t port)   frames sent there are left for Python
"""

from __future__ import annotations

from lgkit.sw.exec.native.cgen import DRAW_BITS64
from lgkit.sw.exec.native.jobs_c import JOBS
from lgkit.sw.exec.native.ring_c import RING
from lgkit.sw.exec.native.tm_c import TM

STATS = ("ingress", "egress", "ingress_drop", "egress_drop", "no_such_port", "tx_error",
         "out_of_memory", "rx_truncated", "range_errors", "rx_error", "bad_priority",
         "queue_full", "recirc", "recirculations", "lane_recirculations", "recirc_queue_full",
         "cpu_queue_full", "pass_timeout")
"""The device's counters before the per-port ones, in order (STAT_<NAME> in C)."""
STAT_PORTS = len(STATS)
PORT_STATS = ("rx_packets", "rx_bytes", "tx_packets", "tx_bytes", "error")
"""Each port's counters (STAT_PORTS + PORT_SLOTS * port); error: the errno that took it out."""
PORT_SLOTS = len(PORT_STATS)
MAX_PORT = 512
PRIORITIES = 8
"""The traffic manager's queues per port in lg_dev_queue_drops."""
SM_SLOTS = ("priority", "egress_rid", "instance_type", "ingress_port", "egress_spec",
            "mcast_grp")
"""The standard_metadata fields of jobs_c's JSM_* slots, in order."""

DEVICE = r"""
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/timerfd.h>

#define MAX_PORTS 64
#define BATCH 64
#define RX_SLOT 65536
#define TX_SLOT (RX_SLOT + MAX_HEADER_BYTES)
#define MAX_PORT 512
#define RECIRC_CAP 1024    /* switch.py's RECIRC_QUEUE_CAPACITY */
#define OUT_CAP 4096       /* frames for Python (untimed outputs, the CPU port) */
#define INJECT_CAP 256
#define NO_PORT 0xFFFFFFFFU
STAT_DEFINES

typedef struct { uint32_t port, len; const uint8_t *data; } lg_frame;

RING_C

typedef struct {
    uint32_t port; int fd;  /* fd: the ring's socket once it has one (lg_dev_ring) */
    lg_ring ring;
    int left;               /* frames left on the ring when it gave the port back */
    int queued;             /* the port's own socket while it may still hold frames from
                               before its ring (read first), else -1 */
    uint32_t ntx;
    struct mmsghdr tx[BATCH]; struct iovec txv[BATCH];
    uint8_t *txbuf;  /* BATCH slots of TX_SLOT */
} dev_port;

typedef struct { frame_t *f; uint32_t port; } out_t;

typedef struct lg_dev {
    ctx *c;
    pipe_t p; tm_t tm;
    int status;  /* JOB_E_MEMORY: the loop stops */
    u64 start_ns;
    int nports, stopfd, kickfd, timerfd;
    int draining;  /* ports whose queued socket is still to be read */
    u64 seed;    /* the loop's generator (lg_dev_seed) */
    volatile int stopping;
    int untimed;  /* lg_dev_frame: jobs in FIFOs, outputs for Python */
    uint32_t cpu_port;
    u64 busy, seq;  /* the pass the loop is in (0: none; ABORTED: lg_dev_abort) */
    int16_t index[MAX_PORT];  /* port number -> its dev_port, -1 none */
    dev_port ports[MAX_PORTS];
    rjob_t *rq_head;  /* back to ingress, by due time (then order) */
    int rpending;
    rjob_t *iq_head, *iq_tail; job_t *eq_head, *eq_tail; uint32_t eq_n;  /* untimed FIFOs */
    out_t outs[OUT_CAP]; int nouts, taken;
    out_t injected[INJECT_CAP]; int ninjected;
    struct mmsghdr rx[BATCH]; struct iovec rxv[BATCH];
    uint8_t *rxbuf;  /* BATCH slots of RX_SLOT */
    uint8_t *one;    /* egress output for no socket */
    pthread_mutex_t mu;
    u64 st[STAT_PORTS + PORT_SLOTS * MAX_PORT];
    u64 qdrops[TM_PORTS * TM_PRIOS];
} lg_dev;

static const uint32_t dev_sm[NJSM] = {
#ifdef SM_priority
    SM_priority,
#else
    NO_SLOT,
#endif
#ifdef SM_egress_rid
    SM_egress_rid,
#else
    NO_SLOT,
#endif
    SM_instance_type, SM_ingress_port, SM_egress_spec,
#ifdef SM_mcast_grp
    SM_mcast_grp,
#else
    NO_SLOT,
#endif
};

lg_dev *lg_dev_new(ctx *c, u64 start_ns, const u64 *fls, uint32_t nfls, uint32_t flwords,
                   const uint32_t *hdr, uint32_t nhdr) {
    lg_dev *d = calloc(1, sizeof *d);
    if (!d) return NULL;
    d->c = c; d->start_ns = start_ns; d->cpu_port = NO_PORT;
    d->stopfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    d->kickfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    d->timerfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    d->rxbuf = malloc((size_t)BATCH * RX_SLOT);
    d->one = malloc(TX_SLOT);
    void *fns[5] = {(void *)lg_ingress, (void *)lg_egress_saved, (void *)lg_state_save,
                    (void *)lg_ingress_job, (void *)lg_parse};
    int bad = pipe_init(&d->p, c, fns, c->F, c->CF, NSLOTS + TAIL, LIVE, NSLOTS + 3, dev_sm,
                        c->drop_port, MAX_HEADER_BYTES, fls, nfls, flwords, hdr, nhdr,
                        &d->status);
    tm_init(&d->tm, 1, &d->status, &d->st[STAT_QUEUE_FULL], &d->st[STAT_BAD_PRIORITY]);
    d->tm.owner = d; d->tm.qdrops = d->qdrops;
    if (bad || d->stopfd < 0 || d->kickfd < 0 || d->timerfd < 0 || !d->rxbuf || !d->one) {
        if (d->stopfd >= 0) close(d->stopfd);
        if (d->kickfd >= 0) close(d->kickfd);
        if (d->timerfd >= 0) close(d->timerfd);
        pipe_free(&d->p); free(d->rxbuf); free(d->one); free(d);
        return NULL;
    }
    pthread_mutex_init(&d->mu, NULL);
    for (int i = 0; i < MAX_PORT; i++) d->index[i] = -1;
    for (int i = 0; i < BATCH; i++) {
        d->rxv[i].iov_base = d->rxbuf + (size_t)i * RX_SLOT; d->rxv[i].iov_len = RX_SLOT;
        d->rx[i].msg_hdr.msg_iov = &d->rxv[i]; d->rx[i].msg_hdr.msg_iovlen = 1;
    }
    return d;
}

static void clear_outs(lg_dev *d) {
    for (int i = 0; i < d->nouts; i++) unref(d->outs[i].f);
    d->nouts = 0;
}
static void clear_recirc(lg_dev *d) {
    for (rjob_t *r = d->rq_head, *nx; r; r = nx) { nx = r->next; unref(r->in); free(r); }
    d->rq_head = 0; d->rpending = 0;
}

void lg_dev_free(lg_dev *d) {
    if (!d) return;
    for (int i = 0; i < d->nports; i++) { free(d->ports[i].txbuf); ring_close(&d->ports[i].ring); }
    close(d->stopfd); close(d->kickfd); close(d->timerfd);
    pthread_mutex_destroy(&d->mu);
    clear_outs(d); clear_recirc(d);
    for (int i = 0; i < d->ninjected; i++) unref(d->injected[i].f);
    tm_free(&d->tm); pipe_free(&d->p);
    free(d->rxbuf); free(d->one); free(d);
}

int lg_dev_port(lg_dev *d, uint32_t port, int fd) {
    if (d->nports >= MAX_PORTS || port >= MAX_PORT || d->index[port] >= 0) return -1;
    dev_port *p = &d->ports[d->nports];
    p->txbuf = malloc((size_t)BATCH * TX_SLOT);
    if (!p->txbuf) return -1;
    p->port = port; p->fd = fd; p->ntx = 0; p->left = 0; p->queued = -1;
    ring_init(&p->ring);
    for (int i = 0; i < BATCH; i++) {
        p->txv[i].iov_base = p->txbuf + (size_t)i * TX_SLOT;
        p->tx[i].msg_hdr.msg_iov = &p->txv[i]; p->tx[i].msg_hdr.msg_iovlen = 1;
    }
    d->index[port] = (int16_t)d->nports++;
    return 0;
}

int lg_dev_ring(lg_dev *d, uint32_t port) {
    if (port >= MAX_PORT || d->index[port] < 0) return -EINVAL;
    dev_port *p = &d->ports[d->index[port]];
    if (p->ring.fd >= 0) return 0;
    int err = ring_open(&p->ring, p->fd);
    if (!err) { p->queued = p->fd; p->fd = p->ring.fd; d->draining++; }
    return err;
}

u64 lg_dev_ring_drops(lg_dev *d) {
    u64 n = 0;
    for (int i = 0; i < d->nports; i++) n += ring_drops(&d->ports[i].ring);
    return n;
}

int lg_dev_ring_frames(lg_dev *d, uint32_t port) {
    if (port >= MAX_PORT || d->index[port] < 0) return 0;
    return ring_pending(&d->ports[d->index[port]].ring);
}

int lg_dev_give_back(lg_dev *d) {
    int n = 0;
    for (int i = 0; i < d->nports; i++) {
        dev_port *p = &d->ports[i];
        if (p->ring.fd < 0) continue;
        ring_give_back(&p->ring);
        n += p->left = ring_pending(&p->ring);
    }
    return n;
}

/* Frame i of those the rings handed back (lg_dev_give_back), port by port: its bytes and
   length, NULL past the last. */
const uint8_t *lg_dev_handed(lg_dev *d, int i, uint32_t *port, uint32_t *len) {
    if (i < 0) return NULL;
    for (int j = 0; j < d->nports; j++) {
        dev_port *p = &d->ports[j];
        if (i < p->left) { *port = p->port; return ring_left(&p->ring, i, len); }
        i -= p->left;
    }
    return NULL;
}

u64 *lg_dev_stats(lg_dev *d) { return d->st; }
u64 *lg_dev_queue_drops(lg_dev *d) { return d->qdrops; }
void lg_dev_seed(lg_dev *d, u64 seed) { d->seed = seed; }
void lg_dev_cpu_port(lg_dev *d, uint32_t port) { d->cpu_port = port; }

/* ---- settings ---------------------------------------------------------------------------- */
static void serve_soon(lg_dev *d, port_t *st) { tm_wake(&d->tm, st, 0, 0); }
void lg_dev_tm(lg_dev *d, uint32_t nprio, u64 cell, u64 late_ns) {
    if (nprio >= 1 && nprio <= TM_PRIOS) d->tm.nprio = nprio;
    d->tm.cell = cell; d->tm.late_ns = late_ns;
}
void lg_dev_defaults(lg_dev *d, uint32_t prio, uint32_t depth, u64 period_ns) {
    if (prio < TM_PRIOS) { d->tm.depth0[prio] = depth; d->tm.period0[prio] = period_ns; }
}
static port_t *setting_port(lg_dev *d, uint32_t port, int lane) {
    if (port >= TM_PORTS) return 0;
    return lane ? tm_lane(&d->tm, port) : tm_port(&d->tm, port);
}
int lg_dev_rate(lg_dev *d, uint32_t port, int lane, u64 rate, u64 burst, u64 framing,
                u64 min_frame) {
    port_t *st = setting_port(d, port, lane);
    if (!st) return -1;
    tm_set_rate(st, rate, burst, framing, min_frame);
    serve_soon(d, st);
    return 0;
}
int lg_dev_queue(lg_dev *d, uint32_t port, int lane, uint32_t prio, uint32_t depth,
                 u64 depth_bytes, u64 period_ns) {
    port_t *st = setting_port(d, port, lane);
    if (!st || prio >= TM_PRIOS) return -1;
    queue_t *q = &st->q[prio];
    q->depth = depth; q->depth_bytes = depth_bytes; q->period_ns = period_ns;
    q->bytes = 0;
    for (job_t *j = q->head; j; j = j->next) q->bytes += j->length;
    serve_soon(d, st);
    return 0;
}
int lg_dev_sessions(lg_dev *d, const u64 *triples, uint32_t n) {
    return set_triples(&d->p.sessions, &d->p.nsessions, triples, n);
}
int lg_dev_mcast(lg_dev *d, const u64 *triples, uint32_t n) {
    return set_triples(&d->p.mcast, &d->p.nmcast, triples, n);
}

/* The loop's random() and HashAlgorithm.random: splitmix64 on the loop's thread (no call back
   into Python per packet); randint(lo, hi) without bias by rejection. */
static __thread u64 loop_rng;
static u64 next64(void) {
    u64 z = (loop_rng += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}
static u64 loop_draw(int kind, u64 lo, u64 hi) {
    if (kind == DRAW_BITS64_KIND) return next64();
    u64 n = hi - lo + 1;
    if (n == 0) return next64();  /* the whole 64-bit range */
    u64 limit = UINT64_MAX - UINT64_MAX % n, r;
    do r = next64(); while (r >= limit);
    return lo + r % n;
}
void lg_dev_lock(lg_dev *d) { pthread_mutex_lock(&d->mu); }
void lg_dev_unlock(lg_dev *d) { pthread_mutex_unlock(&d->mu); }

/* The pass watchdog's side: the pass the loop is in, and its abort (the pass still being that
   one, atomically, then the context's stop flag, which the generated loops check). */
#define ABORTED (1ULL << 63)
u64 lg_dev_busy(lg_dev *d) { return __atomic_load_n(&d->busy, __ATOMIC_SEQ_CST); }
int lg_dev_abort(lg_dev *d, u64 pass) {
    if (!pass || !__atomic_compare_exchange_n(&d->busy, &pass, pass | ABORTED, 0,
                                              __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) return 0;
    d->c->stop = 1;
    return 1;
}
/* Around each pass of the loop: guard_off says whether the watchdog aborted it (then the stop
   request is withdrawn once the watchdog made it, and the pass counted as a timeout). */
static void guard_on(lg_dev *d) {
    __atomic_store_n(&d->busy, ++d->seq & ~ABORTED, __ATOMIC_SEQ_CST);
}
static int guard_off(lg_dev *d) {
    if (!(__atomic_exchange_n(&d->busy, 0, __ATOMIC_SEQ_CST) & ABORTED)) return 0;
    while (!d->c->stop) sched_yield();  /* lg_dev_abort sets it right after its exchange */
    d->c->stop = 0;
    d->st[STAT_PASS_TIMEOUT]++;
    return 1;
}

static void poke(int fd) {
    uint64_t one = 1;
    if (write(fd, &one, sizeof one) < 0) { /* the loop wakes within a second anyway */ }
}
void lg_dev_stop(lg_dev *d) { d->stopping = 1; poke(d->stopfd); }
void lg_dev_kick(lg_dev *d) { poke(d->kickfd); }

/* ---- frames for Python and from it ----------------------------------------------------- */
static void keep_out(lg_dev *d, uint32_t port, const uint8_t *data, uint32_t len) {
    if (d->nouts == OUT_CAP) { d->st[STAT_CPU_QUEUE_FULL]++; return; }
    frame_t *f = frame_new(data, len);
    if (!f) { d->st[STAT_OUT_OF_MEMORY]++; return; }
    d->outs[d->nouts].f = f; d->outs[d->nouts].port = port; d->nouts++;
}
const uint8_t *lg_dev_out(lg_dev *d, int i, uint32_t *port, uint32_t *len) {
    if (i < 0 || i >= (d->untimed ? d->nouts : d->taken)) return NULL;
    *port = d->outs[i].port; *len = d->outs[i].f->len;
    return d->outs[i].f->d;
}
int lg_dev_take(lg_dev *d) {
    for (int i = 0; i < d->taken; i++) unref(d->outs[i].f);
    memmove(d->outs, d->outs + d->taken, (size_t)(d->nouts - d->taken) * sizeof d->outs[0]);
    d->nouts -= d->taken;
    d->taken = d->nouts;
    return d->taken;
}
int lg_dev_inject(lg_dev *d, uint32_t port, const uint8_t *data, uint32_t len) {
    if (d->ninjected == INJECT_CAP) return -1;
    frame_t *f = frame_new(data, len);
    if (!f) return -1;
    d->injected[d->ninjected].f = f; d->injected[d->ninjected].port = port; d->ninjected++;
    poke(d->kickfd);
    return 0;
}

/* ---- the passes and their jobs ----------------------------------------------------------- */
static void range_errors(lg_dev *d) {
    ctx *c = d->c;
    if (c->nerrors && !d->untimed) { d->st[STAT_RANGE_ERRORS] += c->nerrors; c->nerrors = 0; }
}
static dev_port *socket_of(lg_dev *d, uint32_t port) {
    if (d->untimed || port >= MAX_PORT || d->index[port] < 0) return 0;
    return &d->ports[d->index[port]];
}

/* Frames start.. of p's batch (n of them) out: through its ring, else its socket; as
   sendmmsg returns. */
static int send_batch(dev_port *p, uint32_t start, uint32_t n) {
    if (p->ring.txfd >= 0) return ring_send(&p->ring, p->tx + start, (int)n);
    return sendmmsg(p->fd, p->tx + start, n, 0);
}

static void flush_port(lg_dev *d, dev_port *p) {
    uint32_t start = 0, n = p->ntx;
    u64 *pst = d->st + STAT_PORTS + PORT_SLOTS * p->port;
    while (start < n) {
        int sent = send_batch(p, start, n - start);
        if (sent > 0) {
            for (int i = 0; i < sent; i++) { pst[2]++; pst[3] += p->txv[start + i].iov_len; }
            start += (uint32_t)sent;
        } else if (sent < 0 && errno == EINTR) {
            continue;
        } else {  /* this frame failed (ENOBUFS, ENETDOWN): lost like on a wire; go on */
            d->st[STAT_TX_ERROR]++;
            start++;
        }
    }
    p->ntx = 0;
}

/* Back to ingress (Switch._recirculate): after the serialization at the recirculation port's
   (or its clone lane's) rate, in due order; untimed, into the ingress FIFO. */
static void back_to_ingress(lg_dev *d, rjob_t *r, port_t *st, int from_lane, u64 now) {
    if (d->untimed) {
        if (d->iq_tail) d->iq_tail->next = r; else d->iq_head = r;
        d->iq_tail = r;
        return;
    }
    if (d->rpending >= RECIRC_CAP) {
        d->st[STAT_RECIRC_QUEUE_FULL]++; unref(r->in); free(r); return;
    }
    d->rpending++; d->st[STAT_RECIRCULATIONS]++;
    if (from_lane) d->st[STAT_LANE_RECIRCULATIONS]++;
    r->due = now + (st && st->rate ? tm_ceil(wire_ps(st, r->in->len), 1000) : 0);
    rjob_t **at = &d->rq_head;
    while (*at && (*at)->due <= r->due) at = &(*at)->next;
    r->next = *at; *at = r;
}

static void to_egress(lg_dev *d, job_t *j, u64 now) {
    if (!d->untimed) { tm_enqueue(&d->tm, j, now); return; }
    j->next = 0;
    if (d->eq_tail) d->eq_tail->next = j; else d->eq_head = j;
    d->eq_tail = j; d->eq_n++;
}

/* The jobs of an ingress pass that returned `spec` on frame `in` (its reference the caller's). */
static void ingress_done(lg_dev *d, long spec, frame_t *in, u64 now) {
    range_errors(d);
    rjob_t *resub = 0;
    int drops;
    job_t *jobs = ingress_jobs(&d->p, spec, in, &drops, &resub);
    if (drops) d->st[STAT_INGRESS_DROP]++;
    for (job_t *j = jobs, *nx; j; j = nx) {
        nx = j->next; j->next = 0;
        if (d->status) job_free(j); else to_egress(d, j, now);
    }
    if (resub) back_to_ingress(d, resub, 0, 0, now);
}

static void receive(lg_dev *d, uint32_t port, frame_t *in, u64 now) {
    d->st[STAT_INGRESS]++;
    guard_on(d);
    long spec = d->p.ingress(d->c, port, in->d, in->len, now / 1000);
    if (!guard_off(d)) ingress_done(d, spec, in, now);
}

/* The frame egress wrote for `port`: into its socket's transmit batch (where egress wrote it
   unless `copy`), to Python (untimed, the CPU port), else no such port. */
static void emit(lg_dev *d, uint32_t port, dev_port *q, const uint8_t *copy, uint32_t len) {
    if (q) {
        uint8_t *slot = q->txbuf + (size_t)q->ntx * TX_SLOT;
        if (copy) memcpy(slot, copy, len);
        q->txv[q->ntx].iov_len = len;
        if (++q->ntx == BATCH) flush_port(d, q);
    } else if (d->untimed || port == d->cpu_port) {
        keep_out(d, port, copy, len);
    } else {
        d->st[STAT_NO_SUCH_PORT]++;
    }
}

/* The egress pass of a dequeued job (Switch._egress_pass): its E2E clones first, then the
   frame back to ingress or out; the bytes put on the wire or looped back (0: none). */
static uint32_t tm_egress(tm_t *tm, job_t *j, u64 now, u64 enq_depth, u64 deq_depth) {
    lg_dev *d = tm->owner;
    pipe_t *p = &d->p;
    d->st[STAT_EGRESS]++;
    if (j->in->len > RX_SLOT) { d->st[STAT_RX_TRUNCATED]++; return 0; }
    dev_port *q = socket_of(d, j->port);
    uint8_t *out = q ? q->txbuf + (size_t)q->ntx * TX_SLOT : d->one;
    job_t *made;
    int recirc;
    guard_on(d);
    long len = egress_job(p, j, now, enq_depth, deq_depth, out, &made, &recirc);
    if (guard_off(d)) {
        for (job_t *c = made, *nx; c; c = nx) { nx = c->next; job_free(c); }
        return 0;
    }
    range_errors(d);
    rjob_t *r = 0;
    frame_t *keep = 0;  /* the output while the clones' passes run, or for Python */
    if (len >= 0 && (recirc || made || !q)) {
        keep = frame_new(out, (uint32_t)len);
        if (!keep) { d->status = JOB_E_MEMORY; d->st[STAT_OUT_OF_MEMORY]++; }
        else if (recirc && !(r = recirc_job(p, keep))) unref(keep);
    }
    for (job_t *c = made, *nx; c; c = nx) {
        nx = c->next; c->next = 0;
        if (d->status) job_free(c); else to_egress(d, c, now);
    }
    if (len < 0) { d->st[STAT_EGRESS_DROP]++; return 0; }
    if (recirc) {
        if (!r) return 0;
        int from_lane = tm->lanes[j->port] && (j->itype == IT_I2E || j->itype == IT_E2E);
        back_to_ingress(d, r, from_lane ? tm->lanes[j->port] : tm->ports[j->port], from_lane,
                        now);
        return (uint32_t)len;
    }
    if (keep || !(recirc || made || !q)) {
        if (q && q->ntx >= BATCH) flush_port(d, q);  /* a clone's frames filled the batch */
        emit(d, j->port, q, keep ? keep->d : 0, (uint32_t)len);
    }
    unref(keep);
    return (uint32_t)len;
}
static void tm_timer(tm_t *tm, port_t *st, u64 t) { (void)tm; (void)st; (void)t; }

/* ---- untimed: one frame and all it causes, as passes.py's run_untimed --------------------- */
int lg_dev_frame(lg_dev *d, uint32_t port, const uint8_t *data, uint32_t len, u64 now_ns,
                 u64 pass_ns, u64 limit_ns, u64 *end_ns, int *over) {
    clear_outs(d);
    d->untimed = 1; d->status = 0; d->p.drop_port = d->c->drop_port;
    u64 now = now_ns, deadline = now_ns + limit_ns;
    *over = 0;
    frame_t *in = frame_new(data, len);
    if (!in) return -1;
    for (int first = 1; first || d->iq_head || d->eq_head; ) {
        if (now >= deadline || d->status) { *over = 1; break; }
        u64 t = now / 1000 * 1000;  /* the pass's time: the clock's microseconds */
        now += pass_ns;
        if (first) { first = 0; receive(d, port, in, t); continue; }
        if (d->iq_head) {
            rjob_t *r = d->iq_head;
            d->iq_head = r->next; if (!d->iq_head) d->iq_tail = 0;
            d->st[STAT_RECIRC]++;
            long spec = d->p.ingress_job(d->c, r->in->d, r->in->len, t / 1000, r->itype, r->pre,
                                         r->npre);
            ingress_done(d, spec, r->in, t);
            unref(r->in); free(r);
            continue;
        }
        job_t *j = d->eq_head;
        d->eq_head = j->next; if (!d->eq_head) d->eq_tail = 0;
        d->eq_n--;
        j->enq_ns = t;
        tm_egress(&d->tm, j, t, 0, d->eq_n);
        job_free(j);
    }
    unref(in);
    for (rjob_t *r = d->iq_head, *nx; r; r = nx) { nx = r->next; unref(r->in); free(r); }
    for (job_t *j = d->eq_head, *nx; j; j = nx) { nx = j->next; job_free(j); }
    d->iq_head = d->iq_tail = 0; d->eq_head = d->eq_tail = 0; d->eq_n = 0;
    *end_ns = now;
    return d->status ? -1 : d->nouts;
}

/* ---- the port loop ----------------------------------------------------------------------- */
static u64 now_of(lg_dev *d) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (u64)ts.tv_sec * 1000000000ULL + (u64)ts.tv_nsec - d->start_ns;
}

static void drained(lg_dev *d, dev_port *p) {
    if (p->queued >= 0) { p->queued = -1; d->draining--; }
}

/* A batch from port p into d->rx: first what its own socket still holds from before its ring
   took over, then from the ring; without a ring, from its socket; -errno on a socket error. */
static int receive_batch(lg_dev *d, dev_port *p) {
    int fd = p->ring.fd < 0 ? p->fd : p->queued;
    if (fd >= 0) {
        int got = recvmmsg(fd, d->rx, BATCH, MSG_DONTWAIT, NULL);
        if (got > 0) return got;
        int again = got == 0 || errno == EAGAIN || errno == EINTR;
        if (fd == p->fd) return again ? 0 : -errno;
        if (got < 0 && errno == EINTR) return 0;
        drained(d, p);  /* nothing left there (or it failed): the ring's turn */
    }
    return ring_recv(&p->ring, d->rx, d->rxbuf, RX_SLOT, BATCH);
}

/* Read one batch from port p and run it; returns the frames read, -errno on a socket error. */
static int serve_port(lg_dev *d, dev_port *p) {
    int got = receive_batch(d, p);
    if (got < 0) return got;
    u64 *in = d->st + STAT_PORTS + PORT_SLOTS * p->port;
    for (int i = 0; i < got && !d->status; i++) {
        uint32_t len = d->rx[i].msg_len;
        const uint8_t *data = d->rxbuf + (size_t)i * RX_SLOT;
        in[0]++; in[1] += len;
        if (d->rx[i].msg_hdr.msg_flags & MSG_TRUNC) { d->st[STAT_RX_TRUNCATED]++; continue; }
        u64 now = now_of(d);
        if (tm_pfc(&d->tm, p->port, data, len, now)) continue;  /* the MAC's: a pause */
        frame_t *f = frame_new(data, len);
        if (!f) { d->status = JOB_E_MEMORY; break; }
        receive(d, p->port, f, now);
        unref(f);
    }
    return got;
}

/* The recirculated packets due by `now` (those queued before this call: a packet that loops
   at once waits for the next round), the controller's frames, the ports whose timer is due. */
static void run_due(lg_dev *d, u64 now) {
    for (int k = d->rpending; k > 0 && d->rq_head && d->rq_head->due <= now && !d->status; k--) {
        rjob_t *r = d->rq_head;
        d->rq_head = r->next; d->rpending--;
        d->st[STAT_RECIRC]++;
        guard_on(d);
        long spec = d->p.ingress_job(d->c, r->in->d, r->in->len, now / 1000, r->itype, r->pre,
                                     r->npre);
        if (!guard_off(d)) ingress_done(d, spec, r->in, now);
        unref(r->in); free(r);
    }
    for (int i = 0; i < d->ninjected; i++) {
        frame_t *f = d->injected[i].f;
        if (!d->status) receive(d, d->injected[i].port, f, now);
        unref(f);
    }
    d->ninjected = 0;
    for (int i = 0; i < d->tm.nall && !d->status; i++) {
        port_t *st = d->tm.all[i];
        if (st->waking && st->wake_at <= now) { st->waking = 0; tm_serve(&d->tm, st, now); }
    }
}

/* When the loop must run next without a frame: the earliest port wake (as late as its slack
   lets it, so that one wake serves the departures due by then) or recirculation (UINT64_MAX:
   none). A frame that wakes the loop earlier serves the wakes that are due. */
static u64 next_due(lg_dev *d) {
    u64 t = d->rq_head ? d->rq_head->due : UINT64_MAX;
    for (int i = 0; i < d->tm.nall; i++) {
        port_t *st = d->tm.all[i];
        if (st->waking && st->wake_at + st->slack < t) t = st->wake_at + st->slack;
    }
    return t;
}

/* Arm the timer for `due` (absolute on CLOCK_MONOTONIC), or disarm it. */
static void arm(lg_dev *d, u64 due) {
    struct itimerspec its = {0};
    if (due != UINT64_MAX) {
        u64 at = d->start_ns + (due ? due : 1);
        its.it_value.tv_sec = (time_t)(at / 1000000000ULL);
        its.it_value.tv_nsec = (long)(at % 1000000000ULL);
    }
    timerfd_settime(d->timerfd, TFD_TIMER_ABSTIME, &its, NULL);
}

enum { EV_STOP = MAX_PORTS, EV_KICK, EV_TIMER };

/* Serve port k of the loop's epoll set `ep`; a socket error takes it out of the loop (an
   event of this round for a port out already is passed over). */
static void serve(lg_dev *d, int ep, int k) {
    dev_port *p = &d->ports[k];
    if (d->st[STAT_PORTS + PORT_SLOTS * p->port + 4]) return;
    int r = serve_port(d, p);
    if (r < 0) {  /* a link down or an interface gone: leave it to the Python loop */
        d->st[STAT_RX_ERROR]++;
        d->st[STAT_PORTS + PORT_SLOTS * p->port + 4] = (u64)-r;
        epoll_ctl(ep, EPOLL_CTL_DEL, p->fd, NULL);
        drained(d, p);
    }
}

int lg_dev_run(lg_dev *d) {
    int ep = epoll_create1(EPOLL_CLOEXEC);
    if (ep < 0) return -errno;
    struct epoll_event ev = {0}, evs[MAX_PORTS + 3];
    int fds[3] = {d->stopfd, d->kickfd, d->timerfd};
    ev.events = EPOLLIN;
    for (int i = 0; i < 3; i++) {
        ev.data.u32 = EV_STOP + (uint32_t)i;
        epoll_ctl(ep, EPOLL_CTL_ADD, fds[i], &ev);
    }
    for (int i = 0; i < d->nports; i++) {
        ev.data.u32 = (uint32_t)i;
        if (epoll_ctl(ep, EPOLL_CTL_ADD, d->ports[i].fd, &ev) < 0) {
            int err = errno; close(ep); return -err;
        }
    }
    int status = 0;
    u64 (*draw)(int, u64, u64) = d->c->draw;
    d->c->draw = loop_draw;
    loop_rng = d->seed;
    d->untimed = 0; d->status = 0;
    u64 armed = UINT64_MAX - 1;
    while ((!d->stopping || d->draining) && status == 0) {  /* the queued frames, even then */
        pthread_mutex_lock(&d->mu);
        u64 due = next_due(d);
        pthread_mutex_unlock(&d->mu);
        int timeout = d->draining || due <= now_of(d) ? 0 : 1000;
        if (timeout && due != armed) { arm(d, due); armed = due; }
        int n = epoll_wait(ep, evs, MAX_PORTS + 3, timeout);
        if (n < 0 && errno != EINTR) { status = -errno; break; }
        pthread_mutex_lock(&d->mu);
        d->p.drop_port = d->c->drop_port;
        u64 now = now_of(d);
        run_due(d, now);
        for (int i = 0; i < d->nports && d->draining && !d->status; i++)
            if (d->ports[i].queued >= 0) serve(d, ep, i);
        for (int e = 0; e < n && !d->stopping; e++) {
            uint32_t k = evs[e].data.u32;
            if (k >= EV_STOP) {
                uint64_t v;
                if (k != EV_STOP && read(fds[k - EV_STOP], &v, sizeof v) < 0) { /* drained */ }
                if (k == EV_TIMER) armed = UINT64_MAX - 1;
                continue;
            }
            serve(d, ep, (int)k);
        }
        for (int i = 0; i < d->nports; i++)
            if (d->ports[i].ntx) flush_port(d, &d->ports[i]);
        if (d->status) status = -ENOMEM;
        pthread_mutex_unlock(&d->mu);
    }
    close(ep);
    d->c->draw = draw;
    return status;
}
"""


def with_device(program_source: str) -> str:
    """A program's C with the device layer after it (it calls lg_ingress and lg_egress)."""
    defines = [f"#define STAT_{name.upper()} {i}" for i, name in enumerate(STATS)]
    defines += [f"#define STAT_PORTS {STAT_PORTS}", f"#define PORT_SLOTS {PORT_SLOTS}",
                f"#define DRAW_BITS64_KIND {DRAW_BITS64}"]
    device = DEVICE.replace("STAT_DEFINES", "\n".join(defines)).replace("RING_C", RING)
    return "#define _GNU_SOURCE\n" + program_source + JOBS + TM + device
