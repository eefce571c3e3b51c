"""The C source of the native virtual-time event loop (native_loop.py drives it): an event heap
in (time, insertion) order, switches on a device seam, their traffic managers, link directions
with rate, delay and loss drawn from Python's Mersenne Twister, a line-rate source and sinks;
the switches' jobs and traffic managers are jobs_c.py's and tm_c.py's (shared with the port
loop)."""

from lgkit.sw.exec.native.jobs_c import JOBS
from lgkit.sw.exec.native.tm_c import TM

_SOURCE = r"""
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef uint64_t u64;
#define PS TM_PS
#define MAXPORT 512
#define INPUT_CAP 1024

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

JOBS_AND_TM
enum { N_SWITCH = 0, N_HOST = 1 };
typedef struct { int kind, node, port; } end_t;
typedef struct { u64 rate, delay, framing, min_frame, tat_ps, sent, lost; int loss;
                 double p1, p2; int bad; mt_t rng; end_t to;
                 /* TruncatedGaps around the model (max_gap 0: none) */
                 u64 max_gap, skipped, cut, cuts_n; long long quiet; int cutting;
                 u64 *cuts; u64 cuts_cap; } dir_t;

enum { ST_INGRESS, ST_RECIRC, ST_EGRESS, ST_IN_DROP, ST_EG_DROP, ST_QUEUE_FULL, ST_INPUT_FULL,
       ST_SENT, ST_NO_PORT, ST_RECIRC_FULL, ST_RECIRCULATIONS, ST_LANE_RECIRC, ST_BAD_PRIO,
       NSTATS };

struct net;
typedef struct {
    pipe_t p; tm_t tm;         /* the program's jobs and the traffic manager (tm.owner: this) */
    struct net *net; int index;
    u64 in_lat, eg_lat, rc_lat, cl_lat; int pending, rpending;
    int tx[MAXPORT];           /* the link direction each port sends on (-1: none) */
    u64 stats[NSTATS];
    uint8_t *out; uint32_t out_size;
} switch_t;
typedef struct { u64 received, uniq, duplicates, out_of_order, last, in_window, w0, w1;
                 uint32_t id_offset; uint8_t *seen; u64 nseen; u64 *log; u64 nlog, maxlog; } host_t;

/* A line-rate source of test frames: one template per size, the size of each frame drawn as
   random.Random.choices draws it (cumulative weights) when there are several. */
typedef struct { int sw, port; u64 rate, framing, next_ps, emitted, left, next_id, period_ps;
                 uint32_t id_offset, nsizes, cur; uint32_t *lens; uint8_t **tmpls;
                 double *cum; mt_t rng; } source_t;

enum { E_EMIT, E_AFTER_INGRESS, E_WAKE, E_TRANSMIT, E_DELIVER, E_CLONE, E_RECIRC, E_TICK,
       E_MARK, E_LOSSES };
struct stress;
#define ID_AT 42   /* Ethernet + IPv4 + UDP: a test frame's id (frames.py's ID_OFFSET) */
static u64 rd32(const uint8_t *p) {
    return (u64)p[0] << 24 | (u64)p[1] << 16 | (u64)p[2] << 8 | p[3];
}
typedef struct { u64 t, seq; int kind, a, b; void *p; } ev_t;

typedef struct net {
    ev_t *heap; u64 nheap, cap, seq, now, events; int status;
    switch_t *sw[8]; int nsw; host_t *host[8]; int nhost; dir_t *dir[32]; int ndir;
    source_t src; int has_src; struct stress *ss;
} net_t;

enum { OK = 0, E_REQUESTS = JOB_E_REQUESTS, E_MEMORY = JOB_E_MEMORY, E_EMPTY = 3 };

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

/* ---- link directions -------------------------------------------------------------------- */
static int model_lost(dir_t *d);
/* TruncatedGaps.lost: the model's loss-free runs longer than max_gap cut to max_gap. */
static int lost(dir_t *d) {
    if (!d->max_gap || !d->loss) return model_lost(d);
    if (d->quiet < 0) {
        u64 gap = 0;
        while (!model_lost(d)) gap++;
        d->cut = gap > d->max_gap ? gap - d->max_gap : 0;
        d->cutting = d->cut > 0;
        d->quiet = (long long)(gap - d->cut);
    }
    if (d->quiet == 0) {
        d->quiet = -1;
        if (d->cut) {
            d->skipped += d->cut;
            if (d->cuts_n == d->cuts_cap) {
                u64 cap = d->cuts_cap ? 2 * d->cuts_cap : 256;
                u64 *p = realloc(d->cuts, cap * 8);
                if (p) { d->cuts = p; d->cuts_cap = cap; }
            }
            if (d->cuts_n < d->cuts_cap) d->cuts[d->cuts_n++] = d->cut;
        }
        return 1;
    }
    d->quiet--;
    return 0;
}
static int model_lost(dir_t *d) {
    if (d->loss == 1) return mt_random(&d->rng) < d->p1;
    if (d->loss == 2) {        /* Gilbert-Elliott, every frame of a bad spell lost */
        d->bad = d->bad ? mt_random(&d->rng) >= d->p2 : mt_random(&d->rng) < d->p1;
        return mt_random(&d->rng) < (d->bad ? 1.0 : 0.0);
    }
    return 0;
}
static void stress_tap(net_t *n, int di, const frame_t *f, int lost, u64 arrival);
static void link_send(net_t *n, int di, frame_t *f) {
    dir_t *d = n->dir[di];
    u64 start = wire_start_ps(n->now, d->tat_ps, 0, 0);   /* never late in virtual time */
    u64 len = f->len > d->min_frame ? f->len : d->min_frame;
    d->tat_ps = start + (len + d->framing) * 8 * PS / d->rate;
    d->sent++;
    u64 arrival = tm_ceil(d->tat_ps, 1000) + d->delay;
    int l = lost(d);
    if (n->ss) stress_tap(n, di, f, l, arrival);
    if (l) { d->lost++; unref(f); return; }
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
                h->seen[pid] = 1; h->uniq++;
                if ((long long)pid < (long long)h->last) h->out_of_order++;
                h->last = pid;
                if (h->w0 <= n->now && n->now <= h->w1) h->in_window++;
            }
        }
    }
    unref(f);
}

/* ---- switches: ingress, the jobs of a pass (jobs_c), the traffic manager (tm_c), egress -- */
static void tm_timer(tm_t *tm, port_t *st, u64 t) {
    switch_t *s = tm->owner;
    push(s->net, t, E_WAKE, s->index, 0, st);
}

/* Back to ingress after the recirculation latency and the serialization at the port's (or its
   clone lane's) rate (Switch._recirculate). */
static void recirculate(net_t *n, int si, job_t *j, rjob_t *r) {
    switch_t *s = n->sw[si];
    int from_lane = s->tm.lanes[j->port] && (j->itype == IT_I2E || j->itype == IT_E2E);
    if (s->rpending >= INPUT_CAP) { s->stats[ST_RECIRC_FULL]++; unref(r->in); free(r); return; }
    s->rpending++; s->stats[ST_RECIRCULATIONS]++;
    if (from_lane) s->stats[ST_LANE_RECIRC]++;
    port_t *st = from_lane ? s->tm.lanes[j->port] : s->tm.ports[j->port];
    u64 wire = st && st->rate ? tm_ceil(wire_ps(st, r->in->len), 1000) : 0;
    push(n, n->now + s->rc_lat + wire, E_RECIRC, si, 0, r);
}

static void to_queue(net_t *n, int si, job_t *j) {
    switch_t *s = n->sw[si];
    if (s->cl_lat && (j->itype == IT_I2E || j->itype == IT_E2E))
        push(n, n->now + s->cl_lat, E_CLONE, si, 0, j);
    else tm_enqueue(&s->tm, j, n->now);
}

/* The egress pass of a dequeued job: the bytes put on the wire or looped back (0: none). */
static uint32_t tm_egress(tm_t *tm, job_t *j, u64 now, u64 enq_depth, u64 deq_depth) {
    switch_t *s = tm->owner;
    net_t *n = s->net;
    int si = s->index;
    pipe_t *p = &s->p;
    s->stats[ST_EGRESS]++;
    uint32_t need = j->in->len + p->max_hdr;
    if (need > s->out_size) {
        uint8_t *o = realloc(s->out, need);
        if (!o) { n->status = E_MEMORY; return 0; }
        s->out = o; s->out_size = need;
    }
    job_t *made;
    int recirc;
    long len = egress_job(p, j, now, enq_depth, deq_depth, s->out, &made, &recirc);
    frame_t *f = len >= 0 ? frame_new(s->out, (uint32_t)len) : 0;
    if (len >= 0 && !f) n->status = E_MEMORY;
    /* the field list's values before a clone's pass overwrites the slots */
    rjob_t *r = recirc && f ? recirc_job(p, f) : 0;
    for (job_t *c = made, *nx; c; c = nx) {   /* the clones first, as Switch._egress_pass */
        nx = c->next; c->next = 0;
        if (n->status) job_free(c); else to_queue(n, si, c);
    }
    if (len < 0) { s->stats[ST_EG_DROP]++; return 0; }
    if (!f) return 0;
    if (recirc) { if (r) recirculate(n, si, j, r); else unref(f); }
    else push(n, now + s->eg_lat, E_TRANSMIT, si, (int)j->port, f);
    return (uint32_t)len;
}

/* An ingress pass (new: a frame from a port; else a recirculated job), its jobs after the
   ingress latency. */
static void ingress(net_t *n, int si, long spec, frame_t *f, int fresh) {
    switch_t *s = n->sw[si];
    int drops;
    job_t *jobs = ingress_jobs(&s->p, spec, f, &drops, 0);
    if (drops) s->stats[ST_IN_DROP]++;
    unref(f);
    push(n, n->now + s->in_lat, E_AFTER_INGRESS, si, fresh, jobs);
}

static void switch_receive(net_t *n, int si, uint32_t port, frame_t *f) {
    switch_t *s = n->sw[si];
    if (s->pending >= INPUT_CAP) { s->stats[ST_INPUT_FULL]++; unref(f); return; }
    s->pending++;
    s->stats[ST_INGRESS]++;
    ingress(n, si, s->p.ingress(s->p.ctx, port, f->d, f->len, n->now / 1000), f, 1);
}

static void recirc_ingress(net_t *n, int si, rjob_t *r) {
    switch_t *s = n->sw[si];
    s->rpending--;
    s->stats[ST_RECIRC]++;
    long spec = s->p.ingress_job(s->p.ctx, r->in->d, r->in->len, n->now / 1000, r->itype,
                                 r->pre, r->npre);
    frame_t *f = r->in;
    free(r);
    ingress(n, si, spec, f, 0);
}

static void after_ingress(net_t *n, int si, job_t *jobs, int fresh) {
    if (fresh) n->sw[si]->pending--;
    for (job_t *j = jobs, *nx; j; j = nx) {
        nx = j->next; j->next = 0;
        if (n->status) job_free(j); else to_queue(n, si, j);
    }
}

static void transmit(net_t *n, int si, uint32_t port, frame_t *f) {
    switch_t *s = n->sw[si];
    if (s->tx[port] < 0) { s->stats[ST_NO_PORT]++; unref(f); return; }
    s->stats[ST_SENT]++;
    link_send(n, s->tx[port], f);
}

static void after_backward(net_t *n, int di);
static void deliver(net_t *n, int di, frame_t *f) {
    end_t to = n->dir[di]->to;
    if (to.kind == N_HOST) host_receive(n, n->host[to.node], f);
    else switch_receive(n, to.node, (uint32_t)to.port, f);
    if (n->ss) after_backward(n, di);
}

/* ---- the source: a line-rate packet generator into a switch port ------------------------ */
static void mark(net_t *n, int which);
static void offer(net_t *n, frame_t *f);
static int source_done(net_t *n);
static void source_schedule(net_t *n) {
    source_t *g = &n->src;
    if (!g->left || (n->ss && source_done(n))) { if (n->ss) mark(n, 2); return; }
    g->cur = 0;
    if (g->nsizes > 1) {   /* bisect_right(cum, random() * total, 0, n - 1) */
        double u = mt_random(&g->rng) * g->cum[g->nsizes - 1];
        while (g->cur < g->nsizes - 1 && !(u < g->cum[g->cur])) g->cur++;
    }
    u64 at = tm_ceil(g->next_ps, 1000);
    g->next_ps += g->period_ps ? g->period_ps
                               : (g->lens[g->cur] + g->framing) * 8 * PS / g->rate;
    push(n, at, E_EMIT, 0, 0, 0);
}
static void source_emit(net_t *n) {
    source_t *g = &n->src;
    frame_t *f = frame_new(g->tmpls[g->cur], g->lens[g->cur]);
    if (!f) { n->status = E_MEMORY; return; }
    uint8_t *p = f->d + g->id_offset; u64 id = g->next_id++;
    p[0] = id >> 24; p[1] = id >> 16; p[2] = id >> 8; p[3] = id;
    g->emitted++; g->left--;
    if (n->ss) offer(n, f); else switch_receive(n, g->sw, (uint32_t)g->port, f);
    source_schedule(n);
}

/* ---- the stress test's harness (stress.py): the paused queue, the wire and resume meters,
   the buffer sampler, the marks -------------------------------------------------------------- */
enum { K_DATA, K_PLAIN, K_RETX, K_DUMMY, K_CONTROL, NKINDS };
#define SEQ_SPACE (1LL << 17)
#define ABSENT INT64_MIN
typedef struct { u64 *v; u64 n, cap; } vec_t;
static int vec_add(vec_t *x, u64 v) {
    if (x->n == x->cap) {
        u64 cap = x->cap ? 2 * x->cap : 1024;
        u64 *p = realloc(x->v, cap * 8);
        if (!p) return -1;
        x->v = p; x->cap = cap;
    }
    x->v[x->n++] = v;
    return 0;
}
struct stress {
    int s1, s2, fwd, bwd, sink; uint32_t host_port, link_port, prio, recirc;
    /* the paused queue */
    vec_t backlog; u64 bl_head, bytes, limit, drops, keep, ingress_ns; vec_t entered;
    u64 en_head; const u64 *paused;
    /* the wire meter */
    uint8_t *originals; u64 capacity, count_from, sent[NKINDS], lost[NKINDS], run;
    int sent_order[NKINDS], lost_order[NKINDS], nsent_order, nlost_order;
    vec_t bursts; long long expected; int64_t *detected; u64 det_cap, ndetected; vec_t retx;
    /* the resume meter */
    u64 egress_ns, link_delay_ns; int has_since; int64_t since; vec_t flights;
    /* the sampler and the marks */
    u64 sample_ns, start; vec_t samples; u64 marks[3][4]; int marked[3]; u64 in_window;
    u64 warm_end; int loss; double p1, p2; u64 max_gap, warmup, frames;
    /* SteadyWindows (with max_gap) */
    u64 settle, st_ns, st_frames, st_recirc[2], st_data; long long since_loss; int st_cut;
    int has_start; u64 start_snap[3]; vec_t windows; int losses_on;
};

static int kind_of(const frame_t *f, u64 *seq, int *has_seq, u64 *pid, int *has_pid) {
    const uint8_t *d = f->d;
    *has_seq = *has_pid = 0;
    if (!(d[12] == 0xab && d[13] == 0xcd)) {
        if (f->len >= ID_AT + 4) { *pid = rd32(d + ID_AT); *has_pid = 1; }
        return K_PLAIN;
    }
    uint8_t b0 = d[14];
    if (b0 >> 6) return K_CONTROL;
    *seq = (u64)((b0 >> 4) & 1) << 16 | (u64)d[15] << 8 | d[16]; *has_seq = 1;
    if (b0 & 0x04) return K_DUMMY;
    uint32_t at = ID_AT + 5 + (b0 & 0x20 ? 3 : 0);
    if (f->len >= at + 4) { *pid = rd32(d + at); *has_pid = 1; }
    return b0 & 0x08 ? K_RETX : K_DATA;
}
static long long unwrap(long long seq, long long near) {
    long long m = ((near - seq) % SEQ_SPACE + SEQ_SPACE) % SEQ_SPACE;
    long long candidate = near - m;
    return near - candidate > SEQ_SPACE / 2 ? candidate + SEQ_SPACE : candidate;
}
static int detected_room(struct stress *x, long long upto) {
    if ((u64)upto < x->det_cap) return 0;
    u64 cap = x->det_cap ? x->det_cap : 4096;
    while (cap <= (u64)upto) cap *= 2;
    int64_t *p = realloc(x->detected, cap * 8);
    if (!p) return -1;
    for (u64 i = x->det_cap; i < cap; i++) p[i] = ABSENT;
    x->detected = p; x->det_cap = cap;
    return 0;
}
static void count_kind(u64 *counts, int *order, int *norder, int kind) {
    if (!counts[kind]) order[(*norder)++] = kind;
    counts[kind]++;
}
static void wire_tap(net_t *n, struct stress *x, const frame_t *f, int lost, u64 arrival) {
    u64 seq = 0, pid = 0; int has_seq, has_pid;
    int kind = kind_of(f, &seq, &has_seq, &pid, &has_pid);
    if (arrival >= x->count_from) {
        count_kind(x->sent, x->sent_order, &x->nsent_order, kind);
        if (lost) { count_kind(x->lost, x->lost_order, &x->nlost_order, kind); x->run++; }
        else if (x->run) {
            while (x->bursts.n <= x->run)
                if (vec_add(&x->bursts, 0)) { n->status = E_MEMORY; return; }
            x->bursts.v[x->run]++; x->run = 0;
        }
    }
    if (has_pid && (kind == K_DATA || kind == K_PLAIN) && pid < x->capacity) x->originals[pid] = 1;
    if (lost || !has_seq) return;
    long long absolute = unwrap((long long)seq, x->expected);
    if (kind == K_RETX) {
        if (absolute < 0 || (u64)absolute >= x->det_cap || x->detected[absolute] == ABSENT) return;
        int64_t t0 = x->detected[absolute];
        x->detected[absolute] = ABSENT; x->ndetected--;
        if (t0 >= 0 && vec_add(&x->retx, arrival - (u64)t0)) n->status = E_MEMORY;
        return;
    }
    if (absolute >= x->expected) {
        long long last = kind == K_DUMMY ? absolute : absolute - 1;
        if (detected_room(x, last + 1)) { n->status = E_MEMORY; return; }
        for (long long hole = x->expected; hole <= last; hole++) {
            if (x->detected[hole] == ABSENT) x->ndetected++;
            x->detected[hole] = hole == x->expected ? (int64_t)arrival : -1;
        }
        x->expected = absolute + 1;
    }
}
static int is_resume(const frame_t *f) {
    const uint8_t *d = f->d;
    if (f->len < 17 || d[12] != 0xab || d[13] != 0xcd) return 0;
    uint32_t at = 14; int kind = d[14] >> 6;
    if (kind == 0) {
        if (!((d[14] >> 5) & 1)) return 0;
        at = 17;
        if (at >= f->len) return 0;
        kind = d[at] >> 6;
    }
    return kind == 3 && !((d[at] >> 5) & 1);
}
static int is_data(const frame_t *f) {
    const uint8_t *d = f->d;
    return !(d[12] == 0xab && d[13] == 0xcd) || (d[14] >> 6 == 0 && !(d[14] & 0x0C));
}
static u64 loops(net_t *n, int si);
static void snapshot(net_t *n, u64 *out) {
    out[0] = n->now; out[1] = loops(n, n->ss->s1); out[2] = loops(n, n->ss->s2);
}
/* SteadyWindows.on_frame: from `settle` frames after a loss to the next loss, in cut gaps. */
static void steady(net_t *n, struct stress *x, const frame_t *f, int lost) {
    if (lost) {
        if (x->has_start) {
            u64 now[3];
            snapshot(n, now);
            x->st_ns += now[0] - x->start_snap[0];
            x->st_frames += x->st_data + 1;
            x->st_recirc[0] += now[1] - x->start_snap[1];
            x->st_recirc[1] += now[2] - x->start_snap[2];
            if (vec_add(&x->windows, x->start_snap[0]) || vec_add(&x->windows, now[0]))
                n->status = E_MEMORY;
        }
        x->since_loss = 0; x->has_start = 0; x->st_data = 0;
        return;
    }
    if (x->since_loss < 0) return;
    x->since_loss++;
    if (x->has_start && is_data(f)) x->st_data++;
    if (x->since_loss == 1) x->st_cut = n->dir[x->fwd]->cutting;
    if (x->st_cut && (u64)x->since_loss == x->settle) {
        snapshot(n, x->start_snap); x->has_start = 1;
    }
}
static void stress_tap(net_t *n, int di, const frame_t *f, int lost, u64 arrival) {
    struct stress *x = n->ss;
    if (di == x->fwd) {
        wire_tap(n, x, f, lost, arrival);
        if (x->has_since && !lost && is_data(f)) {
            if (vec_add(&x->flights, arrival - (u64)x->since)) n->status = E_MEMORY;
            x->has_since = 0;
        }
        if (x->max_gap && x->losses_on) steady(n, x, f, lost);
    } else if (di == x->bwd && !lost && !x->has_since && is_resume(f)) {
        dir_t *d = n->dir[di];
        u64 len = f->len > d->min_frame ? f->len : d->min_frame;
        u64 wire = (len + d->framing) * 8 * PS / d->rate;
        x->since = (int64_t)arrival - (int64_t)x->link_delay_ns - (int64_t)(wire / 1000)
                   - (int64_t)x->egress_ns;
        x->has_since = 1;
    }
}

/* PausedQueue.release: frames into s1 while its link is not paused, `keep` in its pipeline. */
static void release(net_t *n) {
    struct stress *x = n->ss;
    if (x->bl_head == x->backlog.n || x->paused[x->link_port]) return;
    u64 now = n->now;
    while (x->en_head < x->entered.n && (long long)x->entered.v[x->en_head]
           <= (long long)now - (long long)x->ingress_ns) x->en_head++;
    port_t *st = n->sw[x->s1]->tm.ports[x->link_port];
    while (x->bl_head < x->backlog.n
           && (x->entered.n - x->en_head) + (st ? st->q[x->prio].n : 0) < x->keep) {
        frame_t *f = (frame_t *)(uintptr_t)x->backlog.v[x->bl_head++];
        x->bytes -= f->len;
        if (vec_add(&x->entered, now)) { n->status = E_MEMORY; unref(f); return; }
        switch_receive(n, x->s1, x->host_port, f);
        st = n->sw[x->s1]->tm.ports[x->link_port];
    }
}
static void offer(net_t *n, frame_t *f) {
    struct stress *x = n->ss;
    if (x->bytes + f->len > x->limit) { x->drops++; unref(f); }
    else {
        if (vec_add(&x->backlog, (u64)(uintptr_t)f)) { n->status = E_MEMORY; unref(f); return; }
        x->bytes += f->len;
    }
    release(n);
}
/* After each frame s1 receives from the link: the MAC pauses its normal queue as the register
   says (TrafficManager.set_paused), then the paused queue releases. */
static void after_backward(net_t *n, int di) {
    struct stress *x = n->ss;
    if (di != x->bwd) return;
    port_t *st = tm_port(&n->sw[x->s1]->tm, x->link_port);
    if (!st) { n->status = E_MEMORY; return; }
    int paused = x->paused[x->link_port] != 0;
    st->q[x->prio].paused = paused;
    if (!paused && !st->busy) tm_serve(&n->sw[x->s1]->tm, st, n->now);
    release(n);
}

static u64 loops(net_t *n, int si) {
    switch_t *s = n->sw[si];
    return s->stats[ST_RECIRCULATIONS] - s->stats[ST_LANE_RECIRC];
}
static void mark(net_t *n, int which) {
    struct stress *x = n->ss;
    host_t *h = n->host[x->sink];
    u64 *m = x->marks[which];
    m[0] = h->uniq; m[1] = loops(n, x->s1); m[2] = loops(n, x->s2); m[3] = n->now;
    x->marked[which] = 1;
    if (which == 2) { h->w1 = n->now; x->in_window = h->in_window; }
}
static void reset_watermarks(switch_t *s) {
    for (int p = 0; p < MAXPORT; p++)
        for (int k = 0; k < 2; k++) {
            port_t *st = k ? s->tm.lanes[p] : s->tm.ports[p];
            if (st) for (int q = 0; q < TM_PRIOS; q++) st->q[q].peak = st->q[q].cells;
        }
}
static void tick(net_t *n) {
    struct stress *x = n->ss;
    u64 t = n->now;
    if (t >= x->start && !x->samples.n) {
        reset_watermarks(n->sw[x->s1]); reset_watermarks(n->sw[x->s2]);
    }
    if (t >= x->start && !x->marked[2]) {
        port_t *a = n->sw[x->s1]->tm.ports[x->recirc], *b = n->sw[x->s2]->tm.ports[x->recirc];
        u64 cell = n->sw[x->s1]->tm.cell;
        if (vec_add(&x->samples, t) || vec_add(&x->samples, a ? a->q[0].cells * cell : 0)
            || vec_add(&x->samples, b ? b->q[0].cells * cell : 0)) n->status = E_MEMORY;
    }
    push(n, t + x->sample_ns, E_TICK, 0, 0, 0);
}
/* StressRun._frames: measured frames until the covered count (cut frames included). */
static int source_done(net_t *n) {
    struct stress *x = n->ss;
    u64 id = n->src.next_id;
    return id >= x->warmup && id - x->warmup + n->dir[x->fwd]->skipped >= x->frames;
}
static void start_losses(net_t *n) {
    struct stress *x = n->ss;
    dir_t *d = n->dir[x->fwd];
    d->loss = x->loss; d->p1 = x->p1; d->p2 = x->p2; d->max_gap = x->max_gap; d->quiet = -1;
    x->losses_on = 1;
}

/* ---- the API ------------------------------------------------------------------------------- */
net_t *ns_new(void) { return calloc(1, sizeof(net_t)); }

/* A switch on a native engine's context: its passes (fns: ingress, egress of a saved state,
   state save, ingress of a job, parse), slots and clone slots, the state's words, how many
   leading slots outlive a pass (the rest are a pass's locals), where the requests start, the
   standard_metadata slots (SM_*), the drop port, the priority queues, the latencies (ingress,
   egress, recirculation, clone), the clone sessions as (session, port, rid) triples, the field
   lists (id, count, slots...) and the header slots with the cursor registers. */
int ns_switch(net_t *n, void *ctx, void **fns, u64 *slots, u64 *cslots, uint32_t words,
              uint32_t live, uint32_t rq, const uint32_t *sm, u64 drop_port, uint32_t max_hdr,
              uint32_t nprio, const u64 *lat, const u64 *sessions, uint32_t nsessions,
              const u64 *fls, uint32_t nfls, uint32_t flwords, const uint32_t *hdr,
              uint32_t nhdr) {
    if (n->nsw == 8 || nprio < 1 || nprio > TM_PRIOS) return -1;
    switch_t *s = calloc(1, sizeof *s);
    if (!s) return -1;
    n->sw[n->nsw] = s;
    s->net = n; s->index = n->nsw;
    tm_init(&s->tm, nprio, &n->status, &s->stats[ST_QUEUE_FULL], &s->stats[ST_BAD_PRIO]);
    s->tm.owner = s;
    s->in_lat = lat[0]; s->eg_lat = lat[1]; s->rc_lat = lat[2]; s->cl_lat = lat[3];
    for (int i = 0; i < MAXPORT; i++) s->tx[i] = -1;
    n->nsw++;
    if (pipe_init(&s->p, ctx, fns, slots, cslots, words, live, rq, sm, drop_port, max_hdr, fls,
                  nfls, flwords, hdr, nhdr, &n->status)
        || set_triples(&s->p.sessions, &s->p.nsessions, sessions, nsessions)) return -1;
    return n->nsw - 1;
}

/* One queue of a port (lane: of its clone lane): depth in packets and bytes (0: none). */
int ns_queue(net_t *n, int sw, int port, int lane, uint32_t prio, uint32_t depth, u64 bytes) {
    if (sw >= n->nsw || port < 0 || port >= MAXPORT || prio >= TM_PRIOS) return -1;
    tm_t *tm = &n->sw[sw]->tm;
    port_t *st = lane ? tm_lane(tm, (uint32_t)port) : tm_port(tm, (uint32_t)port);
    if (!st) return -1;
    st->q[prio].depth = depth; st->q[prio].depth_bytes = bytes;
    return 0;
}
/* A port's (or clone lane's) bit rate (0: unlimited), framing and minimum frame. */
int ns_port_rate(net_t *n, int sw, int port, int lane, u64 rate, u64 framing, u64 min_frame) {
    if (sw >= n->nsw || port < 0 || port >= MAXPORT) return -1;
    tm_t *tm = &n->sw[sw]->tm;
    port_t *st = lane ? tm_lane(tm, (uint32_t)port) : tm_port(tm, (uint32_t)port);
    if (!st) return -1;
    tm_set_rate(st, rate, 0, framing, min_frame);
    return 0;
}
void ns_cells(net_t *n, int sw, u64 cell) { n->sw[sw]->tm.cell = cell; }
/* The multicast groups as (group, rid, port) triples. */
int ns_mcast(net_t *n, int sw, const u64 *triples, uint32_t count) {
    pipe_t *p = &n->sw[sw]->p;
    return set_triples(&p->mcast, &p->nmcast, triples, count);
}

/* The stress test's harness on this network (after ns_source: its events come next, as
   StressRun.run schedules them): s1, s2, the link's forward and backward directions, the sink
   host, the ports,
   the normal queue's priority, the recirculation port, the paused queue's byte limit, `keep`
   and ingress latency, the register lg_tx_paused's values, the packet ids' capacity, the
   warm-up's end, the egress latency, the link delay, the sampling period and start, and the
   loss model the link gets at the warm-up's end. */
int ns_stress(net_t *n, int s1, int s2, int fwd, int bwd, int sink, uint32_t host_port,
              uint32_t link_port, uint32_t prio, uint32_t recirc, u64 limit, u64 keep,
              u64 ingress_ns, const u64 *paused, u64 capacity, u64 warm_end, u64 egress_ns,
              u64 link_delay_ns, u64 sample_ns, u64 start, int loss, double p1, double p2,
              u64 max_gap, u64 warmup, u64 frames) {
    struct stress *x = calloc(1, sizeof *x);
    if (!x) return -1;
    n->ss = x;
    x->s1 = s1; x->s2 = s2; x->fwd = fwd; x->bwd = bwd; x->sink = sink; x->host_port = host_port;
    x->link_port = link_port; x->prio = prio; x->recirc = recirc; x->limit = limit;
    x->keep = keep; x->ingress_ns = ingress_ns; x->paused = paused; x->capacity = capacity;
    x->count_from = warm_end; x->warm_end = warm_end; x->egress_ns = egress_ns;
    x->link_delay_ns = link_delay_ns; x->sample_ns = sample_ns; x->start = start;
    x->loss = loss; x->p1 = p1; x->p2 = p2; x->max_gap = max_gap; x->settle = max_gap / 2;
    x->warmup = warmup; x->frames = frames; x->since_loss = -1;
    x->originals = calloc(capacity ? capacity : 1, 1);
    if (!x->originals) return -1;
    push(n, 0, E_TICK, 0, 0, 0);
    push(n, warm_end / 2, E_MARK, 0, 0, 0);
    push(n, warm_end, E_MARK, 1, 0, 0);
    push(n, warm_end, E_LOSSES, 0, 0, 0);
    return n->status ? -1 : 0;
}
/* The harness's counters: drops, backlog, marked (3), in window, holes unrecovered, events
   pending, the marks (3 x 4), sent and lost by kind (5 each) and the order each kind was first
   counted in (count, kinds...) for sent and lost. */
void ns_stress_counts(net_t *n, u64 *out) {
    struct stress *x = n->ss;
    u64 *o = out;
    *o++ = x->drops; *o++ = x->backlog.n - x->bl_head;
    for (int i = 0; i < 3; i++) *o++ = (u64)x->marked[i];
    *o++ = x->in_window; *o++ = x->ndetected; *o++ = n->nheap;
    for (int i = 0; i < 3; i++) for (int k = 0; k < 4; k++) *o++ = x->marks[i][k];
    for (int k = 0; k < NKINDS; k++) *o++ = x->sent[k];
    for (int k = 0; k < NKINDS; k++) *o++ = x->lost[k];
    *o++ = (u64)x->nsent_order; for (int k = 0; k < NKINDS; k++) *o++ = (u64)x->sent_order[k];
    *o++ = (u64)x->nlost_order; for (int k = 0; k < NKINDS; k++) *o++ = (u64)x->lost_order[k];
}
/* One of the harness's lists: 0 bursts by length, 1 retransmission delays, 2 resume flights,
   3 samples (time, Tx, Rx); its length in *count. */
u64 *ns_stress_list(net_t *n, int which, u64 *count) {
    struct stress *x = n->ss;
    vec_t *v = which == 0 ? &x->bursts : which == 1 ? &x->retx : which == 2 ? &x->flights
               : &x->samples;
    *count = v->n;
    return v->v;
}
uint8_t *ns_stress_originals(net_t *n) { return n->ss->originals; }
/* The cut gaps: skipped, cuts (count, values in *cuts), cutting; the steady windows: ns, frames,
   recirculations (2), windows (count, pairs in *windows). */
void ns_stress_gaps(net_t *n, u64 *out, u64 **cuts, u64 **windows) {
    struct stress *x = n->ss;
    dir_t *d = n->dir[x->fwd];
    out[0] = d->skipped; out[1] = d->cuts_n; out[2] = (u64)d->cutting;
    out[3] = x->st_ns; out[4] = x->st_frames; out[5] = x->st_recirc[0]; out[6] = x->st_recirc[1];
    out[7] = x->windows.n / 2;
    *cuts = d->cuts; *windows = x->windows.v;
}
/* The holes detected and not recovered: their absolute seqs and times (-1: none). */
u64 ns_stress_holes(net_t *n, int64_t *out, u64 room) {
    struct stress *x = n->ss;
    u64 k = 0;
    for (u64 i = 0; i < x->det_cap && k < room; i++)
        if (x->detected[i] != ABSENT) {
            out[2 * k] = (int64_t)i; out[2 * k + 1] = x->detected[i]; k++;
        }
    return k;
}
/* (cells now, watermark) of a queue of a port's own. */
void ns_queue_cells(net_t *n, int sw, int port, uint32_t prio, u64 *out) {
    port_t *st = n->sw[sw]->tm.ports[port];
    out[0] = st ? st->q[prio].cells : 0; out[1] = st ? st->q[prio].peak : 0;
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
    n->sw[sw]->tx[port] = n->ndir;
    return n->ndir++;
}

/* The source: into switch `sw` port `port` at `rate` (or every `period_ps`), `count` frames with
   ids from `first_id` at `id_offset`; `nsizes` templates (their lengths, concatenated), the
   cumulative weights and the generator (624 words, index) that draws each frame's size. */
int ns_source(net_t *n, int sw, int port, u64 rate, u64 framing, u64 period_ps,
              const uint8_t *tmpls, const uint32_t *lens, const double *cum, uint32_t nsizes,
              const uint32_t *mt, int index, uint32_t id_offset, u64 first_id, u64 count,
              u64 start_ns) {
    source_t *g = &n->src;
    if (!nsizes || g->tmpls) return -1;
    g->sw = sw; g->port = port; g->rate = rate; g->framing = framing; g->period_ps = period_ps;
    g->lens = malloc(4 * nsizes); g->tmpls = calloc(nsizes, sizeof *g->tmpls);
    g->cum = malloc(8 * nsizes);
    if (!g->lens || !g->tmpls || !g->cum) return -1;
    g->nsizes = nsizes;
    for (uint32_t i = 0; i < nsizes; i++) {
        g->lens[i] = lens[i]; g->cum[i] = cum[i];
        if (!(g->tmpls[i] = malloc(lens[i]))) return -1;
        memcpy(g->tmpls[i], tmpls, lens[i]); tmpls += lens[i];
    }
    memcpy(g->rng.mt, mt, sizeof g->rng.mt); g->rng.i = index;
    g->id_offset = id_offset; g->next_id = first_id; g->left = count;
    g->next_ps = start_ns * 1000;
    source_schedule(n);
    return n->status ? -1 : 0;
}

/* Run every event up to and including `until_ns`: 0, or why it stopped (E_*). */
int ns_run(net_t *n, u64 until_ns) {
    while (n->nheap && n->heap[0].t <= until_ns && !n->status) {
        ev_t e = pop(n);
        n->now = e.t;
        n->events++;
        switch (e.kind) {
        case E_EMIT: source_emit(n); break;
        case E_AFTER_INGRESS: after_ingress(n, e.a, e.p, e.b); break;
        case E_WAKE: {
            port_t *st = e.p;
            tm_woken(&n->sw[e.a]->tm, st, e.t);
            break;
        }
        case E_CLONE:
            if (n->status) job_free(e.p); else tm_enqueue(&n->sw[e.a]->tm, e.p, n->now);
            break;
        case E_RECIRC: recirc_ingress(n, e.a, e.p); break;
        case E_TICK: tick(n); break;
        case E_MARK: mark(n, e.a); break;
        case E_LOSSES: start_losses(n); break;
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
        if (e->kind == E_AFTER_INGRESS || e->kind == E_CLONE)
            for (job_t *j = e->p, *nx; j; j = nx) { nx = j->next; job_free(j); }
        else if (e->kind == E_TRANSMIT || e->kind == E_DELIVER) unref(e->p);
        else if (e->kind == E_RECIRC) { rjob_t *r = e->p; unref(r->in); free(r); }
    }
    free(n->heap);
    for (int i = 0; i < n->nsw; i++) {
        switch_t *s = n->sw[i];
        tm_free(&s->tm); pipe_free(&s->p);
        free(s->out); free(s);
    }
    for (int i = 0; i < n->nhost; i++) { free(n->host[i]->seen); free(n->host[i]->log);
                                         free(n->host[i]); }
    for (int i = 0; i < n->ndir; i++) { free(n->dir[i]->cuts); free(n->dir[i]); }
    for (uint32_t i = 0; i < n->src.nsizes; i++) free(n->src.tmpls[i]);
    free(n->src.tmpls); free(n->src.lens); free(n->src.cum);
    struct stress *x = n->ss;
    if (x) {
        for (u64 i = x->bl_head; i < x->backlog.n; i++)
            unref((frame_t *)(uintptr_t)x->backlog.v[i]);
        free(x->backlog.v); free(x->entered.v); free(x->bursts.v); free(x->retx.v);
        free(x->flights.v); free(x->samples.v); free(x->detected); free(x->originals);
        free(x->windows.v); free(x);
    }
    free(n);
}
"""
SOURCE = _SOURCE.replace("JOBS_AND_TM", JOBS + TM)
