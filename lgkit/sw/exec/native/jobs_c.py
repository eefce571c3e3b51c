"""The C text of a native switch's packet jobs (engine.py's _ingress_end and egress_pass in C):
the jobs an ingress pass makes (unicast, I2E clones, multicast replicas, a resubmission), the
E2E clones and the recirculation of an egress pass; shared by the port loop (device_c.py) and
the virtual-time loop (lgkit/sim/loop_c.py), which include it after `typedef uint64_t u64`.

A pipe_t holds what the jobs need of a program on one context: its passes (called through
pointers: the generated lg_ingress, lg_egress_saved, lg_state_save, lg_ingress_job, lg_parse),
its slots, the standard_metadata slots (JSM_*, NO_SLOT when the program has none), the clone
sessions as (session, port, rid) triples, the field lists (id, count, slots...), the multicast
groups as (group, rid, port) triples and the header slots with the cursor registers. A failed
allocation sets *status to JOB_E_MEMORY; a resubmission the caller does not take, JOB_E_REQUESTS.
"""

JOBS = r"""
/* ---- packet jobs (jobs_c.py) ------------------------------------------------------------ */
#include <pthread.h>
typedef long (*ingress_fn)(void *, uint32_t, const uint8_t *, uint32_t, u64);
typedef long (*egress_fn)(void *, const uint8_t *, const uint8_t *, uint32_t, u64, u64, u64,
                          u64, u64, u64, u64, uint8_t *);
typedef void (*save_fn)(void *);
typedef long (*ingress_job_fn)(void *, const uint8_t *, uint32_t, u64, u64, const u64 *,
                               uint32_t);
typedef void (*parse_fn)(void *, uint32_t, const uint8_t *, uint32_t);

/* a frame (`pooled`: a block of POOL_FRAME bytes, kept for reuse when freed) */
typedef struct { uint32_t refs, len, pooled; uint8_t d[]; } frame_t;
/* an egress job: the slots that outlive a pass (state, `words` of them), the input frame, its
   queue values */
typedef struct job { struct job *next; frame_t *in; u64 enq_ns, length; uint32_t enq_depth,
                     port, prio, itype, words; u64 state[]; } job_t;
/* a packet back to ingress (recirculated, resubmitted): its preserved (slot, value) pairs;
   `next` and `due` for a caller's queue of them */
typedef struct rjob { struct rjob *next; u64 due; frame_t *in; u64 itype; uint32_t npre;
                      u64 pre[]; } rjob_t;

/* the standard_metadata slots the jobs read or write */
enum { JSM_PRIORITY, JSM_RID, JSM_ITYPE, JSM_IN_PORT, JSM_SPEC, JSM_MCAST, NJSM };
/* the end-of-pass requests after the slots and the cursor registers (engine.py's) */
enum { JR_CLONE, JR_SESSION, JR_CLONE_FL, JR_RECIRC, JR_RECIRC_FL, JR_TRUNC, JR_TRUNC_LEN,
       JR_RESUB, JR_RESUB_FL };
enum { JOB_E_REQUESTS = 1, JOB_E_MEMORY = 2 };
enum { IT_NORMAL = 0, IT_I2E = 1, IT_E2E = 2, IT_RECIRC = 4, IT_REPLICA = 5, IT_RESUBMIT = 6 };
#define NO_SLOT 0xFFFFFFFFU
#define JOB_NO_FL 0xFFFFFFFFFFFFFFFFULL

typedef struct {
    void *ctx; ingress_fn ingress; egress_fn egress; save_fn save; ingress_job_fn ingress_job;
    parse_fn parse; u64 *slots, *cslots;
    uint32_t words, live, rq, max_hdr, sm[NJSM]; u64 drop_port;
    u64 *sessions; uint32_t nsessions;   /* (session, port, rid) triples */
    u64 *fls; uint32_t nfls;             /* per field list: id, count, slots... */
    u64 *mcast; uint32_t nmcast;         /* (group, rid, port) triples */
    uint32_t *hdr; uint32_t nhdr;        /* the header slots and the cursor registers */
    u64 *tmp;                            /* a copy of the slots while jobs are made */
    int *status;
} pipe_t;

/* Freed frames of up to a full-size frame and freed jobs, kept per thread for the next ones
   (POOL_KEEP of each): glibc serves blocks of these sizes, above its per-thread cache, from its
   slower bins, a malloc and a free per copy and per job. A thread's blocks are freed when it
   ends; jobs of another program's size replace those kept. */
#define POOL_KEEP 512
#define POOL_FRAME 2048
typedef struct pooled { struct pooled *next; } pooled_t;
typedef struct { pooled_t *frames, *jobs; uint32_t nframes, njobs, job_words, registered; } pool_t;
static __thread pool_t pool;
static pthread_key_t pool_key;
static pthread_once_t pool_once = PTHREAD_ONCE_INIT;

static void pool_drain(pooled_t **list, uint32_t *n) {
    for (pooled_t *b = *list, *nx; b; b = nx) { nx = b->next; free(b); }
    *list = 0; *n = 0;
}
static void pool_end(void *arg) {
    (void)arg;
    pool_drain(&pool.frames, &pool.nframes); pool_drain(&pool.jobs, &pool.njobs);
}
static void pool_key_make(void) { pthread_key_create(&pool_key, pool_end); }
/* The thread's pool, its blocks to be freed when the thread ends. */
static pool_t *pool_of_thread(void) {
    if (!pool.registered) {
        pthread_once(&pool_once, pool_key_make);
        pthread_setspecific(pool_key, &pool);
        pool.registered = 1;
    }
    return &pool;
}
static void *pool_take(pooled_t **list, uint32_t *n) {
    pooled_t *b = *list;
    *list = b->next; (*n)--;
    return b;
}
static void pool_put(pooled_t **list, uint32_t *n, void *block) {
    pooled_t *b = block;
    b->next = *list; *list = b; (*n)++;
}

static void unref(frame_t *f) {
    if (!f || --f->refs) return;
    pool_t *o = pool_of_thread();
    if (f->pooled && o->nframes < POOL_KEEP) pool_put(&o->frames, &o->nframes, f);
    else free(f);
}
static void job_free(job_t *j) {
    unref(j->in);
    pool_t *o = pool_of_thread();
    if (j->words == o->job_words && o->njobs < POOL_KEEP) pool_put(&o->jobs, &o->njobs, j);
    else free(j);
}
static frame_t *frame_new(const uint8_t *d, uint32_t len) {
    pool_t *o = pool_of_thread();
    int pooled = sizeof(frame_t) + len <= POOL_FRAME;
    frame_t *f = pooled && o->frames ? pool_take(&o->frames, &o->nframes)
                                     : malloc(pooled ? POOL_FRAME : sizeof *f + len);
    if (f) { f->refs = 1; f->len = len; f->pooled = (uint32_t)pooled; memcpy(f->d, d, len); }
    return f;
}
/* A job of `words` state words (its fields but `words` unset). */
static job_t *job_new(uint32_t words) {
    pool_t *o = pool_of_thread();
    if (o->job_words != words) { pool_drain(&o->jobs, &o->njobs); o->job_words = words; }
    job_t *j = o->jobs ? pool_take(&o->jobs, &o->njobs) : malloc(sizeof *j + (size_t)words * 8);
    if (j) j->words = words;
    return j;
}
static u64 sm_get(const pipe_t *p, const u64 *S, int which) {
    return p->sm[which] == NO_SLOT ? 0 : S[p->sm[which]];
}
static void sm_set(const pipe_t *p, u64 *S, int which, u64 v) {
    if (p->sm[which] != NO_SLOT) S[p->sm[which]] = v;
}
static const u64 *field_list(const pipe_t *p, u64 id, uint32_t *count) {
    const u64 *f = p->fls;
    for (uint32_t i = 0; i < p->nfls; i++) {
        if (f[0] == id) { *count = (uint32_t)f[1]; return f + 2; }
        f += 2 + f[1];
    }
    *count = 0;
    return 0;
}

/* A job's copy of the slots that outlive a pass (runtime_c's live_copy, live_clear): the
   first `live`, and the tail from the cursor registers (rq - 3) on. */
static void job_live_copy(const pipe_t *p, u64 *d, const u64 *S) {
    memcpy(d, S, p->live * 8);
    memcpy(d + p->rq - 3, S + p->rq - 3, (p->words - p->rq + 3) * 8);
}
static void job_live_clear(const pipe_t *p, u64 *d) {
    memset(d, 0, p->live * 8);
    memset(d + p->rq - 3, 0, (p->words - p->rq + 3) * 8);
}

/* An egress job of the slots S (a copy), to `port` (engine.py's _job). */
static job_t *make_job(pipe_t *p, const u64 *S, uint32_t port, uint32_t itype, frame_t *in) {
    job_t *j = job_new(p->words);
    if (!j) { *p->status = JOB_E_MEMORY; return 0; }
    job_live_copy(p, j->state, S);
    j->next = 0; j->in = in; in->refs++; j->port = port; j->itype = itype;
    j->prio = (uint32_t)sm_get(p, S, JSM_PRIORITY); j->length = S[p->rq - 2];
    return j;
}

/* The replicas of a clone (engine.py's _fresh, header slots, _replicas) appended to *tail:
   fresh slots with the field list's from S, the header slots from H, written into each job. */
static job_t **clones(pipe_t *p, const u64 *S, const u64 *H, uint32_t itype, frame_t *in,
                      job_t **tail) {
    u64 session = S[p->rq + JR_SESSION], fl = S[p->rq + JR_CLONE_FL];
    uint32_t count = 0;
    const u64 *slots = fl == JOB_NO_FL ? 0 : field_list(p, fl, &count);
    for (uint32_t i = 0; i < p->nsessions; i++) {
        if (p->sessions[3 * i] != session) continue;
        job_t *j = job_new(p->words);
        if (!j) { *p->status = JOB_E_MEMORY; break; }
        u64 *copy = j->state;
        job_live_clear(p, copy);
        for (uint32_t k = 0; k < count; k++) copy[slots[k]] = S[slots[k]];
        for (uint32_t k = 0; k < p->nhdr; k++) copy[p->hdr[k]] = H[p->hdr[k]];
        sm_set(p, copy, JSM_ITYPE, itype);
        sm_set(p, copy, JSM_RID, p->sessions[3 * i + 2] & 0xFFFF);
        j->next = 0; j->in = in; in->refs++; j->port = (uint32_t)p->sessions[3 * i + 1];
        j->itype = itype; j->prio = (uint32_t)sm_get(p, copy, JSM_PRIORITY);
        j->length = copy[p->rq - 2];
        *tail = j; tail = &j->next;
    }
    return tail;
}

/* A packet `f` back to ingress with the field list `fl`'s values in S (preserved). */
static rjob_t *ingress_again(pipe_t *p, const u64 *S, u64 fl, u64 itype, frame_t *f) {
    uint32_t count = 0;
    const u64 *slots = field_list(p, fl, &count);
    rjob_t *r = malloc(sizeof *r + 16 * count);
    if (!r) { *p->status = JOB_E_MEMORY; return 0; }
    r->next = 0; r->due = 0; r->in = f; r->itype = itype; r->npre = count;
    for (uint32_t i = 0; i < count; i++) {
        r->pre[2 * i] = slots[i]; r->pre[2 * i + 1] = S[slots[i]];
    }
    return r;
}

/* The recirculation the egress pass that wrote `f` asked for (f is the job's: not referenced
   again here). */
static rjob_t *recirc_job(pipe_t *p, frame_t *f) {
    return ingress_again(p, p->slots, p->slots[p->rq + JR_RECIRC_FL], IT_RECIRC, f);
}

/* The egress pass of job j at `now` with its queue values, writing into `out`: the length to
   send or loop back (truncated when egress asked; -1 dropped); its E2E clones into *made,
   *recirc set when it recirculates (the field list's values still in the slots). */
static long egress_job(pipe_t *p, job_t *j, u64 now, u64 enq_depth, u64 deq_depth, uint8_t *out,
                       job_t **made, int *recirc) {
    long len = p->egress(p->ctx, (const uint8_t *)j->state, j->in->d, j->in->len, j->port,
                         j->itype, now / 1000, enq_depth, deq_depth, j->enq_ns / 1000,
                         (now - j->enq_ns) / 1000, out);
    *made = 0;
    if (p->slots[p->rq + JR_CLONE]) clones(p, p->cslots, p->cslots, IT_E2E, j->in, made);
    u64 *rq = p->slots + p->rq;
    *recirc = len >= 0 && rq[JR_RECIRC];
    if (len >= 0 && !*recirc && rq[JR_TRUNC] && rq[JR_TRUNC_LEN] < (u64)len)
        len = (long)rq[JR_TRUNC_LEN];
    return len;
}

/* The jobs of an ingress pass that returned `spec` (engine.py's _ingress_end), as a list;
   *drops is set when the pass dropped the packet. A resubmission goes into *resub (a new
   reference to `in`), or, without resub, stops the caller (JOB_E_REQUESTS). */
static job_t *ingress_jobs(pipe_t *p, long spec, frame_t *in, int *drops, rjob_t **resub) {
    job_t *head = 0, **tail = &head;
    *drops = 0;
    if (spec == -1) { *drops = 1; return 0; }
    p->save(p->ctx);
    if (spec >= 0) return make_job(p, p->slots, (uint32_t)spec, IT_NORMAL, in);
    u64 *S = p->slots;
    if (S[p->rq + JR_CLONE]) {   /* the parse of the clone overwrites the slots */
        job_live_copy(p, p->tmp, S);
        S = p->tmp;
        p->parse(p->ctx, (uint32_t)sm_get(p, S, JSM_IN_PORT), in->d, in->len);
        tail = clones(p, S, p->slots, IT_I2E, in, tail);
    }
    if (S[p->rq + JR_RESUB]) {
        if (!resub) { *p->status = JOB_E_REQUESTS; return head; }
        *resub = ingress_again(p, S, S[p->rq + JR_RESUB_FL], IT_RESUBMIT, in);
        if (*resub) in->refs++;
        return head;
    }
    u64 group = sm_get(p, S, JSM_MCAST);
    if (group) {   /* the group's replicas, (rid, port) in order */
        for (uint32_t i = 0; i < p->nmcast; i++) {
            u64 *m = p->mcast + 3 * i;
            if (m[0] != group) continue;
            sm_set(p, S, JSM_RID, m[1] & 0xFFFF);
            sm_set(p, S, JSM_ITYPE, IT_REPLICA);
            S[p->rq + JR_RECIRC] = 0;
            job_t *j = make_job(p, S, (uint32_t)m[2], IT_REPLICA, in);
            if (!j) break;
            *tail = j; tail = &j->next;
        }
        return head;
    }
    u64 out = sm_get(p, S, JSM_SPEC);
    if (out == p->drop_port) { *drops = 1; return head; }
    sm_set(p, S, JSM_ITYPE, IT_NORMAL);
    *tail = make_job(p, S, (uint32_t)out, IT_NORMAL, in);
    return head;
}

/* A table of u64 triples (clone sessions, multicast groups) replaced by a copy of `v`. */
static int set_triples(u64 **at, uint32_t *count, const u64 *v, uint32_t n) {
    u64 *t = malloc(24 * (n + 1));
    if (!t) return -1;
    memcpy(t, v, 24 * n);
    free(*at); *at = t; *count = n;
    return 0;
}
/* A pipe on a context: its passes (fns: ingress, egress of a saved state, state save, ingress
   of a job, parse), slots and clone slots, the state's words, how many leading slots outlive a
   pass, where the requests start, the JSM_* slots, the drop port, the longest headers, the
   field lists (nfls of them in flwords words) and the header slots; 0, or -1 out of memory. */
static int pipe_init(pipe_t *p, void *ctx, void *const *fns, u64 *slots, u64 *cslots,
                     uint32_t words, uint32_t live, uint32_t rq, const uint32_t *sm,
                     u64 drop_port, uint32_t max_hdr, const u64 *fls, uint32_t nfls,
                     uint32_t flwords, const uint32_t *hdr, uint32_t nhdr, int *status) {
    memset(p, 0, sizeof *p);
    p->ctx = ctx; p->ingress = (ingress_fn)fns[0]; p->egress = (egress_fn)fns[1];
    p->save = (save_fn)fns[2]; p->ingress_job = (ingress_job_fn)fns[3];
    p->parse = (parse_fn)fns[4];
    p->slots = slots; p->cslots = cslots; p->words = words; p->live = live; p->rq = rq;
    memcpy(p->sm, sm, sizeof p->sm); p->drop_port = drop_port; p->max_hdr = max_hdr;
    p->status = status;
    p->fls = malloc(8 * (flwords + 1)); p->hdr = malloc(4 * (nhdr + 1));
    p->tmp = malloc(8 * words);
    if (!p->fls || !p->hdr || !p->tmp) return -1;
    memcpy(p->fls, fls, 8 * flwords); p->nfls = nfls;
    memcpy(p->hdr, hdr, 4 * nhdr); p->nhdr = nhdr;
    return set_triples(&p->sessions, &p->nsessions, 0, 0) | set_triples(&p->mcast, &p->nmcast,
                                                                           0, 0);
}
static void pipe_free(pipe_t *p) {
    free(p->sessions); free(p->fls); free(p->mcast); free(p->hdr); free(p->tmp);
}
"""
