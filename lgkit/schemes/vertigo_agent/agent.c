/* Vertigo's host agent in C: the marker and orderer of lgkit/schemes/vertigo_marker.py and
 * vertigo_orderer.py (same marks, same order), behind NFQUEUE with libnetfilter_queue, verdicts
 * sent in batches (one send per round of received packets).
 *
 *   agent [--framed-ports P,..] [--framed-source-ports P,..] [--tau-us T] [--stats FILE]
 *         [--no-mark] [--no-order]      serve queues 0 (mark) and 1 (order) until SIGTERM
 *   agent --replay [...]                 the logic only, driven by lines on stdin (tests):
 *         M <hex>          mark an IPv4 packet, prints "M <hex>"
 *         O <id> <us> <hex> an arrival at time us, prints "R <ids released>"
 *         E <us>           expire, prints "R ..."; F: flush, prints "R ..."; S: stats JSON
 * Built by lgkit/schemes/vertigo_cagent.py with the system C compiler.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/netfilter.h>
#include <libnetfilter_queue/libnetfilter_queue.h>

#define OPT_LEN 12
#define FLOWINFO_TYPE 0x5E
#define KEEP_MESSAGES 64
#define KEEP_DONE 4096
#define MAX_RETCNT 15
#define SYN 0x02
#define FIN 0x01
#define RST 0x04
#define KEY_LEN 13
#define BUCKETS (1u << 16)
#define MAX_PACKET 65536

static void *xrealloc(void *p, size_t n) {
    void *q = realloc(p, n ? n : 1);
    if (!q) { fprintf(stderr, "lgkit: error: vertigo agent: out of memory\n"); exit(1); }
    return q;
}
#define GROW(arr, n, cap) do { if ((n) == (cap)) { (cap) = (cap) ? 2 * (cap) : 8; \
    (arr) = xrealloc((arr), (cap) * sizeof *(arr)); } } while (0)

/* ---- a chained hash map over 13-byte keys ---- */
typedef struct Node { struct Node *next; uint8_t key[KEY_LEN]; void *value; } Node;
typedef struct { Node **buckets; size_t count; } Map;

static uint32_t hash(const uint8_t *key) {
    uint32_t h = 2166136261u;
    for (int i = 0; i < KEY_LEN; i++) h = (h ^ key[i]) * 16777619u;
    return h & (BUCKETS - 1);
}
static void map_init(Map *m) { m->buckets = calloc(BUCKETS, sizeof(Node *)); m->count = 0; }
static Node *map_find(Map *m, const uint8_t *key) {
    for (Node *n = m->buckets[hash(key)]; n; n = n->next)
        if (!memcmp(n->key, key, KEY_LEN)) return n;
    return NULL;
}
static Node *map_put(Map *m, const uint8_t *key, void *value) {
    Node *n = map_find(m, key);
    if (!n) {
        n = xrealloc(NULL, sizeof *n);
        memcpy(n->key, key, KEY_LEN);
        n->next = m->buckets[hash(key)];
        m->buckets[hash(key)] = n;
        m->count++;
    }
    n->value = value;
    return n;
}
static void *map_del(Map *m, const uint8_t *key) {
    for (Node **at = &m->buckets[hash(key)]; *at; at = &(*at)->next)
        if (!memcmp((*at)->key, key, KEY_LEN)) {
            Node *n = *at;
            void *value = n->value;
            *at = n->next;
            free(n);
            m->count--;
            return value;
        }
    return NULL;
}

/* ---- flowinfo: the sealed 12-byte IPv4 option ---- */
static uint32_t rotr32(uint32_t v, unsigned c) { c %= 32; return c ? (v >> c) | (v << (32 - c)) : v; }
static uint32_t rotl32(uint32_t v, unsigned c) { return rotr32(v, 32 - c % 32); }
static uint32_t fold(uint32_t total) { while (total >> 16) total = (total & 0xFFFF) + (total >> 16); return total; }
static uint16_t rd16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static uint32_t rd32(const uint8_t *p) { return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]; }
static void wr16(uint8_t *p, uint16_t v) { p[0] = v >> 8; p[1] = v & 0xFF; }
static void wr32(uint8_t *p, uint32_t v) { wr16(p, v >> 16); wr16(p + 2, v & 0xFFFF); }
static uint32_t words(const uint8_t *p, size_t n) { uint32_t s = 0; for (size_t i = 0; i < n; i += 2) s += rd16(p + i); return s; }

