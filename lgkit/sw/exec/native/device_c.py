"""The native device layer (C text appended to a generated program): one frame into the device ->
the frames it sends, and a port loop over AF_PACKET sockets that runs without the interpreter.

C API (every function takes the device; `ctx` is a context of the program, lg_new):

    lg_dev *lg_dev_new(ctx *c, u64 start_ns)   a device on context `c` (its own: the loop thread
                                                 runs passes on it); start_ns is CLOCK_MONOTONIC
                                                 at the switch clock's zero
    void lg_dev_free(lg_dev *d)
    int  lg_dev_port(lg_dev *d, uint32_t port, int fd)   attach a non-blocking AF_PACKET socket
                                                 bound to an interface as `port`: 0, or -1 when
                                                 the device has MAX_PORTS ports or port > 511
    int  lg_dev_frame(lg_dev *d, uint32_t port, const uint8_t *data, uint32_t len, u64 now_ns,
                      lg_frame *outs, int max)    one frame through ingress and egress at now_ns:
                                                 the frames it sends into outs (port, len, data:
                                                 the device's buffer, valid until the next call),
                                                 their number (0: dropped), or -1 when the packet
                                                 needs the Python driver (clone, resubmit,
                                                 recirculation, multicast, truncation) or is
                                                 a MAC frame (PFC)
    int  lg_dev_run(lg_dev *d)                  the port loop (blocks; call it without the GIL):
                                                 epoll over the ports, recvmmsg batches, both
                                                 passes per frame, sendmmsg per output port;
                                                 it stops by itself at a MAC frame (PFC), which
                                                 with the rest of its batch lg_dev_handed gives;
                                                 random() draws from a C generator seeded by
                                                 lg_dev_seed (lg_dev_frame keeps the context's
                                                 own: the Python engine's numbers, untimed);
                                                 returns 0 after lg_dev_stop, else -errno
    void lg_dev_seed(lg_dev *d, u64 seed)       the loop generator's seed
    void lg_dev_stop(lg_dev *d)                 ask the loop to return (any thread)
    const uint8_t *lg_dev_handed(lg_dev *d, int i, uint32_t *port, uint32_t *len)
                                                 frame i handed back by the loop (NULL past
                                                 the last): for the Python switch
    void lg_dev_lock(lg_dev *d), lg_dev_unlock   the control plane's critical section: the loop
                                                 holds the lock while it runs a batch, so a table
                                                 image swapped in under it is never seen half-made
    void lg_dev_queues(lg_dev *d, uint32_t n)   the traffic manager's priority queues (8): a
                                                 packet of a higher priority is dropped
    u64  lg_dev_busy(lg_dev *d)                 the number of the frame the loop's passes are on
                                                 (0: between frames), for the pass watchdog
    int  lg_dev_abort(lg_dev *d, u64 frame)     stop that frame's passes at their next loop
                                                 iteration (1; 0 when they are over): the frame
                                                 is dropped and counted as STAT_PASS_TIMEOUT
    u64 *lg_dev_stats(lg_dev *d)                counters (STAT_* below; per port p at
                                                 STAT_PORTS + PORT_SLOTS * p: rx packets, rx
                                                 bytes, tx packets, tx bytes, the errno of a
                                                 socket error that took the port out of the
                                                 loop); written by the loop only

The loop handles a program without requests (no clone, recirculation, resubmission, multicast,
truncation) behind a traffic manager that sends at once (no rates, no pauses): the switch checks
that before it starts the loop (lgkit/sw/switch/native_loop.py) and a packet that still asks for
more is counted as STAT_NEEDS_PYTHON and dropped.
"""

from __future__ import annotations

from lgkit.sw.exec.native.cgen import DRAW_BITS64

STATS = ("ingress", "egress", "ingress_drop", "egress_drop", "no_such_port", "tx_error",
         "needs_python", "rx_truncated", "range_errors", "rx_error", "bad_priority",
         "pass_timeout")
"""The device's counters before the per-port ones, in order (STAT_<NAME> in C)."""
STAT_PORTS = len(STATS)
PORT_STATS = ("rx_packets", "rx_bytes", "tx_packets", "tx_bytes", "error")
"""Each port's counters (STAT_PORTS + PORT_SLOTS * port); error: the errno that took it out."""
PORT_SLOTS = len(PORT_STATS)
MAX_PORT = 512

