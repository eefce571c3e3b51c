"""The fixed C around a generated program: state, bit access, checksums, tables and the passes."""

from __future__ import annotations

HEADER = r"""
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
typedef uint64_t u64;

typedef struct {
    int nrows, nkeys, nparams, default_act;
    u64 *rows;          /* per row and key: kind (0 masked equality, 1 range), a, b */
    int32_t *acts;
    u64 *params;        /* per row: nparams values */
    u64 *default_params;
} table_t;

/* the end-of-pass requests, after the saved cursor registers in F (engine.py reads them) */
#define RQ (NSLOTS + 3)
#define NO_FL 0xFFFFFFFFFFFFFFFFULL  /* clone() without a field list */
#define RQ_CLONE (RQ + 0)
#define RQ_CLONE_SESSION (RQ + 1)
#define RQ_CLONE_FL (RQ + 2)
#define RQ_RECIRC (RQ + 3)
#define RQ_RECIRC_FL (RQ + 4)
#define RQ_TRUNC (RQ + 5)
#define RQ_TRUNC_LEN (RQ + 6)
#define RQ_RESUB (RQ + 7)
#define RQ_RESUB_FL (RQ + 8)

/* Only slots [0, LIVE) (headers, metadata, standard_metadata) and the TAIL words from NSLOTS
   outlive a pass: every other slot is a local or parameter its block writes before reading. */
#define TAIL (3 + 9)
static inline void live_clear(u64 *d) {
    memset(d, 0, LIVE * 8); memset(d + NSLOTS, 0, TAIL * 8);
}
static inline void live_copy(void *d, const void *s) {
    memcpy(d, s, LIVE * 8);
    memcpy((uint8_t *)d + NSLOTS * 8, (const uint8_t *)s + NSLOTS * 8, TAIL * 8);
}

typedef struct ctx {
    u64 F[NSLOTS + TAIL];  /* the slots, pos, plen and count_len when saved, the requests */
    u64 CF[NSLOTS + TAIL];  /* F when egress asked for an E2E clone, before compute */
    const uint8_t *data; uint32_t len, pos;
    uint8_t *out; uint32_t opos;
    u64 plen, count_len, drop_port;
    u64 nerrors, errors[MAX_ERRORS][2];  /* out-of-range accesses: (kind << 32 | array, index) */
    int exited;  /* `exit` ran: the block ends */
    uint32_t parser_limit;
    table_t T[NTABLES];
    u64 *R[NREGISTERS];
    u64 *CP[NCOUNTERS];
    u64 *CB[NCOUNTERS];
    u64 (*draw)(int kind, u64 lo, u64 hi);  /* the pipeline's generator (engine.py) */
    jmp_buf jb;  /* where the running block catches a stack index out of bounds */
    jmp_buf pass_jb;  /* where the pass ends when its loops ran past loop_limit */
    u64 loops, loop_limit;  /* iterations in this pass, Pipeline.max_loop_iterations */
    volatile int stop;  /* the watchdog's request: the pass ends at its next loop iteration */
    int deparsing;  /* the egress pass is in the deparser (a loop-limit drop keeps clones) */
} ctx;

static inline u64 rd(const uint8_t *d, uint32_t pos, int w) {
    uint32_t first = pos >> 3, skip = pos & 7, nb = (skip + w + 7) >> 3;
    unsigned __int128 acc = 0;
    for (uint32_t i = 0; i < nb; i++) acc = (acc << 8) | d[first + i];
    acc >>= nb * 8 - skip - w;
    return w == 64 ? (u64)acc : (u64)acc & ((1ULL << w) - 1);
}

static inline void wr(uint8_t *o, uint32_t pos, int w, u64 v) {
    uint32_t first = pos >> 3, skip = pos & 7, nb = (skip + w + 7) >> 3;
    unsigned __int128 acc = (unsigned __int128)v << (nb * 8 - skip - w);
    for (uint32_t i = 0; i < nb; i++) o[first + i] |= (uint8_t)(acc >> (8 * (nb - 1 - i)));
}

static void range_error(ctx *c, u64 what, u64 index) {
    if (c->nerrors < MAX_ERRORS) {
        c->errors[c->nerrors][0] = what;
        c->errors[c->nerrors][1] = index;
    }
    c->nerrors++;
}

static inline u64 si(ctx *c, u64 index, u64 size) {  /* a stack index checked at run time */
    if (index >= size) longjmp(c->jb, 1);
    return index;
}

static void loop_limit(ctx *c, u64 loop) {  /* the loop ran past the pass's bound, or the
                                             watchdog stopped the pass (no log line) */
    if (!c->stop) range_error(c, (4ULL << 32) | loop, c->loop_limit);
    longjmp(c->pass_jb, 1);
}

static inline u64 rdb(const uint8_t *d, int n) {  /* n whole bytes, big-endian */
    u64 v = 0;
    for (int i = 0; i < n; i++) v = (v << 8) | d[i];
    return v;
}

static inline void wrb(uint8_t *o, int n, u64 v) {
    for (int i = n - 1; i >= 0; i--) { o[i] = (uint8_t)v; v >>= 8; }
}

static inline u64 csum16(const uint8_t *b, uint32_t n) {
    u64 sum = 0;
    for (uint32_t i = 0; i + 1 < n; i += 2) sum += ((u64)b[i] << 8) | b[i + 1];
    if (n & 1) sum += (u64)b[n - 1] << 8;
    while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
    return ~sum & 0xFFFF;
}

/* v1model's hash algorithms (BMv2's definitions) over n bytes */
static u64 crc16(const uint8_t *b, uint32_t n) {  /* CRC-16/ARC */
    u64 crc = 0;
    for (uint32_t i = 0; i < n; i++) {
        crc ^= b[i];
        for (int k = 0; k < 8; k++) crc = (crc & 1) ? (crc >> 1) ^ 0xA001 : crc >> 1;
    }
    return crc;
}
static u64 crc32(const uint8_t *b, uint32_t n) {  /* CRC-32/IEEE 802.3 */
    u64 crc = 0xFFFFFFFFULL;
    for (uint32_t i = 0; i < n; i++) {
        crc ^= b[i];
        for (int k = 0; k < 8; k++) crc = (crc & 1) ? (crc >> 1) ^ 0xEDB88320ULL : crc >> 1;
    }
    return crc ^ 0xFFFFFFFFULL;
}
static u64 xor16(const uint8_t *b, uint32_t n) {  /* big-endian words, a last odd byte high */
    u64 x = 0;
    for (uint32_t i = 0; i < n; i += 2) x ^= ((u64)b[i] << 8) | (i + 1 < n ? b[i + 1] : 0);
    return x;
}
static u64 identity(const uint8_t *b, uint32_t n) {  /* the first min(8, n) bytes */
    u64 v = 0;
    for (uint32_t i = 0; i < n && i < 8; i++) v = (v << 8) | b[i];
    return v;
}

static inline u64 dv(u64 a, u64 b, u64 m) { (void)m; return b ? a / b : 0; }
static inline u64 md(u64 a, u64 b, u64 m) { (void)m; return b ? a % b : 0; }
static inline u64 sadd(u64 a, u64 b, u64 m) { u64 s = a + b; return (s < a || s > m) ? m : s; }
static inline u64 ssub(u64 a, u64 b, u64 m) { (void)m; return a > b ? a - b : 0; }
static inline u64 shl(u64 a, u64 n, int w) {
    if (n >= (u64)w) return 0;
    return w == 64 ? a << n : (a << n) & ((1ULL << w) - 1);
}
static inline u64 shr(u64 a, u64 n) { return n >= 64 ? 0 : a >> n; }
static inline int64_t sx(u64 a, int w) {  /* the W-bit pattern's value */
    return w == 64 ? (int64_t)a : (int64_t)(a << (64 - w)) >> (64 - w);
}
static inline u64 sshr(u64 a, u64 n, int w) {
    u64 v = (u64)(sx(a, w) >> (n > 63 ? 63 : n));
    return w == 64 ? v : v & ((1ULL << w) - 1);
}
static inline u64 sat(int64_t lo, int64_t hi, __int128 v, int w) {
    if (v < lo) v = lo;
    if (v > hi) v = hi;
    return w == 64 ? (u64)v : (u64)v & ((1ULL << w) - 1);
}
static inline int64_t smin(int w) { return w == 64 ? INT64_MIN : -((int64_t)1 << (w - 1)); }
static inline int64_t smax(int w) { return w == 64 ? INT64_MAX : ((int64_t)1 << (w - 1)) - 1; }
static inline u64 sadds(u64 a, u64 b, int w) {
    return sat(smin(w), smax(w), (__int128)sx(a, w) + sx(b, w), w);
}
static inline u64 ssubs(u64 a, u64 b, int w) {
    return sat(smin(w), smax(w), (__int128)sx(a, w) - sx(b, w), w);
}

static inline void lookup(const table_t *t, const u64 *key, int nkeys, int *act,
                          const u64 **p, int *hit) {
    const u64 *row = t->rows;
    for (int r = 0; r < t->nrows; r++, row += 3 * nkeys) {
        int k = 0;
        for (; k < nkeys; k++) {
            const u64 *m = row + 3 * k;
            if (m[0] ? (key[k] < m[1] || key[k] > m[2]) : ((key[k] & m[1]) != m[2])) break;
        }
        if (k == nkeys) {
            *act = t->acts[r]; *p = t->params + (u64)r * t->nparams; *hit = 1;
            return;
        }
    }
    *act = t->default_act; *p = t->default_params; *hit = 0;
}
"""