static void pack_flowinfo(uint8_t *opt, int64_t remaining, int retcnt, int64_t flow_id, int first, int aged) {
    if (retcnt > MAX_RETCNT) retcnt = MAX_RETCNT;
    uint32_t rfs = rotr32(remaining > 0xFFFFFFFFLL ? 0xFFFFFFFFu : (uint32_t)remaining, (unsigned)retcnt);
    opt[0] = FLOWINFO_TYPE; opt[1] = OPT_LEN; wr32(opt + 2, rfs);
    opt[6] = (uint8_t)((retcnt & 0xF) << 4 | (flow_id & 7) << 1 | (first ? 1 : 0));
    opt[7] = 0; wr16(opt + 8, 0); wr16(opt + 10, aged ? 0x8000 : 0);
    wr16(opt + 8, (uint16_t)(~fold(words(opt, OPT_LEN)) & 0xFFFF));
}

/* ---- the marker ---- */
typedef struct { int64_t index, start, end, first_at; } Message; /* first_at -1: none yet */
typedef struct { int64_t offset; int count; } Retx;
typedef struct {
    uint32_t base; int framed; int64_t sent, next_start;
    Message *msgs; size_t nmsgs, capmsgs;
    uint8_t partial[4]; int npartial;
    Retx *retx; size_t nretx, capretx;
} Conn;
static struct { long marked, retransmissions, flows, aged, skipped, lost_framing; } mstats;
static Map conns;
static int framed_ports[65536], framed_source_ports[65536];

static void conn_free(Conn *c) { if (c) { free(c->msgs); free(c->retx); free(c); } }

static Conn *connection(const uint8_t *key, uint32_t seq, int flags) {
    Node *n = map_find(&conns, key);
    Conn *c = n ? n->value : NULL;
    if (c && !(flags & SYN)) return c;
    conn_free(c);
    c = xrealloc(NULL, sizeof *c);
    memset(c, 0, sizeof *c);
    c->base = flags & SYN ? seq + 1 : seq;
    c->framed = (flags & SYN) && (framed_ports[rd16(key + 10)] || framed_source_ports[rd16(key + 4)]);
    map_put(&conns, key, c);
    return c;
}

static int *retx_count(Conn *c, int64_t offset) {
    for (size_t i = 0; i < c->nretx; i++) if (c->retx[i].offset == offset) return &c->retx[i].count;
    GROW(c->retx, c->nretx, c->capretx);
    c->retx[c->nretx] = (Retx){offset, 0};
    return &c->retx[c->nretx++].count;
}

static void read_prefixes(Conn *c, int64_t start, const uint8_t *payload, int64_t len) {
    int64_t end = start + len;
    while (c->next_start < end) {
        int64_t at = c->next_start - start;
        uint8_t prefix[4]; int have;
        if (at < 0) {
            if (c->next_start + c->npartial != start) return;
            int wanted = 4 - c->npartial;
            memcpy(prefix, c->partial, (size_t)c->npartial);
            int take = len < wanted ? (int)len : wanted;
            memcpy(prefix + c->npartial, payload, (size_t)take);
            have = c->npartial + take;
        } else {
            have = len - at < 4 ? (int)(len - at) : 4;
            memcpy(prefix, payload + at, (size_t)have);
        }
        if (have < 4) { memcpy(c->partial, prefix, (size_t)have); c->npartial = have; return; }
        c->npartial = 0;
        uint32_t size = rd32(prefix);
        if (size < 4) { c->framed = 0; mstats.lost_framing++; return; }
        int64_t index = c->nmsgs ? c->msgs[c->nmsgs - 1].index + 1 : 0;
        GROW(c->msgs, c->nmsgs, c->capmsgs);
        c->msgs[c->nmsgs++] = (Message){index, c->next_start, c->next_start + size, -1};
        c->next_start += size;
        mstats.flows++;
    }
    if (c->nmsgs > KEEP_MESSAGES) {
        size_t drop = c->nmsgs - KEEP_MESSAGES, kept = 0;
        memmove(c->msgs, c->msgs + drop, KEEP_MESSAGES * sizeof *c->msgs);
        c->nmsgs = KEEP_MESSAGES;
        for (size_t i = 0; i < c->nretx; i++)
            if (c->retx[i].offset >= c->msgs[0].start) c->retx[kept++] = c->retx[i];
        c->nretx = kept;
    }
}

