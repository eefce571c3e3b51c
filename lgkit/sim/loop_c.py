"""The C source of the native virtual-time event loop (native_loop.py drives it): an event heap
in (time, insertion) order, switches on a device seam, their traffic managers, link directions
with rate, delay and loss drawn from Python's Mersenne Twister, a line-rate source and sinks."""

SOURCE = r"""
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef uint64_t u64;
#define PS 1000000000000ULL
#define MAXPORT 512
#define MAXPRIO 8
#define INPUT_CAP 1024
#define SERVE_BATCH 64

/* ---- Python's random.Random: MT19937 and random() (genrand_res53) ----------------------- */
typedef struct { uint32_t mt[624]; int i; } mt_t;
static uint32_t mt_next(mt_t *m) {
    if (m->i >= 624) {
        for (int k = 0; k < 624; k++) {
            uint32_t y = (m->mt[k] & 0x80000000U) | (m->mt[(k + 1) % 624] & 0x7fffffffU);
            m->mt[k] = m->mt[(k + 397) % 624] ^ (y >> 1) ^ ((y & 1U) ? 0x9908b0dfU : 0U);
        }
        m->i = 0;
    }
    uint32_t y = m->mt[m->i++];
    y ^= y >> 11; y ^= (y << 7) & 0x9d2c5680U; y ^= (y << 15) & 0xefc60000U; y ^= y >> 18;
    return y;
}
static double mt_random(mt_t *m) {
    uint32_t a = mt_next(m) >> 5, b = mt_next(m) >> 6;
    return (a * 67108864.0 + b) * (1.0 / 9007199254740992.0);
}

/* ---- the device seam: the generated program's passes (engine.py's lg_* functions) -------- */
typedef long (*ingress_fn)(void *, uint32_t, const uint8_t *, uint32_t, u64);
typedef long (*egress_fn)(void *, const uint8_t *, const uint8_t *, uint32_t, u64, u64, u64,
                          u64, u64, u64, u64, uint8_t *);
typedef void (*save_fn)(void *);

typedef struct { uint32_t len; uint8_t d[]; } frame_t;
typedef struct job { struct job *next; frame_t *in; u64 enq_ns; uint32_t enq_depth, port;
                     u64 state[]; } job_t;
typedef struct { job_t *head, *tail; uint32_t n, depth; } queue_t;
typedef struct { queue_t q[MAXPRIO]; u64 rate, framing, min_frame, tat_ps, wake_at;
                 int waking, busy, queued, used; } port_t;

enum { N_SWITCH = 0, N_HOST = 1 };
typedef struct { int kind, node, port; } end_t;
typedef struct { u64 rate, delay, framing, min_frame, tat_ps, sent, lost; int loss;
                 double p1, p2; int bad; mt_t rng; end_t to; } dir_t;

typedef struct {
    void *ctx; ingress_fn ingress; egress_fn egress; save_fn save; u64 *slots;
    uint32_t words, rq, prio_slot, max_hdr, nprio;
    u64 in_lat, eg_lat; int pending;
    int tx[MAXPORT];           /* the link direction each port sends on (-1: none) */
    port_t *ports[MAXPORT];
    u64 stats[8];              /* ingress passes, egress passes, ingress drops, egress drops,
                                  queue full, input queue full, frames sent, no such port */
    uint8_t *out; uint32_t out_size;
} switch_t;

typedef struct { u64 received, duplicates, out_of_order, last, in_window, w0, w1;
                 uint32_t id_offset; uint8_t *seen; u64 nseen; u64 *log; u64 nlog, maxlog; } host_t;

typedef struct { int sw, port; u64 rate, framing, next_ps, emitted, left, next_id;
                 uint32_t len, id_offset; uint8_t *tmpl; } source_t;

enum { E_EMIT, E_AFTER_INGRESS, E_WAKE, E_TRANSMIT, E_DELIVER };
typedef struct { u64 t, seq; int kind, a, b; void *p; } ev_t;

typedef struct {
    ev_t *heap; u64 nheap, cap, seq, now, events; int status;
    switch_t *sw[8]; int nsw; host_t *host[8]; int nhost; dir_t *dir[32]; int ndir;
    source_t src; int has_src;
} net_t;

enum { OK = 0, E_REQUESTS = 1, E_MEMORY = 2, E_EMPTY = 3 };

static void push(net_t *n, u64 t, int kind, int a, int b, void *p) {
    if (n->nheap == n->cap) {
        u64 cap = n->cap ? 2 * n->cap : 1024;
        ev_t *h = realloc(n->heap, cap * sizeof *h);
        if (!h) { n->status = E_MEMORY; return; }
        n->heap = h; n->cap = cap;
    }
    ev_t e = {t, n->seq++, kind, a, b, p};
    u64 i = n->nheap++;
    while (i) {
        u64 up = (i - 1) / 2; ev_t *u = &n->heap[up];
        if (u->t < t || (u->t == t && u->seq < e.seq)) break;
        n->heap[i] = *u; i = up;
    }
    n->heap[i] = e;
}
static ev_t pop(net_t *n) {
    ev_t top = n->heap[0], last = n->heap[--n->nheap];
    u64 i = 0, m = n->nheap;
    for (;;) {
        u64 c = 2 * i + 1;
        if (c >= m) break;
        if (c + 1 < m && (n->heap[c + 1].t < n->heap[c].t ||
            (n->heap[c + 1].t == n->heap[c].t && n->heap[c + 1].seq < n->heap[c].seq))) c++;
        if (last.t < n->heap[c].t || (last.t == n->heap[c].t && last.seq < n->heap[c].seq)) break;
        n->heap[i] = n->heap[c]; i = c;
    }
    if (m) n->heap[i] = last;
    return top;
}

static frame_t *frame_new(const uint8_t *d, uint32_t len) {
    frame_t *f = malloc(sizeof *f + len);
    if (f) { f->len = len; memcpy(f->d, d, len); }
    return f;
}
static u64 ceil_div(u64 a, u64 b) { return (a + b - 1) / b; }
static u64 wire_start_ps(u64 now_ns, u64 tat_ps, u64 ready_ns) {
    u64 now_ps = now_ns * 1000;
    if (tat_ps + 1000 > now_ps) return tat_ps;
    (void)ready_ns;            /* late tolerance 0: never late in virtual time */
    return now_ps;
}

/* ---- link directions -------------------------------------------------------------------- */
static int lost(dir_t *d) {
    if (d->loss == 1) return mt_random(&d->rng) < d->p1;
    if (d->loss == 2) {        /* Gilbert-Elliott, every frame of a bad spell lost */
        d->bad = d->bad ? mt_random(&d->rng) >= d->p2 : mt_random(&d->rng) < d->p1;
        return mt_random(&d->rng) < (d->bad ? 1.0 : 0.0);
    }
    return 0;
}
static void link_send(net_t *n, int di, frame_t *f) {
    dir_t *d = n->dir[di];
    u64 start = wire_start_ps(n->now, d->tat_ps, 0);
    u64 len = f->len > d->min_frame ? f->len : d->min_frame;
    d->tat_ps = start + (len + d->framing) * 8 * PS / d->rate;
    d->sent++;
    u64 arrival = ceil_div(d->tat_ps, 1000) + d->delay;
    if (lost(d)) { d->lost++; free(f); return; }
    push(n, arrival, E_DELIVER, di, 0, f);
}

/* ---- hosts -------------------------------------------------------------------------------- */
static void host_receive(net_t *n, host_t *h, frame_t *f) {
    h->received++;
    if (f->len >= h->id_offset + 4) {
        const uint8_t *p = f->d + h->id_offset;
        u64 pid = (u64)p[0] << 24 | (u64)p[1] << 16 | (u64)p[2] << 8 | p[3];
        if (h->nlog < h->maxlog) { h->log[2 * h->nlog] = n->now; h->log[2 * h->nlog + 1] = pid;
                                   h->nlog++; }
        if (pid < h->nseen) {
            if (h->seen[pid]) h->duplicates++;
            else {
                h->seen[pid] = 1;
                if ((long long)pid < (long long)h->last) h->out_of_order++;
                h->last = pid;
                if (h->w0 <= n->now && n->now <= h->w1) h->in_window++;
            }
        }
    }
    free(f);
}

/* ---- switches: ingress, the traffic manager, egress ------------------------------------- */
static port_t *tm_port(switch_t *s, uint32_t p) {
    if (!s->ports[p]) {
        port_t *q = calloc(1, sizeof *q);
        if (!q) return 0;
        for (int i = 0; i < MAXPRIO; i++) q->q[i].depth = 64;
        s->ports[p] = q;
    }
    return s->ports[p];
}
static void serve(net_t *n, int si, uint32_t port);
static void wake(net_t *n, int si, uint32_t port, port_t *st, u64 t) {
    if (st->waking && st->wake_at <= t) return;
    st->waking = 1; st->wake_at = t;
    push(n, t, E_WAKE, si, (int)port, (void *)(uintptr_t)t);
}

static uint32_t egress_pass(net_t *n, int si, job_t *j, u64 enq_depth, u64 deq_depth) {
    switch_t *s = n->sw[si];
    s->stats[1]++;
    uint32_t need = j->in->len + s->max_hdr;
    if (need > s->out_size) {
        uint8_t *o = realloc(s->out, need);
        if (!o) { n->status = E_MEMORY; return 0; }
        s->out = o; s->out_size = need;
    }
    u64 now = n->now;
    long len = s->egress(s->ctx, (const uint8_t *)j->state, j->in->d, j->in->len, j->port, 0,
                         now / 1000, enq_depth, deq_depth, j->enq_ns / 1000,
                         (now - j->enq_ns) / 1000, s->out);
    u64 *rq = s->slots + s->rq;
    if (rq[0] || rq[3]) { n->status = E_REQUESTS; return 0; }   /* a clone or recirculation */
    if (len < 0) { s->stats[3]++; return 0; }
    if (rq[5] && rq[6] < (u64)len) len = (long)rq[6];
    frame_t *f = frame_new(s->out, (uint32_t)len);
    if (!f) { n->status = E_MEMORY; return 0; }
    push(n, now + s->eg_lat, E_TRANSMIT, si, (int)j->port, f);
    return (uint32_t)len;
}

static void serve(net_t *n, int si, uint32_t port) {
    switch_t *s = n->sw[si];
    port_t *st = s->ports[port];
    st->busy = 1;
    for (int k = 0; k < SERVE_BATCH; k++) {
        u64 now = n->now;
        if (st->rate && st->tat_ps > now * 1000) {
            wake(n, si, port, st, ceil_div(st->tat_ps, 1000)); st->busy = 0; return;
        }
        queue_t *q = 0;
        for (int i = (int)s->nprio - 1; i >= 0; i--)
            if (st->q[i].n) { q = &st->q[i]; break; }
        if (!q) { st->busy = 0; return; }
        job_t *j = q->head;
        q->head = j->next; if (!q->head) q->tail = 0;
        q->n--; st->queued--;
        uint32_t sent = egress_pass(n, si, j, j->enq_depth, q->n);
        if (st->rate && sent) {
            u64 len = sent > st->min_frame ? sent : st->min_frame;
            st->tat_ps = wire_start_ps(now, st->tat_ps, j->enq_ns)
                         + (len + st->framing) * 8 * PS / st->rate;
        }
        free(j->in); free(j);
        if (n->status) { st->busy = 0; return; }
    }
    st->busy = 0;
    wake(n, si, port, st, n->now);
}

static void enqueue(net_t *n, int si, job_t *j, uint32_t prio) {
    switch_t *s = n->sw[si];
    port_t *st = tm_port(s, j->port);
    if (!st) { n->status = E_MEMORY; return; }
    if (prio >= s->nprio) { free(j->in); free(j); return; }
    queue_t *q = &st->q[prio];
    uint32_t port = j->port;
    if (!(st->queued || st->busy || st->rate)) {   /* an idle, unshaped port: at once */
        if (!q->depth) { s->stats[4]++; free(j->in); free(j); return; }
        j->enq_ns = n->now;
        st->busy = 1;
        egress_pass(n, si, j, 0, 0);
        st->busy = 0;
        free(j->in); free(j);
        if (st->queued) serve(n, si, port);
        return;
    }
    if (q->n >= q->depth) { s->stats[4]++; free(j->in); free(j); return; }
    j->enq_ns = n->now; j->enq_depth = q->n; j->next = 0;
    if (q->tail) q->tail->next = j; else q->head = j;
    q->tail = j; q->n++; st->queued++;
    if (!st->busy) serve(n, si, port);
}

static void switch_receive(net_t *n, int si, uint32_t port, frame_t *f) {
    switch_t *s = n->sw[si];
    if (s->pending >= INPUT_CAP) { s->stats[5]++; free(f); return; }
    s->pending++;
    s->stats[0]++;
    long spec = s->ingress(s->ctx, port, f->d, f->len, n->now / 1000);
    if (spec == -3) { n->status = E_REQUESTS; free(f); return; }
    job_t *j = 0;
    if (spec >= 0) {
        s->save(s->ctx);
        j = malloc(sizeof *j + s->words * 8);
        if (!j) { n->status = E_MEMORY; free(f); return; }
        memcpy(j->state, s->slots, s->words * 8);
        j->in = f; j->port = (uint32_t)spec; j->enq_depth = 0;
    } else {
        s->stats[2]++;
        free(f);
    }
    push(n, n->now + s->in_lat, E_AFTER_INGRESS, si, 0, j);
}

static void after_ingress(net_t *n, int si, job_t *j) {
    switch_t *s = n->sw[si];
    s->pending--;
    if (!j) return;
    uint32_t prio = s->prio_slot < s->words ? (uint32_t)j->state[s->prio_slot] : 0;
    enqueue(n, si, j, prio);
}

static void transmit(net_t *n, int si, uint32_t port, frame_t *f) {
    switch_t *s = n->sw[si];
    if (s->tx[port] < 0) { s->stats[7]++; free(f); return; }
    s->stats[6]++;
    link_send(n, s->tx[port], f);
}

static void deliver(net_t *n, int di, frame_t *f) {
    end_t to = n->dir[di]->to;
    if (to.kind == N_HOST) host_receive(n, n->host[to.node], f);
    else switch_receive(n, to.node, (uint32_t)to.port, f);
}

/* ---- the source: a line-rate packet generator into a switch port ------------------------ */
static void source_schedule(net_t *n) {
    source_t *g = &n->src;
    if (!g->left) return;
    u64 at = ceil_div(g->next_ps, 1000);
    g->next_ps += (g->len + g->framing) * 8 * PS / g->rate;
    push(n, at, E_EMIT, 0, 0, 0);
}
static void source_emit(net_t *n) {
    source_t *g = &n->src;
    frame_t *f = frame_new(g->tmpl, g->len);
    if (!f) { n->status = E_MEMORY; return; }
    uint8_t *p = f->d + g->id_offset; u64 id = g->next_id++;
    p[0] = id >> 24; p[1] = id >> 16; p[2] = id >> 8; p[3] = id;
    g->emitted++; g->left--;
    switch_receive(n, g->sw, (uint32_t)g->port, f);
    source_schedule(n);
}

/* ---- the API ------------------------------------------------------------------------------- */
net_t *ns_new(void) { return calloc(1, sizeof(net_t)); }

int ns_switch(net_t *n, void *ctx, void *ingress, void *egress, void *save, u64 *slots,
              uint32_t words, uint32_t rq, uint32_t prio_slot, uint32_t max_hdr, uint32_t nprio,
              u64 in_lat, u64 eg_lat) {
    if (n->nsw == 8 || nprio < 1 || nprio > MAXPRIO) return -1;
    switch_t *s = calloc(1, sizeof *s);
    if (!s) return -1;
    s->ctx = ctx; s->ingress = (ingress_fn)ingress; s->egress = (egress_fn)egress;
    s->save = (save_fn)save; s->slots = slots; s->words = words; s->rq = rq;
    s->prio_slot = prio_slot; s->max_hdr = max_hdr; s->nprio = nprio;
    s->in_lat = in_lat; s->eg_lat = eg_lat;
    for (int i = 0; i < MAXPORT; i++) s->tx[i] = -1;
    n->sw[n->nsw] = s;
    return n->nsw++;
}

int ns_host(net_t *n, uint32_t id_offset, u64 nseen, u64 maxlog, u64 w0, u64 w1) {
    if (n->nhost == 8) return -1;
    host_t *h = calloc(1, sizeof *h);
    if (!h) return -1;
    h->id_offset = id_offset; h->nseen = nseen; h->maxlog = maxlog; h->w0 = w0; h->w1 = w1;
    h->last = (u64)-1;
    h->seen = calloc(nseen ? nseen : 1, 1);
    h->log = calloc(maxlog ? 2 * maxlog : 1, 8);
    if (!h->seen || !h->log) return -1;
    n->host[n->nhost] = h;
    return n->nhost++;
}

/* One link direction from switch `sw` port `port` to (kind, node, to_port); loss: 0 none,
   1 i.i.d. (p1), 2 Gilbert-Elliott (p1 good->bad, p2 bad->good); `mt` the 624 words of its
   generator and `index` its position (random.Random.getstate()). */
int ns_link(net_t *n, int sw, int port, int kind, int node, int to_port, u64 rate, u64 delay,
            u64 framing, u64 min_frame, int loss, double p1, double p2, const uint32_t *mt,
            int index) {
    if (n->ndir == 32 || sw >= n->nsw || port < 0 || port >= MAXPORT || !rate) return -1;
    dir_t *d = calloc(1, sizeof *d);
    if (!d) return -1;
    d->rate = rate; d->delay = delay; d->framing = framing; d->min_frame = min_frame;
    d->loss = loss; d->p1 = p1; d->p2 = p2;
    memcpy(d->rng.mt, mt, sizeof d->rng.mt); d->rng.i = index;
    d->to.kind = kind; d->to.node = node; d->to.port = to_port;
    n->dir[n->ndir] = d;
    switch_t *s = n->sw[sw];
    s->tx[port] = n->ndir;
    port_t *st = tm_port(s, (uint32_t)port);
    if (!st) return -1;
    st->rate = rate; st->framing = framing; st->min_frame = min_frame;
    return n->ndir++;
}

int ns_queue_depth(net_t *n, int sw, int port, uint32_t depth) {
    port_t *st = tm_port(n->sw[sw], (uint32_t)port);
    if (!st) return -1;
    for (int i = 0; i < MAXPRIO; i++) st->q[i].depth = depth;
    return 0;
}

void ns_source(net_t *n, int sw, int port, u64 rate, u64 framing, const uint8_t *tmpl,
               uint32_t len, uint32_t id_offset, u64 first_id, u64 count, u64 start_ns) {
    source_t *g = &n->src;
    g->sw = sw; g->port = port; g->rate = rate; g->framing = framing;
    g->tmpl = malloc(len); memcpy(g->tmpl, tmpl, len); g->len = len; g->id_offset = id_offset;
    g->next_id = first_id; g->left = count; g->next_ps = start_ns * 1000;
    source_schedule(n);
}

/* Run every event up to and including `until_ns`: 0, or why it stopped (E_*). */
int ns_run(net_t *n, u64 until_ns) {
    while (n->nheap && n->heap[0].t <= until_ns && !n->status) {
        ev_t e = pop(n);
        n->now = e.t;
        n->events++;
        switch (e.kind) {
        case E_EMIT: source_emit(n); break;
        case E_AFTER_INGRESS: after_ingress(n, e.a, e.p); break;
        case E_WAKE: {
            port_t *st = n->sw[e.a]->ports[e.b];
            if (st->waking && st->wake_at == (u64)(uintptr_t)e.p) {
                st->waking = 0; serve(n, e.a, (uint32_t)e.b);
            }
            break;
        }
        case E_TRANSMIT: transmit(n, e.a, (uint32_t)e.b, e.p); break;
        case E_DELIVER: deliver(n, e.a, e.p); break;
        }
    }
    if (!n->status && until_ns > n->now) n->now = until_ns;
    return n->status;
}

u64 ns_now(net_t *n) { return n->now; }
u64 ns_events(net_t *n) { return n->events; }
u64 ns_emitted(net_t *n) { return n->src.emitted; }
u64 *ns_switch_stats(net_t *n, int sw) { return n->sw[sw]->stats; }
void ns_dir_stats(net_t *n, int d, u64 *out) {
    out[0] = n->dir[d]->sent; out[1] = n->dir[d]->lost; out[2] = (u64)n->dir[d]->bad;
}
/* The generator state of a direction back (624 words and the index). */
int ns_dir_rng(net_t *n, int d, uint32_t *mt) {
    memcpy(mt, n->dir[d]->rng.mt, sizeof n->dir[d]->rng.mt);
    return n->dir[d]->rng.i;
}
/* A host's counters: received, duplicates, out of order, in window, logged arrivals. */
void ns_host_stats(net_t *n, int h, u64 *out) {
    host_t *x = n->host[h];
    out[0] = x->received; out[1] = x->duplicates; out[2] = x->out_of_order;
    out[3] = x->in_window; out[4] = x->nlog;
}
u64 *ns_host_log(net_t *n, int h) { return n->host[h]->log; }
uint8_t *ns_host_seen(net_t *n, int h) { return n->host[h]->seen; }

void ns_free(net_t *n) {
    for (u64 i = 0; i < n->nheap; i++) {
        ev_t *e = &n->heap[i];
        if (e->kind == E_AFTER_INGRESS && e->p) { job_t *j = e->p; free(j->in); free(j); }
        else if (e->kind == E_TRANSMIT || e->kind == E_DELIVER) free(e->p);
    }
    free(n->heap);
    for (int i = 0; i < n->nsw; i++) {
        switch_t *s = n->sw[i];
        for (int p = 0; p < MAXPORT; p++) {
            port_t *st = s->ports[p];
            if (!st) continue;
            for (int q = 0; q < MAXPRIO; q++)
                for (job_t *j = st->q[q].head, *nx; j; j = nx) { nx = j->next; free(j->in); free(j); }
            free(st);
        }
        free(s->out); free(s);
    }
    for (int i = 0; i < n->nhost; i++) { free(n->host[i]->seen); free(n->host[i]->log);
                                         free(n->host[i]); }
    for (int i = 0; i < n->ndir; i++) free(n->dir[i]);
    free(n->src.tmpl);
    free(n);
}
"""