API = r"""
ctx *lg_new(void) { return calloc(1, sizeof(ctx)); }
void lg_free(ctx *c) { free(c); }
long lg_nop(ctx *c, uint32_t port, const uint8_t *data, uint32_t len, u64 now) {
    (void)c; (void)port; (void)data; (void)len; (void)now; return 0;  /* call cost */
}
u64 *lg_slots(ctx *c) { return c->F; }
u64 *lg_clone_slots(ctx *c) { return c->CF; }
int *lg_stop(ctx *c) { return (int *)&c->stop; }

/* The state a packet takes from ingress to egress: the slots and the cursor registers, saved
   in place (the caller copies F's live words) or restored from a copy. */
void lg_state_save(ctx *c) {
    c->F[NSLOTS] = c->pos; c->F[NSLOTS + 1] = c->plen; c->F[NSLOTS + 2] = c->count_len;
}
static void state_restore(ctx *c, const uint8_t *state, const uint8_t *data, uint32_t len) {
    live_copy(c->F, state);
    c->pos = (uint32_t)c->F[NSLOTS]; c->plen = c->F[NSLOTS + 1]; c->count_len = c->F[NSLOTS + 2];
    c->data = data; c->len = len;
}
u64 *lg_errors(ctx *c) { return &c->nerrors; }
void lg_rng(ctx *c, u64 (*draw)(int, u64, u64)) { c->draw = draw; }
void lg_config(ctx *c, u64 drop_port, uint32_t parser_limit, u64 loop_limit) {
    c->drop_port = drop_port; c->parser_limit = parser_limit; c->loop_limit = loop_limit;
}
void lg_array(ctx *c, int kind, int i, u64 *a, u64 *b) {
    if (kind == 0) c->R[i] = a; else { c->CP[i] = a; c->CB[i] = b; }
}
void lg_table(ctx *c, int i, int nrows, int nkeys, int nparams, u64 *rows, int32_t *acts,
              u64 *params, int default_act, u64 *default_params) {
    table_t *t = &c->T[i];
    t->nrows = nrows; t->nkeys = nkeys; t->nparams = nparams; t->rows = rows; t->acts = acts;
    t->params = params; t->default_act = default_act; t->default_params = default_params;
}

static long ingress_body(ctx *c, const uint8_t *data, uint32_t len) {
    c->loops = 0;
    if (setjmp(c->pass_jb)) return -1;  /* past the loop bound: dropped */
    c->data = data; c->len = len; c->pos = 0; c->plen = len; c->count_len = len;
    c->F[SM_packet_length] = len;
    blk_p(c);
    blk_vr(c);
    blk_ig(c);
    if (c->F[RQ_CLONE] || c->F[RQ_RESUB] || c->F[SM_mcast_grp]) return -3;  /* engine.py's */
    if (c->F[SM_egress_spec] == c->drop_port) return -1;
    c->F[SM_instance_type] = 0;
    return (long)c->F[SM_egress_spec];
}

/* An ingress pass: the egress spec of the packet, -1 when it is dropped, -3 when it cloned,
   resubmitted or multicast (the caller makes the jobs). `data` must stay valid until its
   egress pass (the payload is read from it). */
long lg_ingress(ctx *c, uint32_t port, const uint8_t *data, uint32_t len, u64 now) {
    live_clear(c->F);
    c->F[SM_ingress_port] = port & 0x1FF;
    c->F[SM_ingress_global_timestamp] = now & 0xFFFFFFFFFFFFULL;
    c->F[SM_instance_type] = 0;
    return ingress_body(c, data, len);
}

/* An ingress pass of a recirculated or resubmitted packet: `pre` holds (slot, value) pairs of
   its preserved field list. */
long lg_ingress_job(ctx *c, const uint8_t *data, uint32_t len, u64 now, u64 instance_type,
                    const u64 *pre, uint32_t npre) {
    live_clear(c->F);
    for (uint32_t i = 0; i < npre; i++) c->F[pre[2 * i]] = pre[2 * i + 1];
    if (instance_type == 0) {
        c->F[SM_ingress_port] = 0;
        c->F[SM_ingress_global_timestamp] = now & 0xFFFFFFFFFFFFULL;
    }
    c->F[SM_instance_type] = instance_type;
    return ingress_body(c, data, len);
}

/* An I2E clone's parse of the original bytes (fresh slots, ingress_port set), saved in F. */
void lg_parse(ctx *c, uint32_t port, const uint8_t *data, uint32_t len) {
    live_clear(c->F);
    c->F[SM_ingress_port] = port;
    c->data = data; c->len = len; c->pos = 0; c->plen = len; c->count_len = len;
    c->loops = 0;
    if (setjmp(c->pass_jb)) return;
    blk_p(c);
    blk_vr(c);
    lg_state_save(c);
}

/* The egress pass of the packet ingress last accepted: the bytes to transmit in `out` (room
   for the input plus every header), their length, or -1 when egress drops it. */
long lg_egress(ctx *c, u64 port, u64 instance_type, u64 now, u64 enq_qdepth, u64 deq_qdepth,
               u64 enq_ts, u64 deq_td, uint8_t *out) {
    c->F[SM_egress_port] = port & 0x1FF;
    c->F[SM_egress_spec] = 0;
    c->F[SM_packet_length] = c->plen;
    c->F[SM_instance_type] = instance_type;
    SET_OPTIONAL
    c->F[SM_egress_global_timestamp] = now & 0xFFFFFFFFFFFFULL;
    c->F[RQ_CLONE] = 0;
    c->loops = 0; c->deparsing = 0;
    if (setjmp(c->pass_jb)) {  /* past the loop bound: dropped (an E2E clone of egress kept
                                  only when the deparser ran past it) */
        if (!c->deparsing) c->F[RQ_CLONE] = 0;
        return -1;
    }
    blk_eg(c);
    if (c->F[RQ_CLONE]) { lg_state_save(c); live_copy(c->CF, c->F); }
    if (c->F[SM_egress_spec] == c->drop_port) return -1;
    blk_ck(c);
    c->out = out; c->opos = 0;
    memset(out, 0, MAX_HEADER_BYTES);
    c->deparsing = 1;
    blk_dep(c);
    uint32_t hlen = c->opos >> 3, start = c->pos >> 3;
    uint32_t rest = c->len > start ? c->len - start : 0;
    memcpy(out + hlen, c->data + start, rest);
    return (long)(hlen + rest);
}

/* The egress pass of a saved packet (lg_state_save after its ingress). */
long lg_egress_saved(ctx *c, const uint8_t *state, const uint8_t *data, uint32_t len, u64 port,
                     u64 instance_type, u64 now, u64 enq_qdepth, u64 deq_qdepth, u64 enq_ts,
                     u64 deq_td, uint8_t *out) {
    state_restore(c, state, data, len);
    return lg_egress(c, port, instance_type, now, enq_qdepth, deq_qdepth, enq_ts, deq_td, out);
}

/* Both passes of one packet, as the untimed driver runs them (egress at `now_eg`, its queue
   empty): -1 when ingress drops it, -2 when egress does, else its length * 1024 + port. */
long lg_run(ctx *c, uint32_t port, const uint8_t *data, uint32_t len, u64 now_in, u64 now_eg,
            uint8_t *out) {
    long spec = lg_ingress(c, port, data, len, now_in);
    if (spec < 0) return spec;  /* -3: jobs to make (a program with requests: not for lg_run) */
    long n = lg_egress(c, (u64)spec, 0, now_eg, 0, 0, now_eg, 0, out);
    return n < 0 ? -2 : n * 1024 + (spec & 0x3FF);
}
"""