/* Marks `ip` into `out`; returns the new length, or 0 to leave the packet as it is. */
static size_t mark(const uint8_t *ip, size_t len, uint8_t *out) {
    if (len < 40 || ip[0] != 0x45 || ip[9] != 6) { mstats.skipped++; return 0; }
    uint8_t key[KEY_LEN] = {0};
    memcpy(key, ip + 12, 4); memcpy(key + 4, ip + 20, 2); memcpy(key + 6, ip + 16, 4); memcpy(key + 10, ip + 22, 2);
    size_t total = rd16(ip + 2), data = 20 + (size_t)(ip[32] >> 4) * 4;
    size_t stop = total < len ? total : len;
    int64_t plen = stop > data ? (int64_t)(stop - data) : 0;
    int flags = ip[33];
    uint32_t seq = rd32(ip + 24);
    Conn *c = connection(key, seq, flags);
    if (!plen) {
        if (flags & RST) conn_free(map_del(&conns, key));
        mstats.skipped++;
        return 0;
    }
    int64_t start = (uint32_t)(seq - c->base), end = start + plen;
    int retcnt = 0;
    if (start < c->sent) { retcnt = ++*retx_count(c, start); mstats.retransmissions++; }
    if (c->framed && end > c->sent) read_prefixes(c, start, ip + data, plen);
    if (end > c->sent) c->sent = end;
    Message *m = NULL;
    for (size_t i = c->nmsgs; i-- > 0;)
        if (c->msgs[i].start <= start && start < c->msgs[i].end) { m = &c->msgs[i]; break; }
    uint8_t opt[OPT_LEN];
    if (!m) { mstats.aged++; pack_flowinfo(opt, start, retcnt, 0, 0, 1); }
    else {
        if (m->first_at < 0) m->first_at = start;
        pack_flowinfo(opt, m->end - start, retcnt, m->index, start == m->first_at, 0);
    }
    mstats.marked++;
    memcpy(out, ip, 20);
    out[0] = 0x40 | (20 + OPT_LEN) / 4;
    wr16(out + 2, (uint16_t)(total + OPT_LEN));
    memcpy(out + 20, opt, OPT_LEN);
    memcpy(out + 20 + OPT_LEN, ip + 20, len - 20);
    wr16(out + 10, 0);
    wr16(out + 10, (uint16_t)(~fold(words(out, 20 + OPT_LEN)) & 0xFFFF));
    return len + OPT_LEN;
}

/* ---- the orderer ---- */
typedef struct { int64_t rfs, length; uint32_t handle; double arrived; } Wait;
typedef struct { int has_expected, waiting; int64_t expected; Wait *early; size_t nearly, capearly; uint8_t key[KEY_LEN]; } Flow;
static struct { long in_order, early, late, released_by_timeout, timeouts, passed, most_buffered, deflected; } ostats;
static Map flows, done;
static Flow **waiting; static size_t nwaiting, capwaiting;
static long buffered; static double tau_us = 360.0;
typedef struct { uint8_t key[KEY_LEN]; uintptr_t serial; } DoneEntry;
static DoneEntry *done_ring; static size_t done_head, done_tail, done_cap; static uintptr_t done_serial;

static uint32_t *released; static size_t nreleased, capreleased;
static void release(uint32_t handle) { GROW(released, nreleased, capreleased); released[nreleased++] = handle; }

