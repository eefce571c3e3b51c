"""The native port loop's socket I/O on PACKET_MMAP rings (C text for the device layer): per
port a receive socket whose TPACKET_V2 ring the kernel fills and the loop reads without a
system call, taking the port's frames over from the switch's own socket through a packet
fanout group, and a send-only socket whose transmit ring one system call sends at a time.

The switch's socket joins a classic-BPF fanout group when it opens (lgkit/sw/switch/ports.py,
FANOUT_JOIN). ring_open adds the ring socket to that group and sets the group's program to
pick it; ring_give_back sets the program back to the switch's socket. A fanout program change
is atomic and waits until no frame is still on its way to the old member, so every frame goes
to exactly one socket: none is lost or read twice at the hand-overs. Frames still queued on the
switch's socket when the ring takes over are read first, by the C loop (device_c.py); frames
left on the ring when it gives the port back are handed to the Python switch (ring_left). A
frame larger than a ring slot is queued on the ring socket (PACKET_COPY_THRESH) and read from
there in its turn.

C API (`lg_ring` is a caller's struct; ring_close, ring_pending and ring_drops take a closed
one too):

    void ring_init(lg_ring *r)               closed (the state ring_close leaves)
    int  ring_open(lg_ring *r, int first)   a ring on the interface of socket `first` (bound,
                                             in a fanout group), taking its frames over: 0 or
                                             -errno (then nothing is left open)
    int  ring_send(lg_ring *r, struct mmsghdr *tx, int n)   as sendmmsg(tx, n) through the
                                             port's transmit ring: frames sent, -1 and errno
    int  ring_recv(lg_ring *r, struct mmsghdr *rx, uint8_t *buf, uint32_t slot, int max)
                                             up to `max` frames copied into buf's slots (as
                                             recvmmsg fills rx: msg_len, MSG_TRUNC in
                                             msg_flags); 0 none, -errno on a socket error
    int  ring_give_back(lg_ring *r)          the group's frames to `first` again; after it
                                             the ring gets no frame: 0 or -errno
    const uint8_t *ring_left(lg_ring *r, int i, uint32_t *len)   the i-th frame still on
                                             the ring (after ring_give_back), NULL past the last
    int  ring_pending(lg_ring *r)            how many frames are still on the ring
    u64  ring_drops(lg_ring *r)              frames the kernel dropped on a full ring since the
                                             last call
    void ring_close(lg_ring *r)              unmap and close (any state; twice is harmless)
"""

from __future__ import annotations