MAX_ERRORS = 256  # out-of-range accesses one pass records for the log (more are counted)
OPTIONAL_SM = {"enq_timestamp": ("enq_ts", "0xFFFFFFFFULL"),
               "enq_qdepth": ("enq_qdepth", "0x7FFFFULL"),
               "deq_timedelta": ("deq_td", "0xFFFFFFFFULL"),
               "deq_qdepth": ("deq_qdepth", "0x7FFFFULL"),
               "egress_rid": ("c->F[SM_egress_rid]", "0xFFFFULL")}


def program_source(nslots: int, ntables: int, nregisters: int, ncounters: int,
                   functions: list[str], bodies: dict[str, str], sm: dict[str, int],
                   max_header_bytes: int = 0, live: int = 0) -> str:
    """The whole C file: the fixed parts with the program's sizes, its functions and blocks."""
    defines = [f"#define NSLOTS {max(nslots, 1)}", f"#define LIVE {live}",
               f"#define NTABLES {max(ntables, 1)}",
               f"#define NREGISTERS {max(nregisters, 1)}", f"#define NCOUNTERS {max(ncounters, 1)}",
               f"#define MAX_HEADER_BYTES {max_header_bytes}", f"#define MAX_ERRORS {MAX_ERRORS}"]
    defines += [f"#define SM_{name} {slot}" for name, slot in sorted(sm.items())]
    protos = [f.split("{", 1)[0].rstrip() + ";" for f in functions]
    blocks = [f"static void blk_{key}(ctx *c) {{\n{body}\n}}" for key, body in bodies.items()]
    optional = " ".join(f"c->F[SM_{name}] = {value} & {m};"
                        for name, (value, m) in OPTIONAL_SM.items() if name in sm)
    return "\n".join([*defines, HEADER, *protos, *functions, *blocks,
                      API.replace("SET_OPTIONAL", optional)]) + "\n"