static void done_add(const uint8_t *key) {
    map_put(&done, key, (void *)++done_serial);
    if (done_tail == done_cap) {  /* compact, or grow */
        memmove(done_ring, done_ring + done_head, (done_tail - done_head) * sizeof *done_ring);
        done_tail -= done_head; done_head = 0;
        if (done_tail == done_cap) { done_cap = done_cap ? 2 * done_cap : 8192; done_ring = xrealloc(done_ring, done_cap * sizeof *done_ring); }
    }
    memcpy(done_ring[done_tail].key, key, KEY_LEN);
    done_ring[done_tail++].serial = done_serial;
    while (done.count > KEEP_DONE) {
        DoneEntry *e = &done_ring[done_head++];
        Node *n = map_find(&done, e->key);
        if (n && (uintptr_t)n->value == e->serial) map_del(&done, e->key);
    }
}

static void unwait(Flow *f) {
    if (!f->waiting) return;
    for (size_t i = 0; i < nwaiting; i++) if (waiting[i] == f) { waiting[i] = waiting[--nwaiting]; break; }
    f->waiting = 0;
}

static void drain(Flow *f) {
    for (;;) {
        if (!f->has_expected) return;
        size_t kept = 0, found = 0; int64_t first_len = 0;
        for (size_t i = 0; i < f->nearly; i++) {
            if (f->early[i].rfs == f->expected) {
                if (!found++) first_len = f->early[i].length;
                release(f->early[i].handle);
            } else f->early[kept++] = f->early[i];
        }
        if (!found) return;
        f->nearly = kept; buffered -= (long)found; f->expected -= first_len;
    }
}

static void forget_if_done(Flow *f) {
    if (!f->nearly) unwait(f);
    if (f->has_expected && f->expected <= 0 && !f->nearly) {
        uint8_t key[KEY_LEN];
        memcpy(key, f->key, KEY_LEN);
        map_del(&flows, key);
        free(f->early); free(f);
        done_add(key);
    }
}

static Flow *new_flow(const uint8_t *key) {
    Flow *f = xrealloc(NULL, sizeof *f);
    memset(f, 0, sizeof *f);
    memcpy(f->key, key, KEY_LEN);
    Flow *old = map_del(&flows, key);
    if (old) { unwait(old); free(old->early); free(old); }
    map_put(&flows, key, f);
    map_del(&done, key);
    return f;
}

/* An arrival: appends the handles to release now to `released`. info NULL: no flowinfo. */
static void arrive(uint32_t handle, const uint8_t *key, const uint8_t *info, int64_t length, double now) {
    if (!info || (rd16(info + 10) & 0x8000) || length == 0) { ostats.passed++; release(handle); return; }
    if (info[7]) ostats.deflected++;
    int retcnt = info[6] >> 4, first = info[6] & 1;
    int64_t rfs = rotl32(rd32(info + 2), (unsigned)retcnt);
    Node *n = map_find(&flows, key);
    Flow *f = n ? n->value : NULL;
    int fresh_first = first && retcnt == 0;
    if (!f && map_find(&done, key) && !fresh_first) { ostats.late++; release(handle); return; }
    if (!f || (fresh_first && f->has_expected && rfs > f->expected && !f->nearly)) f = new_flow(key);
    if (!f->has_expected && first) { f->has_expected = 1; f->expected = rfs; }
    if (f->has_expected && rfs > f->expected) { ostats.late++; release(handle); return; }
    if (!f->has_expected || rfs < f->expected) {
        GROW(f->early, f->nearly, f->capearly);
        f->early[f->nearly++] = (Wait){rfs, length, handle, now};
        if (!f->waiting) { GROW(waiting, nwaiting, capwaiting); waiting[nwaiting++] = f; f->waiting = 1; }
        if (++buffered > ostats.most_buffered) ostats.most_buffered = buffered;
        ostats.early++;
        return;
    }
    ostats.in_order++;
    f->expected = rfs - length;
    release(handle);
    drain(f);
    forget_if_done(f);
}

static double deadline(const Flow *f) {
    double oldest = f->early[0].arrived;
    for (size_t i = 1; i < f->nearly; i++) if (f->early[i].arrived < oldest) oldest = f->early[i].arrived;
    return oldest + tau_us;
}