RING = r"""
#include <linux/filter.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <sys/mman.h>

#define RING_FRAME 2048                   /* a slot: the header and a frame up to ~1980 B */
#define RING_FRAMES 2048                  /* slots: ~2700 64 B frames fit a socket's buffer */
#define TX_FRAMES 512                     /* transmit slots: a batch (64) is sent at a time */
#define RING_BLOCK (RING_FRAME * 32)
#define RING_BYTES ((size_t)RING_FRAME * RING_FRAMES)
#define TX_BYTES ((size_t)RING_FRAME * TX_FRAMES)
#define RING_QUEUE_BYTES (1 << 20)        /* the ring socket's receive buffer (ports.py's) */

typedef struct {
    int fd;                 /* the ring socket, -1 when closed */
    uint8_t *map;           /* RING_BYTES, NULL when unmapped */
    uint32_t next;          /* the next slot to read */
    int given_back;
    uint8_t *spill;         /* a queued frame ring_left read (RX_SLOT bytes), or NULL */
    int txfd;               /* the sending socket (bound, receiving nothing), -1 none */
    uint8_t *txmap;         /* its transmit ring (TX_BYTES), NULL none */
    uint32_t txnext;        /* the next transmit slot to fill */
} lg_ring;

static struct tpacket2_hdr *ring_slot(lg_ring *r, uint32_t i) {
    return (struct tpacket2_hdr *)(r->map + (size_t)(i % RING_FRAMES) * RING_FRAME);
}

/* The fanout group's program: every frame to member `index` (0 the switch's socket, 1 the
   ring's); setting it returns once no frame is on its way to the old choice. */
static int ring_route(int fd, uint32_t index) {
    struct sock_filter pick = BPF_STMT(BPF_RET | BPF_K, index);
    struct sock_fprog prog = {1, &pick};
    return setsockopt(fd, SOL_PACKET, PACKET_FANOUT_DATA, &prog, sizeof prog) < 0 ? -errno : 0;
}

/* TPACKET_V2 and a ring of `frames` slots (`which`: PACKET_RX_RING or PACKET_TX_RING) on
   socket fd, mapped at *map: 0 or -errno. */
static int ring_map(int fd, int which, unsigned frames, uint8_t **map) {
    int version = TPACKET_V2;
    size_t bytes = (size_t)RING_FRAME * frames;
    struct tpacket_req req = {RING_BLOCK, (unsigned)(bytes / RING_BLOCK), RING_FRAME, frames};
    if (setsockopt(fd, SOL_PACKET, PACKET_VERSION, &version, sizeof version) < 0 ||
        setsockopt(fd, SOL_PACKET, which, &req, sizeof req) < 0)
        return -errno;
    void *m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (m == MAP_FAILED) return -errno;
    *map = m;
    return 0;
}

void ring_init(lg_ring *r) {
    memset(r, 0, sizeof *r);
    r->fd = r->txfd = -1;
}

void ring_close(lg_ring *r) {
    if (r->map) munmap(r->map, RING_BYTES);
    if (r->fd >= 0) close(r->fd);
    if (r->txmap) munmap(r->txmap, TX_BYTES);
    if (r->txfd >= 0) close(r->txfd);
    free(r->spill);
    r->map = NULL; r->fd = -1; r->spill = NULL; r->txmap = NULL; r->txfd = -1;
}

/* The sending socket: bound to the interface with protocol 0 (it receives nothing, and no
   epoll watches it: freeing a sent frame wakes nobody), its transmit ring mapped. Frames go
   through the interface's qdisc as the switch's own sends do (PACKET_QDISC_BYPASS saved no
   CPU here and would hide them from packet sockets such as tcpdump's). */
static int ring_tx_open(lg_ring *r, struct sockaddr_ll at) {
    int one = 1;  /* PACKET_LOSS: a malformed frame is skipped, not left to stop the ring */
    r->txfd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
    if (r->txfd < 0) return -errno;
    if (setsockopt(r->txfd, SOL_PACKET, PACKET_LOSS, &one, sizeof one) < 0) return -errno;
    int err = ring_map(r->txfd, PACKET_TX_RING, TX_FRAMES, &r->txmap);
    if (err) return err;
    at.sll_protocol = 0;
    return bind(r->txfd, (struct sockaddr *)&at, sizeof at) < 0 ? -errno : 0;
}

#define TX_DATA (TPACKET2_HDRLEN - sizeof(struct sockaddr_ll))  /* a frame's offset in a slot */

/* Send what the transmit ring holds (the kernel's copies are made in this call). */
static int ring_kick(lg_ring *r) {
    return send(r->txfd, NULL, 0, MSG_DONTWAIT) < 0 && errno != EAGAIN && errno != ENOBUFS ? -1 : 0;
}

/* As sendmmsg(tx, n): the frames sent from the first, or -1 with errno for the first. A
   frame larger than a slot, or one that finds the ring full, goes alone after the ring's. */
int ring_send(lg_ring *r, struct mmsghdr *tx, int n) {
    int i = 0;
    for (; i < n; i++) {
        struct tpacket2_hdr *h = (struct tpacket2_hdr *)(r->txmap +
                                 (size_t)(r->txnext % TX_FRAMES) * RING_FRAME);
        size_t len = tx[i].msg_hdr.msg_iov->iov_len;
        if (__atomic_load_n(&h->tp_status, __ATOMIC_ACQUIRE) != TP_STATUS_AVAILABLE ||
            len > RING_FRAME - TX_DATA) break;
        memcpy((uint8_t *)h + TX_DATA, tx[i].msg_hdr.msg_iov->iov_base, len);
        h->tp_len = (uint32_t)len;
        __atomic_store_n(&h->tp_status, TP_STATUS_SEND_REQUEST, __ATOMIC_RELEASE);
        r->txnext++;
    }
    if (i && ring_kick(r) < 0) return -1;
    if (i) return i;
    /* Too large, or the ring full: what is on the ring first, then this frame alone through
       the receiving socket (a socket with a transmit ring sends only from its ring). */
    if (ring_kick(r) < 0) return -1;
    return sendmsg(r->fd, &tx[0].msg_hdr, 0) < 0 ? -1 : 1;
}

/* The ring socket until it joins the group: bound to the interface but dropping what it gets
   (a filter that keeps nothing), so no frame reaches both sockets before the join. */
static int ring_setup(lg_ring *r, struct sockaddr_ll *at) {
    struct sock_filter none = BPF_STMT(BPF_RET | BPF_K, 0);
    struct sock_fprog drop = {1, &none};
    int one = 1, queue = RING_QUEUE_BYTES;  /* frames larger than a slot wait in the socket:
                                                as much as the switch's own may queue */
    if (setsockopt(r->fd, SOL_SOCKET, SO_RCVBUFFORCE, &queue, sizeof queue) < 0)
        setsockopt(r->fd, SOL_SOCKET, SO_RCVBUF, &queue, sizeof queue);
    if (setsockopt(r->fd, SOL_SOCKET, SO_ATTACH_FILTER, &drop, sizeof drop) < 0 ||
        setsockopt(r->fd, SOL_PACKET, PACKET_COPY_THRESH, &one, sizeof one) < 0)
        return -errno;
    int err = ring_map(r->fd, PACKET_RX_RING, RING_FRAMES, &r->map);
    if (err) return err;
    at->sll_protocol = htons(ETH_P_ALL);
    return bind(r->fd, (struct sockaddr *)at, sizeof *at) < 0 ? -errno : 0;
}

int ring_open(lg_ring *r, int first) {
    struct sockaddr_ll at;
    socklen_t size = sizeof at;
    uint32_t group = 0;
    socklen_t gsize = sizeof group;
    ring_init(r);
    if (getsockname(first, (struct sockaddr *)&at, &size) < 0 ||
        getsockopt(first, SOL_PACKET, PACKET_FANOUT, &group, &gsize) < 0)
        return -errno;
    if (!group) return -EOPNOTSUPP;  /* the switch's socket is in no fanout group */
    r->fd = socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (r->fd < 0) return -errno;
    int err = ring_setup(r, &at);
    if (!err && setsockopt(r->fd, SOL_PACKET, PACKET_FANOUT, &group, sizeof group) < 0)
        err = -errno;
    int unused = 0;  /* the kernel wants an int's length even here */
    if (!err && setsockopt(r->fd, SOL_SOCKET, SO_DETACH_FILTER, &unused, sizeof unused) < 0)
        err = -errno;
    if (!err) err = ring_tx_open(r, at);
    if (!err) err = ring_route(r->fd, 1);
    if (err) ring_close(r);
    return err;
}

int ring_recv(lg_ring *r, struct mmsghdr *rx, uint8_t *buf, uint32_t slot, int max) {
    int n = 0;
    while (n < max) {
        struct tpacket2_hdr *h = ring_slot(r, r->next);
        uint32_t status = __atomic_load_n(&h->tp_status, __ATOMIC_ACQUIRE);
        if (!(status & TP_STATUS_USER)) break;
        uint8_t *to = buf + (size_t)n * slot;
        int flags = 0;
        long len;
        if (status & TP_STATUS_COPY) {  /* larger than a slot: the whole frame is queued */
            len = recv(r->fd, to, slot, MSG_DONTWAIT | MSG_TRUNC);
            if (len > (long)slot) { flags = MSG_TRUNC; len = slot; }
        } else {
            len = h->tp_snaplen;
            if (h->tp_len > h->tp_snaplen) flags = MSG_TRUNC;
            memcpy(to, (uint8_t *)h + h->tp_mac, (size_t)len);
        }
        __atomic_store_n(&h->tp_status, TP_STATUS_KERNEL, __ATOMIC_RELEASE);
        r->next++;
        if (len < 0) continue;  /* the queued copy was not there: lost */
        rx[n].msg_len = (unsigned)len; rx[n].msg_hdr.msg_flags = flags;
        n++;
    }
    if (n == 0) {  /* woken with nothing to read: a socket error (the link went down)? */
        int err = 0;
        socklen_t size = sizeof err;
        if (getsockopt(r->fd, SOL_SOCKET, SO_ERROR, &err, &size) == 0 && err) return -err;
    }
    return n;
}

int ring_give_back(lg_ring *r) {
    if (r->fd < 0 || r->given_back) return 0;
    int err = ring_route(r->fd, 0);
    if (!err) r->given_back = 1;
    return err;
}

int ring_pending(lg_ring *r) {
    int n = 0;
    while (r->map && n < RING_FRAMES &&
           (__atomic_load_n(&ring_slot(r, r->next + (uint32_t)n)->tp_status, __ATOMIC_ACQUIRE)
            & TP_STATUS_USER))
        n++;
    return n;
}

/* A frame queued on the socket (TP_STATUS_COPY) is read from there: call ring_left for
   i = 0, 1, ... in turn, once each. */
const uint8_t *ring_left(lg_ring *r, int i, uint32_t *len) {
    if (!r->map || i < 0 || i >= RING_FRAMES) return NULL;
    struct tpacket2_hdr *h = ring_slot(r, r->next + (uint32_t)i);
    uint32_t status = __atomic_load_n(&h->tp_status, __ATOMIC_ACQUIRE);
    if (!(status & TP_STATUS_USER)) return NULL;
    if (!(status & TP_STATUS_COPY)) {
        *len = h->tp_snaplen;
        return (uint8_t *)h + h->tp_mac;
    }
    if (!r->spill && !(r->spill = malloc(RX_SLOT))) return NULL;
    long got = recv(r->fd, r->spill, RX_SLOT, MSG_DONTWAIT);
    *len = got < 0 ? 0 : (uint32_t)got;
    return r->spill;
}

u64 ring_drops(lg_ring *r) {
    struct tpacket_stats st = {0};
    socklen_t size = sizeof st;
    if (r->fd < 0 || getsockopt(r->fd, SOL_PACKET, PACKET_STATISTICS, &st, &size) < 0) return 0;
    return st.tp_drops;
}
"""
