"""The C text of the traffic manager (tm.py's TrafficManager in C, as functions of an explicit
now_ns): per-port strict-priority queues capped in packets and bytes, counted in cells, with
packet rates and PFC pauses, a port bit rate with burst and framing (wire_start_ps with its late
tolerance), clone lanes. Shared by the port loop (device_c.py) and the virtual-time loop
(lgkit/sim/loop_c.py), which include it after jobs_c.py's JOBS and define what it calls:

    static uint32_t tm_egress(tm_t *tm, job_t *j, u64 now_ns, u64 enq_depth, u64 deq_depth)
        the egress pass of a dequeued job: the bytes it put on the wire or looped back (0: none)
    static void tm_timer(tm_t *tm, port_t *st, u64 t_ns)
        serve `st` again at t_ns (tm_woken then); a later call for an earlier time replaces it

A wake for a rate (the port's, a queue's) may come up to the port's `slack` ns late (at most
TM_SLACK_NS, and half the port's burst): a real-time caller can sleep that much longer and serve
the departures due by then together, one wake for several frames, at the same rates (a late
departure still counts from when it was due, within late_ns). Virtual time serves at t_ns.
"""

TM = r"""
/* ---- the traffic manager (tm_c.py) ------------------------------------------------------- */
#define TM_PS 1000000000000ULL
#define TM_PORTS 512
#define TM_PRIOS 8
#define TM_BATCH 64
#define TM_DEPTH 64
#define PFC_RATE 10000000000ULL   /* the pause quanta's bit time of an unshaped port */
#define TM_SLACK_NS 200000ULL     /* how late a rate's wake may come (see the module's text) */

typedef struct { job_t *head, *tail; uint32_t n, depth; u64 depth_bytes, bytes, cells, peak,
                 period_ns, next_due, paused_until; int paused; } queue_t;
typedef struct { queue_t q[TM_PRIOS]; u64 rate, framing, min_frame, tat_ps, tau_ps, wake_at,
                 slack; int waking, busy, queued; } port_t;
typedef struct tm_s {
    port_t *ports[TM_PORTS], *lanes[TM_PORTS];
    port_t *all[2 * TM_PORTS]; int nall;     /* every port and lane made, to scan for wakes */
    uint32_t nprio, depth0[TM_PRIOS];         /* a new port's queues: depth and period */
    u64 period0[TM_PRIOS], cell, late_ns;
    u64 *full, *bad_prio;                     /* the caller's counters */
    u64 *qdrops;                              /* queue_full by port * TM_PRIOS + prio, or 0 */
    int *status;                              /* set: stop serving */
    void *owner;
} tm_t;

static uint32_t tm_egress(tm_t *tm, job_t *j, u64 now, u64 enq_depth, u64 deq_depth);
static void tm_timer(tm_t *tm, port_t *st, u64 t);

static void tm_init(tm_t *tm, uint32_t nprio, int *status, u64 *full, u64 *bad_prio) {
    memset(tm, 0, sizeof *tm);
    tm->nprio = nprio; tm->status = status; tm->full = full; tm->bad_prio = bad_prio;
    for (int i = 0; i < TM_PRIOS; i++) tm->depth0[i] = TM_DEPTH;
}
static port_t *tm_new_port(tm_t *tm, port_t **at) {
    port_t *st = calloc(1, sizeof *st);
    if (!st) return 0;
    for (int i = 0; i < TM_PRIOS; i++) {
        st->q[i].depth = tm->depth0[i]; st->q[i].period_ns = tm->period0[i];
    }
    tm->all[tm->nall++] = st;
    return *at = st;
}
/* A port's own queues (made as the TM makes them: with the defaults), or its clone lane's
   (lane: made with them too when asked for). */
static port_t *tm_port(tm_t *tm, uint32_t port) {
    port_t **at = &tm->ports[port];
    return *at ? *at : tm_new_port(tm, at);
}
static port_t *tm_lane(tm_t *tm, uint32_t port) {
    port_t **at = &tm->lanes[port];
    return *at ? *at : tm_new_port(tm, at);
}
static u64 tm_ceil(u64 a, u64 b) { return (a + b - 1) / b; }
static u64 wire_ps(const port_t *st, u64 nbytes) {
    u64 len = nbytes > st->min_frame ? nbytes : st->min_frame;
    return (len + st->framing) * 8 * TM_PS / st->rate;
}
/* tm.py's wire_start_ps: back to back when only the rounding of timers separates the frame
   from the previous one, else when it was due if that is less than late_ns ago, else now. */
static u64 wire_start_ps(u64 now_ns, u64 tat_ps, u64 ready_ns, u64 late_ns) {
    u64 now_ps = now_ns * 1000;
    if (tat_ps + 1000 > now_ps) return tat_ps;
    u64 due_ps = tat_ps > ready_ns * 1000 ? tat_ps : ready_ns * 1000;
    return now_ps - due_ps < late_ns * 1000 ? due_ps : now_ps;
}
static void tm_set_rate(port_t *st, u64 rate, u64 burst, u64 framing, u64 min_frame) {
    st->rate = rate; st->framing = framing; st->min_frame = min_frame;
    st->tau_ps = rate ? burst * 8 * TM_PS / rate : 0;
}
/* Serve st at t, or up to `slack` ns later. */
static void tm_wake(tm_t *tm, port_t *st, u64 t, u64 slack) {
    if (st->waking && st->wake_at <= t) return;
    st->waking = 1; st->wake_at = t; st->slack = slack;
    tm_timer(tm, st, t);
}
static void tm_full(tm_t *tm, uint32_t port, uint32_t prio) {
    (*tm->full)++;
    if (tm->qdrops) tm->qdrops[port * TM_PRIOS + prio]++;
}

/* The queue to serve now: the highest priority with a packet, not paused (a PFC pause ends at
   paused_until), whose packet rate lets it go; else 0 and *earliest when one may go later
   (*slack: TM_SLACK_NS when that is a packet rate's, 0 for a pause's end). */
static queue_t *tm_pick(tm_t *tm, port_t *st, u64 now, u64 *earliest, u64 *slack) {
    *earliest = 0; *slack = 0;
    for (int i = (int)tm->nprio - 1; i >= 0; i--) {
        queue_t *q = &st->q[i];
        if (q->paused && q->paused_until && q->paused_until <= now) q->paused = 0;
        if (!q->n) continue;
        u64 later = 0;
        if (q->paused) later = q->paused_until;
        else if (!q->period_ns || q->next_due <= now) return q;
        else later = q->next_due;
        if (later && (!*earliest || later < *earliest)) {
            *earliest = later; *slack = q->paused ? 0 : TM_SLACK_NS;
        }
    }
    return 0;
}

/* Send the packets of `st` that may leave at `now` (TM_BATCH at most, so that a packet that
   clones itself on every departure cannot hold the loop); arm its timer for the next one. */
static void tm_serve(tm_t *tm, port_t *st, u64 now) {
    st->busy = 1;
    for (int k = 0; k < TM_BATCH; k++) {
        if (st->rate && st->tat_ps - st->tau_ps > now * 1000 && st->tat_ps > st->tau_ps) {
            u64 half = st->tau_ps / 2000;
            tm_wake(tm, st, tm_ceil(st->tat_ps - st->tau_ps, 1000),
                    half < TM_SLACK_NS ? half : TM_SLACK_NS);
            st->busy = 0; return;
        }
        u64 earliest, slack;
        queue_t *q = tm_pick(tm, st, now, &earliest, &slack);
        if (!q) { if (earliest) tm_wake(tm, st, earliest, slack); st->busy = 0; return; }
        job_t *j = q->head;
        q->head = j->next; if (!q->head) q->tail = 0;
        q->n--; st->queued--;
        if (q->depth_bytes) q->bytes -= j->length;
        if (tm->cell) q->cells -= tm_ceil(j->length, tm->cell);
        u64 ready = j->enq_ns;
        if (q->period_ns) {   /* when it should have left: when due, or enqueued if later */
            ready = q->next_due > j->enq_ns ? q->next_due : j->enq_ns;
            q->next_due = (now - ready < tm->late_ns ? ready : now) + q->period_ns;
        }
        uint32_t sent = tm_egress(tm, j, now, j->enq_depth, q->n);
        if (st->rate && sent)
            st->tat_ps = wire_start_ps(now, st->tat_ps, ready, tm->late_ns) + wire_ps(st, sent);
        job_free(j);
        if (*tm->status) { st->busy = 0; return; }
    }
    st->busy = 0;
    tm_wake(tm, st, now, 0);
}
/* A port's timer fired at t: serve it if that is the wake it armed last. */
static void tm_woken(tm_t *tm, port_t *st, u64 t) {
    if (st->waking && st->wake_at == t) { st->waking = 0; tm_serve(tm, st, t); }
}

/* Queue an egress job (its clone lane's queue for a clone when the port has one); an idle,
   unshaped queue sends it at once; a full queue drops it. */
static void tm_enqueue(tm_t *tm, job_t *j, u64 now) {
    if (j->prio >= tm->nprio) { (*tm->bad_prio)++; job_free(j); return; }
    port_t *st = j->port < TM_PORTS ? tm_port(tm, j->port) : 0;
    if (!st) { *tm->status = JOB_E_MEMORY; job_free(j); return; }
    if ((j->itype == IT_I2E || j->itype == IT_E2E) && tm->lanes[j->port]) st = tm->lanes[j->port];
    queue_t *q = &st->q[j->prio];
    if (!(st->queued || st->busy || st->rate || q->period_ns || q->paused)) {
        if (!q->depth) { tm_full(tm, j->port, j->prio); job_free(j); return; }
        j->enq_ns = now;
        st->busy = 1;
        tm_egress(tm, j, now, 0, 0);
        st->busy = 0;
        job_free(j);
        if (st->queued && !*tm->status) tm_serve(tm, st, now);
        return;
    }
    if (q->n >= q->depth || (q->depth_bytes && q->bytes + j->length > q->depth_bytes)) {
        tm_full(tm, j->port, j->prio); job_free(j); return;
    }
    if (q->depth_bytes) q->bytes += j->length;
    if (tm->cell) {
        q->cells += tm_ceil(j->length, tm->cell);
        if (q->cells > q->peak) q->peak = q->cells;
    }
    j->enq_ns = now; j->enq_depth = q->n; j->next = 0;
    if (q->tail) q->tail->next = j; else q->head = j;
    q->tail = j; q->n++; st->queued++;
    if (!st->busy) tm_serve(tm, st, now);
}

/* The MAC's part of a frame received on `port` (tm.py's receive_pfc): an 802.1Qbb PFC frame
   pauses the port's queues of the priorities it names for their quanta x 512 bit times at the
   port's rate (10 Gb/s unshaped), or resumes them (quanta 0): 1, consumed; else 0. */
static int tm_pfc(tm_t *tm, uint32_t port, const uint8_t *d, uint32_t len, u64 now) {
    if (len < 34 || d[12] != 0x88 || d[13] != 0x08 || d[14] != 0x01 || d[15] != 0x01)
        return 0;
    port_t *st = tm_port(tm, port);
    if (!st) { *tm->status = JOB_E_MEMORY; return 1; }
    uint32_t enabled = (uint32_t)d[16] << 8 | d[17];
    u64 rate = st->rate ? st->rate : PFC_RATE;
    for (uint32_t prio = 0; prio < tm->nprio; prio++) {
        if (!(enabled >> prio & 1)) continue;
        u64 quanta = (u64)d[18 + 2 * prio] << 8 | d[19 + 2 * prio];
        queue_t *q = &st->q[prio];
        q->paused_until = now + tm_ceil(quanta * 512 * 1000000000ULL, rate);
        q->paused = q->paused_until > now;
        if (q->paused && !q->paused_until) q->paused_until = 1;
    }
    if (!st->busy) tm_serve(tm, st, now);
    return 1;
}

static void tm_free_port(port_t *st) {
    for (int q = 0; q < TM_PRIOS; q++)
        for (job_t *j = st->q[q].head, *nx; j; j = nx) { nx = j->next; job_free(j); }
    free(st);
}
static void tm_free(tm_t *tm) {
    for (int i = 0; i < tm->nall; i++) tm_free_port(tm->all[i]);
    tm->nall = 0;
    memset(tm->ports, 0, sizeof tm->ports); memset(tm->lanes, 0, sizeof tm->lanes);
}
"""