static double next_deadline(void) {
    double best = -1;
    for (size_t i = 0; i < nwaiting; i++) { double d = deadline(waiting[i]); if (best < 0 || d < best) best = d; }
    return best;
}

static void expire(double now) {
    for (size_t i = nwaiting; i-- > 0;) {
        if (i >= nwaiting) continue;
        Flow *f = waiting[i];
        if (!f->nearly || deadline(f) > now) continue;
        ostats.timeouts++;
        int64_t top = f->early[0].rfs;
        for (size_t j = 1; j < f->nearly; j++) if (f->early[j].rfs > top) top = f->early[j].rfs;
        f->has_expected = 1; f->expected = top;
        size_t before = nreleased;
        drain(f);
        ostats.released_by_timeout += (long)(nreleased - before);
        forget_if_done(f);
    }
}

static void flush(void) {
    while (nwaiting) {
        Flow *f = waiting[0];
        for (size_t i = 0; i < f->nearly; i++) release(f->early[i].handle);
        buffered -= (long)f->nearly; f->nearly = 0;
        unwait(f);
    }
}

/* The flow key and TCP payload length of a packet with flowinfo; returns the option or NULL. */
static const uint8_t *flowinfo_of(const uint8_t *ip, size_t len, uint8_t *key, int64_t *payload) {
    size_t header = (size_t)(ip[0] & 0x0F) * 4;
    if (len < 20 + OPT_LEN || header != 20 + OPT_LEN || ip[20] != FLOWINFO_TYPE || ip[21] != OPT_LEN) return NULL;
    if (len < header + 13) return NULL;
    const uint8_t *opt = ip + 20;
    memcpy(key, ip + 12, 4); memcpy(key + 4, ip + header, 2); memcpy(key + 6, ip + 16, 4);
    memcpy(key + 10, ip + header + 2, 2); key[12] = (opt[6] >> 1) & 7;
    *payload = (int64_t)rd16(ip + 2) - (int64_t)header - (ip[header + 12] >> 4) * 4;
    return opt;
}

static void order_packet(uint32_t handle, const uint8_t *ip, size_t len, double now) {
    uint8_t key[KEY_LEN]; int64_t payload = 0;
    const uint8_t *info = flowinfo_of(ip, len, key, &payload);
    arrive(handle, info ? key : NULL, info, info ? payload : 0, now);
}

/* ---- stats ---- */
static long received[2], overflows; static double verdict_total_us, verdict_max_us;

static void write_stats(FILE *f, int marking, int ordering) {
    if (marking) fprintf(f, "{\"marker\": {\"marked\": %ld, \"retransmissions\": %ld, \"flows\": %ld, \"aged\": %ld, \"skipped\": %ld, \"lost_framing\": %ld}",
                         mstats.marked, mstats.retransmissions, mstats.flows, mstats.aged, mstats.skipped, mstats.lost_framing);
    else fprintf(f, "{\"marker\": null");
    if (ordering) fprintf(f, ", \"orderer\": {\"in_order\": %ld, \"early\": %ld, \"late\": %ld, \"released_by_timeout\": %ld, \"timeouts\": %ld, \"passed\": %ld, \"most_buffered\": %ld, \"deflected\": %ld}",
                          ostats.in_order, ostats.early, ostats.late, ostats.released_by_timeout, ostats.timeouts, ostats.passed, ostats.most_buffered, ostats.deflected);
    else fprintf(f, ", \"orderer\": null");
    fprintf(f, ", \"overflows\": %ld, \"received\": {", overflows);
    const char *sep = "";
    if (marking) { fprintf(f, "\"0\": %ld", received[0]); sep = ", "; }
    if (ordering) fprintf(f, "%s\"1\": %ld", sep, received[1]);
    fprintf(f, "}, \"mark_verdict_us\": {\"total\": %.0f, \"max\": %.1f}, \"engine\": \"c\"}\n", verdict_total_us, verdict_max_us);
}

static void save_stats(const char *path, int marking, int ordering) {
    if (!path) return;
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f) return;
    write_stats(f, marking, ordering);
    if (fclose(f) == 0) rename(tmp, path);
}