DEVICE = r"""
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>

#define MAX_PORTS 64
#define BATCH 64
#define RX_SLOT 65536
#define TX_SLOT (RX_SLOT + MAX_HEADER_BYTES)
#define MAX_PORT 512
STAT_DEFINES

typedef struct { uint32_t port, len; const uint8_t *data; } lg_frame;

typedef struct {
    uint32_t port; int fd;
    uint32_t ntx;
    struct mmsghdr tx[BATCH]; struct iovec txv[BATCH];
    uint8_t *txbuf;  /* BATCH slots of TX_SLOT */
} dev_port;

typedef struct lg_dev {
    ctx *c;
    u64 start_ns;
    int nports, stopfd;
    u64 queues;  /* the traffic manager's priority queues: a higher priority is dropped */
    u64 seed;    /* the loop's generator (lg_dev_seed) */
    int hand_first, hand_count;  /* frames of the last batch handed back (lg_dev_handed) */
    uint32_t hand_port;
    volatile int stopping;
    u64 busy, seq;  /* the frame the loop's passes are on (0: none; ABORTED: lg_dev_abort) */
    int16_t index[MAX_PORT];  /* port number -> its dev_port, -1 none */
    dev_port ports[MAX_PORTS];
    struct mmsghdr rx[BATCH]; struct iovec rxv[BATCH];
    uint8_t *rxbuf;  /* BATCH slots of RX_SLOT */
    uint8_t *one;    /* lg_dev_frame's output */
    pthread_mutex_t mu;
    u64 st[STAT_PORTS + PORT_SLOTS * MAX_PORT];
} lg_dev;

lg_dev *lg_dev_new(ctx *c, u64 start_ns) {
    lg_dev *d = calloc(1, sizeof *d);
    if (!d) return NULL;
    d->c = c; d->start_ns = start_ns; d->queues = 8;
    d->stopfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    d->rxbuf = malloc((size_t)BATCH * RX_SLOT);
    d->one = malloc(TX_SLOT);
    if (d->stopfd < 0 || !d->rxbuf || !d->one) {
        if (d->stopfd >= 0) close(d->stopfd);
        free(d->rxbuf); free(d->one); free(d);
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

void lg_dev_free(lg_dev *d) {
    if (!d) return;
    for (int i = 0; i < d->nports; i++) free(d->ports[i].txbuf);
    close(d->stopfd);
    pthread_mutex_destroy(&d->mu);
    free(d->rxbuf); free(d->one); free(d);
}

int lg_dev_port(lg_dev *d, uint32_t port, int fd) {
    if (d->nports >= MAX_PORTS || port >= MAX_PORT || d->index[port] >= 0) return -1;
    dev_port *p = &d->ports[d->nports];
    p->txbuf = malloc((size_t)BATCH * TX_SLOT);
    if (!p->txbuf) return -1;
    p->port = port; p->fd = fd; p->ntx = 0;
    for (int i = 0; i < BATCH; i++) {
        p->txv[i].iov_base = p->txbuf + (size_t)i * TX_SLOT;
        p->tx[i].msg_hdr.msg_iov = &p->txv[i]; p->tx[i].msg_hdr.msg_iovlen = 1;
    }
    d->index[port] = (int16_t)d->nports++;
    return 0;
}

u64 *lg_dev_stats(lg_dev *d) { return d->st; }
void lg_dev_queues(lg_dev *d, uint32_t priority_queues) { d->queues = priority_queues; }
void lg_dev_seed(lg_dev *d, u64 seed) { d->seed = seed; }

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

/* The pass watchdog's side: the loop's frame, and its abort (the frame still being that one,
   atomically, then the context's stop flag, which the generated loops check). */
#define ABORTED (1ULL << 63)
u64 lg_dev_busy(lg_dev *d) { return __atomic_load_n(&d->busy, __ATOMIC_SEQ_CST); }
int lg_dev_abort(lg_dev *d, u64 frame) {
    if (!frame || !__atomic_compare_exchange_n(&d->busy, &frame, frame | ABORTED, 0,
                                               __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) return 0;
    d->c->stop = 1;
    return 1;
}

void lg_dev_stop(lg_dev *d) {
    uint64_t one = 1;
    d->stopping = 1;
    if (write(d->stopfd, &one, sizeof one) < 0) { /* the flag alone stops it within a second */ }
}

/* A frame for the MAC, not the pipeline: 802.1Qbb PFC (EtherType 0x8808; the switch's traffic
   manager pauses its queues). */
static int mac_frame(const uint8_t *data, uint32_t len) {
    return len >= 14 && data[12] == 0x88 && data[13] == 0x08;
}

/* The frames the loop handed back when it stopped on a MAC frame (that frame and the rest of
   its batch, for the Python switch): frame i's bytes and length, NULL past the last. */
const uint8_t *lg_dev_handed(lg_dev *d, int i, uint32_t *port, uint32_t *len) {
    int k = d->hand_first + i;
    if (i < 0 || k >= d->hand_count) return NULL;
    *port = d->hand_port; *len = d->rx[k].msg_len;
    return d->rxbuf + (size_t)k * RX_SLOT;
}

static int needs_python(ctx *c) {
    return c->F[RQ_CLONE] || c->F[RQ_RECIRC] || c->F[RQ_TRUNC] || c->F[RQ_RESUB];
}

/* Where egress writes a frame for `spec`: the next transmit slot of its port, else (no such
   port: egress still runs, as in the traffic manager) the scratch buffer. */
static uint8_t *out_slot(lg_dev *d, long spec) {
    int k = d->index[(uint32_t)spec & 0x1FF];
    if (k < 0) return d->one;
    dev_port *q = &d->ports[k];
    return q->txbuf + (size_t)q->ntx * TX_SLOT;
}

/* Both passes of one frame, the output written where `direct` (out_slot) or into the scratch
   buffer says: its length, the egress port in *eport; -1 dropped (counted), -2 needs the
   Python driver. */
static long dev_pass(lg_dev *d, uint32_t port, const uint8_t *data, uint32_t len, u64 now_ns,
                     int direct, uint32_t *eport) {
    ctx *c = d->c;
    u64 now_us = now_ns / 1000;
    u64 *st = d->st;
    st[STAT_INGRESS]++;
    long spec = lg_ingress(c, port, data, len, now_us);
    if (c->nerrors) { st[STAT_RANGE_ERRORS] += c->nerrors; c->nerrors = 0; }
    if (spec == -1) { st[STAT_INGRESS_DROP]++; return -1; }
    if (spec < 0) { st[STAT_NEEDS_PYTHON]++; return -2; }
#ifdef SM_priority
    if (c->F[SM_priority] >= d->queues) { st[STAT_BAD_PRIORITY]++; return -1; }
#endif
    st[STAT_EGRESS]++;
    uint8_t *out = direct ? out_slot(d, spec) : d->one;
    long n = lg_egress(c, (u64)spec, 0, now_us, 0, 0, now_us, 0, out);
    if (c->nerrors) { st[STAT_RANGE_ERRORS] += c->nerrors; c->nerrors = 0; }
    if (needs_python(c)) { st[STAT_NEEDS_PYTHON]++; return -2; }
    if (n < 0) { st[STAT_EGRESS_DROP]++; return -1; }
    *eport = (uint32_t)spec & 0x1FF;
    return n;
}

int lg_dev_frame(lg_dev *d, uint32_t port, const uint8_t *data, uint32_t len, u64 now_ns,
                 lg_frame *outs, int max) {
    if (len > RX_SLOT) { d->st[STAT_RX_TRUNCATED]++; return 0; }
    if (mac_frame(data, len)) return -1;
    uint32_t eport = 0;
    long n = dev_pass(d, port, data, len, now_ns, 0, &eport);
    if (n == -2) return -1;
    if (n < 0 || max < 1) return 0;
    outs[0].port = eport; outs[0].len = (uint32_t)n; outs[0].data = d->one;
    return 1;
}

static void flush_port(lg_dev *d, dev_port *p) {
    uint32_t start = 0, n = p->ntx;
    u64 *pst = d->st + STAT_PORTS + PORT_SLOTS * p->port;
    while (start < n) {
        int sent = sendmmsg(p->fd, p->tx + start, n - start, 0);
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

static u64 now_of(lg_dev *d) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (u64)ts.tv_sec * 1000000000ULL + (u64)ts.tv_nsec - d->start_ns;
}

/* dev_pass under the pass watchdog (lg_dev_busy, lg_dev_abort): an aborted frame is dropped,
   counted as a pass timeout only, and the stop request withdrawn once the watchdog made it. */
static long guarded_pass(lg_dev *d, uint32_t port, const uint8_t *data, uint32_t len,
                         uint32_t *eport) {
    u64 *st = d->st, in_drop = st[STAT_INGRESS_DROP], eg_drop = st[STAT_EGRESS_DROP];
    __atomic_store_n(&d->busy, ++d->seq & ~ABORTED, __ATOMIC_SEQ_CST);
    long n = dev_pass(d, port, data, len, now_of(d), 1, eport);
    if (!(__atomic_exchange_n(&d->busy, 0, __ATOMIC_SEQ_CST) & ABORTED)) return n;
    while (!d->c->stop) sched_yield();  /* lg_dev_abort sets it right after its exchange */
    d->c->stop = 0;
    st[STAT_INGRESS_DROP] = in_drop; st[STAT_EGRESS_DROP] = eg_drop;
    st[STAT_PASS_TIMEOUT]++;
    return -1;
}

/* Read one batch from port p and run it; returns the frames read, -errno on a socket error. */
static int serve_port(lg_dev *d, dev_port *p) {
    int got = recvmmsg(p->fd, d->rx, BATCH, MSG_DONTWAIT, NULL);
    if (got < 0) return (errno == EAGAIN || errno == EINTR) ? 0 : -errno;
    u64 *in = d->st + STAT_PORTS + PORT_SLOTS * p->port;
    for (int i = 0; i < got; i++) {
        uint32_t len = d->rx[i].msg_len;
        if (mac_frame(d->rxbuf + (size_t)i * RX_SLOT, len)) {  /* stop: Python takes over */
            d->hand_first = i; d->hand_count = got; d->hand_port = p->port;
            d->stopping = 1;
            return got;
        }
        in[0]++; in[1] += len;
        if (d->rx[i].msg_hdr.msg_flags & MSG_TRUNC) { d->st[STAT_RX_TRUNCATED]++; continue; }
        uint32_t eport = 0;
        long n = guarded_pass(d, p->port, d->rxbuf + (size_t)i * RX_SLOT, len, &eport);
        if (n < 0) continue;
        int k = d->index[eport];
        if (k < 0) { d->st[STAT_NO_SUCH_PORT]++; continue; }
        dev_port *q = &d->ports[k];  /* egress wrote into its next slot */
        q->txv[q->ntx].iov_len = (size_t)n;
        if (++q->ntx == BATCH) flush_port(d, q);
    }
    return got;
}

int lg_dev_run(lg_dev *d) {
    int ep = epoll_create1(EPOLL_CLOEXEC);
    if (ep < 0) return -errno;
    struct epoll_event ev = {0}, evs[MAX_PORTS + 1];
    ev.events = EPOLLIN; ev.data.u32 = MAX_PORTS;
    epoll_ctl(ep, EPOLL_CTL_ADD, d->stopfd, &ev);
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
    while (!d->stopping && status == 0) {
        int n = epoll_wait(ep, evs, MAX_PORTS + 1, 1000);
        if (n < 0 && errno != EINTR) { status = -errno; break; }
        pthread_mutex_lock(&d->mu);
        for (int e = 0; e < n && !d->stopping; e++) {
            uint32_t k = evs[e].data.u32;
            if (k == MAX_PORTS) continue;
            int r = serve_port(d, &d->ports[k]);
            if (r < 0) {  /* a link down or an interface gone: leave it to the Python loop */
                d->st[STAT_RX_ERROR]++;
                d->st[STAT_PORTS + PORT_SLOTS * d->ports[k].port + 4] = (u64)-r;
                epoll_ctl(ep, EPOLL_CTL_DEL, d->ports[k].fd, NULL);
            }
        }
        for (int i = 0; i < d->nports; i++)
            if (d->ports[i].ntx) flush_port(d, &d->ports[i]);
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
    device = DEVICE.replace("STAT_DEFINES", "\n".join(defines))
    return "#define _GNU_SOURCE\n" + program_source + device