/* ---- replay (tests) ---- */
static int unhex(const char *s, uint8_t *out) {
    size_t n = strlen(s), k = 0;
    while (n && (s[n - 1] == '\n' || s[n - 1] == ' ')) n--;
    for (size_t i = 0; i + 1 < n && k < MAX_PACKET; i += 2) { unsigned b; sscanf(s + i, "%2x", &b); out[k++] = (uint8_t)b; }
    return (int)k;
}
static void print_released(void) {
    printf("R");
    for (size_t i = 0; i < nreleased; i++) printf(" %u", released[i]);
    printf("\n");
    nreleased = 0;
}

static int replay(void) {
    static char line[4 * MAX_PACKET]; static uint8_t pkt[MAX_PACKET], out[MAX_PACKET + OPT_LEN];
    while (fgets(line, sizeof line, stdin)) {
        if (line[0] == 'M') {
            int n = unhex(line + 2, pkt);
            size_t m = mark(pkt, (size_t)n, out);
            const uint8_t *res = m ? out : pkt;
            printf("M ");
            for (size_t i = 0; i < (m ? m : (size_t)n); i++) printf("%02x", res[i]);
            printf("\n");
        } else if (line[0] == 'O') {
            unsigned handle; double now; int used = 0;
            if (sscanf(line + 2, "%u %lf %n", &handle, &now, &used) < 2) return 1;
            int n = unhex(line + 2 + used, pkt);
            order_packet(handle, pkt, (size_t)n, now);
            print_released();
        } else if (line[0] == 'E') {
            expire(strtod(line + 2, NULL)); print_released();
        } else if (line[0] == 'F') {
            flush(); print_released();
        } else if (line[0] == 'S') {
            write_stats(stdout, 1, 1);
        }
        fflush(stdout);
    }
    return 0;
}

/* ---- serving the queues ---- */
static volatile sig_atomic_t stopping;
static void on_signal(int sig) { (void)sig; stopping = 1; }
static char batch[1 << 18]; static size_t batch_used;
static int nfq_sock;

static void batch_flush(void) {
    if (batch_used && send(nfq_sock, batch, batch_used, 0) < 0 && errno != EINTR)
        fprintf(stderr, "vertigo agent: verdicts: %s\n", strerror(errno));
    batch_used = 0;
}
static void verdict(int queue, uint32_t id, const uint8_t *payload, size_t len) {
    if (batch_used + len + 256 > sizeof batch) batch_flush();
    struct nlmsghdr *nlh = nfq_nlmsg_put(batch + batch_used, NFQNL_MSG_VERDICT, (uint32_t)queue);
    nfq_nlmsg_verdict_put(nlh, (int)id, NF_ACCEPT);
    if (payload) nfq_nlmsg_verdict_put_pkt(nlh, payload, (uint32_t)len);
    batch_used += NLMSG_ALIGN(nlh->nlmsg_len);
}
static void verdict_released(void) {
    for (size_t i = 0; i < nreleased; i++) verdict(1, released[i], NULL, 0);
    nreleased = 0;
}
static double now_us(void) {
    struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static int on_mark(struct nfq_q_handle *qh, struct nfgenmsg *msg, struct nfq_data *nfa, void *data) {
    (void)qh; (void)msg; (void)data;
    static uint8_t out[MAX_PACKET + OPT_LEN];
    double start = now_us();
    struct nfqnl_msg_packet_hdr *ph = nfq_get_msg_packet_hdr(nfa);
    unsigned char *payload; int len = nfq_get_payload(nfa, &payload);
    if (!ph) return 0;
    received[0]++;
    size_t m = len > 0 ? mark(payload, (size_t)len, out) : 0;
    verdict(0, ntohl(ph->packet_id), m ? out : NULL, m);
    double took = now_us() - start;
    verdict_total_us += took; if (took > verdict_max_us) verdict_max_us = took;
    return 0;
}
static int on_order(struct nfq_q_handle *qh, struct nfgenmsg *msg, struct nfq_data *nfa, void *data) {
    (void)qh; (void)msg; (void)data;
    struct nfqnl_msg_packet_hdr *ph = nfq_get_msg_packet_hdr(nfa);
    unsigned char *payload; int len = nfq_get_payload(nfa, &payload);
    if (!ph) return 0;
    received[1]++;
    order_packet(ntohl(ph->packet_id), payload, len > 0 ? (size_t)len : 0, now_us());
    verdict_released();
    return 0;
}

static struct nfq_q_handle *bind_queue(struct nfq_handle *h, int num, nfq_callback *cb) {
    struct nfq_q_handle *q = nfq_create_queue(h, (uint16_t)num, cb, NULL);
    if (!q || nfq_set_mode(q, NFQNL_COPY_PACKET, 0xFFFF) < 0 || nfq_set_queue_maxlen(q, 4096) < 0
        || nfq_set_queue_flags(q, NFQA_CFG_F_FAIL_OPEN, NFQA_CFG_F_FAIL_OPEN) < 0) {
        fprintf(stderr, "lgkit: error: vertigo agent: cannot bind NFQUEUE %d: %s\n", num, strerror(errno));
        exit(1);
    }
    return q;
}

static int serve(int marking, int ordering, const char *stats) {
    struct nfq_handle *h = nfq_open();
    if (!h) { fprintf(stderr, "lgkit: error: vertigo agent: nfq_open: %s\n", strerror(errno)); return 1; }
    struct nfq_q_handle *qm = marking ? bind_queue(h, 0, on_mark) : NULL;
    struct nfq_q_handle *qo = ordering ? bind_queue(h, 1, on_order) : NULL;
    nfq_sock = nfq_fd(h);
    int size = 8 << 20;
    setsockopt(nfq_sock, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof size);
    signal(SIGTERM, on_signal); signal(SIGINT, on_signal);
    printf("{\"vertigo_agent\": \"ready\"}\n"); fflush(stdout);
    static char buf[1 << 17];
    double next_stats = 0;
    while (!stopping) {
        double due = next_deadline(), now = now_us();
        int wait_ms = 200;
        if (due >= 0) { double ms = (due - now) / 1000; wait_ms = ms < 0 ? 0 : ms < 200 ? (int)ms + 1 : 200; }
        struct pollfd p = {nfq_sock, POLLIN, 0};
        poll(&p, 1, wait_ms);
        for (;;) {
            ssize_t n = recv(nfq_sock, buf, sizeof buf, MSG_DONTWAIT);
            if (n < 0 && errno == ENOBUFS) { overflows++; continue; }
            if (n <= 0) break;
            nfq_handle_packet(h, buf, (int)n);
        }
        expire(now_us());
        verdict_released();
        batch_flush();
        if (now_us() >= next_stats) { save_stats(stats, marking, ordering); next_stats = now_us() + 1e6; }
    }
    flush(); verdict_released(); batch_flush();
    save_stats(stats, marking, ordering);
    if (qm) nfq_destroy_queue(qm);
    if (qo) nfq_destroy_queue(qo);
    nfq_close(h);
    return 0;
}

static void ports(const char *text, int *set) {
    for (const char *p = text; *p;) {
        long v = strtol(p, (char **)&p, 10);
        if (v > 0 && v < 65536) set[v] = 1;
        if (*p) p++;
    }
}

int main(int argc, char **argv) {
    int marking = 1, ordering = 1, replaying = 0;
    const char *stats = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--replay")) replaying = 1;
        else if (!strcmp(a, "--no-mark")) marking = 0;
        else if (!strcmp(a, "--no-order")) ordering = 0;
        else if (v && !strcmp(a, "--framed-ports")) { ports(v, framed_ports); i++; }
        else if (v && !strcmp(a, "--framed-source-ports")) { ports(v, framed_source_ports); i++; }
        else if (v && !strcmp(a, "--tau-us")) { tau_us = strtod(v, NULL); i++; }
        else if (v && !strcmp(a, "--stats")) { stats = v; i++; }
        else { fprintf(stderr, "lgkit: error: vertigo agent: unknown argument %s\n", a); return 1; }
    }
    map_init(&conns); map_init(&flows); map_init(&done);
    return replaying ? replay() : serve(marking, ordering, stats);
}
