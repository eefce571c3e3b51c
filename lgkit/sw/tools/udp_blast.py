"""The forwarding benchmark's UDP sender and receiver in C, built into the native cache: a Python
sender tops out near 40 k frames/s on a loaded machine, below what a native switch forwards.
Same arguments and output as the Python ones; the sender given an interface and the next hop's
MAC as well sends the same datagrams as whole frames through a PACKET_MMAP transmit ring (the
host's UDP/IP stack off its path: more frames per core than its sendmmsg batches; flat out, or
paced to a given rate), else sendmmsg batches; the receiver reads recvmmsg batches, or given
an interface counts the datagrams at that port instead: a BPF program counts and drops them
before the host's IP stack, as a hardware tester counts frames at its port, on the port's tc
ingress (a tcx link, Linux 6.6 or later) or as a generic XDP program (Linux 5.9 or later)."""

from __future__ import annotations

from lgkit.sw.exec.native.build import compiled
from lgkit.sw.exec.native.layout import Unsupported

SENDER = r"""
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <net/if.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#define BATCH 64
#define SLOT 2048
#define SLOTS 1024
static double now(void) {
    struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec / 1e9;
}
/* The datagram as the UDP socket `s` would frame it on `ifname` towards `mac` (IPv4 header
   checksum computed, UDP checksum 0: none); its length, 0 on a failure. */
static size_t frame_of(int s, const char *ifname, const char *mac, size_t size, uint8_t *f) {
    struct sockaddr_in me, peer;
    socklen_t a = sizeof me, b = sizeof peer;
    struct ifreq ifr = {0};
    unsigned m[6];
    if (getsockname(s, (struct sockaddr *)&me, &a) < 0 ||
        getpeername(s, (struct sockaddr *)&peer, &b) < 0 || strlen(ifname) >= IFNAMSIZ ||
        sscanf(mac, "%x:%x:%x:%x:%x:%x", &m[0], &m[1], &m[2], &m[3], &m[4], &m[5]) != 6)
        return 0;
    strcpy(ifr.ifr_name, ifname);
    if (ioctl(s, SIOCGIFHWADDR, &ifr) < 0) return 0;
    size_t len = 14 + 20 + 8 + size;
    if (len > SLOT - TPACKET2_HDRLEN) return 0;
    memset(f, 'x', len);
    for (int i = 0; i < 6; i++) f[i] = (uint8_t)m[i];
    memcpy(f + 6, ifr.ifr_hwaddr.sa_data, 6);
    f[12] = 0x08; f[13] = 0x00;
    uint8_t *ip = f + 14, *udp = ip + 20;
    uint16_t words[10];
    ip[0] = 0x45; ip[1] = 0; ip[2] = (uint8_t)((len - 14) >> 8); ip[3] = (uint8_t)(len - 14);
    memset(ip + 4, 0, 4); ip[6] = 0x40;  /* don't fragment */
    ip[8] = 64; ip[9] = 17; ip[10] = ip[11] = 0;
    memcpy(ip + 12, &me.sin_addr, 4); memcpy(ip + 16, &peer.sin_addr, 4);
    memcpy(words, ip, 20);
    uint32_t sum = 0;
    for (int i = 0; i < 10; i++) sum += ntohs(words[i]);
    while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
    ip[10] = (uint8_t)(~sum >> 8); ip[11] = (uint8_t)~sum;
    memcpy(udp, &me.sin_port, 2); memcpy(udp + 2, &peer.sin_port, 2);
    udp[4] = (uint8_t)((8 + size) >> 8); udp[5] = (uint8_t)(8 + size); udp[6] = udp[7] = 0;
    return len;
}
/* Frames through a PACKET_MMAP transmit ring on `ifname`: the host's UDP/IP stack is not on
   the sending path, so one core sends more than a UDP socket's sendmmsg does. At `pps` > 0 a
   batch waits until the frames sent so far are due at that rate (a steady offered load, the
   process asleep meanwhile), else flat out. */
static long blast_raw(int s, const char *ifname, const char *mac, size_t size, double secs,
                      double pps) {
    uint8_t f[SLOT];
    size_t len = frame_of(s, ifname, mac, size, f);
    int r = socket(AF_PACKET, SOCK_RAW, 0), version = TPACKET_V2;
    struct tpacket_req req = {SLOT * 32, SLOTS / 32, SLOT, SLOTS};
    struct sockaddr_ll at = {0};
    at.sll_family = AF_PACKET; at.sll_ifindex = (int)if_nametoindex(ifname);
    if (!len || r < 0 || !at.sll_ifindex ||
        setsockopt(r, SOL_PACKET, PACKET_VERSION, &version, sizeof version) < 0 ||
        setsockopt(r, SOL_PACKET, PACKET_TX_RING, &req, sizeof req) < 0 ||
        bind(r, (struct sockaddr *)&at, sizeof at) < 0) { perror("raw sender"); exit(1); }
    uint8_t *ring = mmap(NULL, (size_t)SLOT * SLOTS, PROT_READ | PROT_WRITE, MAP_SHARED, r, 0);
    if (ring == MAP_FAILED) { perror("mmap"); exit(1); }
    size_t off = TPACKET2_HDRLEN - sizeof(struct sockaddr_ll);
    for (int i = 0; i < SLOTS; i++) memcpy(ring + (size_t)i * SLOT + off, f, len);
    long sent = 0;
    unsigned next = 0;
    double start = now(), t;
    while ((t = now()) < start + secs) {
        double ahead = pps > 0 ? sent / pps - (t - start) : 0;
        if (ahead > 0) {
            struct timespec nap = {(time_t)ahead, (long)((ahead - (time_t)ahead) * 1e9)};
            nanosleep(&nap, NULL);
            continue;
        }
        for (int i = 0; i < BATCH; i++) {
            struct tpacket2_hdr *h = (struct tpacket2_hdr *)(ring + (size_t)next * SLOT);
            if (__atomic_load_n(&h->tp_status, __ATOMIC_ACQUIRE) != TP_STATUS_AVAILABLE) break;
            h->tp_len = (uint32_t)len;
            __atomic_store_n(&h->tp_status, TP_STATUS_SEND_REQUEST, __ATOMIC_RELEASE);
            next = (next + 1) % SLOTS;
        }
        long n = send(r, NULL, 0, 0);
        if (n > 0) sent += n / (long)len;
    }
    return sent;
}
int main(int argc, char **argv) {
    if (argc != 5 && argc != 7 && argc != 8) return 2;
    int s = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET; a.sin_port = htons(atoi(argv[2]));
    if (inet_pton(AF_INET, argv[1], &a.sin_addr) != 1) return 2;
    if (connect(s, (struct sockaddr *)&a, sizeof a) < 0) { perror("connect"); return 1; }
    size_t size = (size_t)atoi(argv[3]);
    if (argc >= 7) {  /* IFNAME NEXT_HOP_MAC [PPS]: through a transmit ring */
        double pps = argc == 8 ? atof(argv[7]) : 0;
        printf("%ld\n", blast_raw(s, argv[5], argv[6], size, atof(argv[4]), pps));
        return 0;
    }
    char *payload = calloc(1, size + 1);
    memset(payload, 'x', size);
    struct iovec v = {payload, size};
    struct mmsghdr m[BATCH];
    memset(m, 0, sizeof m);
    for (int i = 0; i < BATCH; i++) { m[i].msg_hdr.msg_iov = &v; m[i].msg_hdr.msg_iovlen = 1; }
    double end = now() + atof(argv[4]);
    long sent = 0;
    while (now() < end) {
        int n = sendmmsg(s, m, BATCH, 0);
        if (n > 0) sent += n;
    }
    printf("%ld\n", sent);
    return 0;
}
"""

RECEIVER = r"""
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#define BATCH 64
#define SLOT 2048
#define TCX_INGRESS 46   /* BPF_TCX_INGRESS (Linux 6.6), newer than some distributions' headers */
#define XDP_SKB_MODE 2   /* XDP_FLAGS_SKB_MODE (linux/if_link.h): generic XDP */
#define ENOTSUPP 524     /* the kernel's own "not supported", not in the C library's errno.h */
#define POLL_US 2000     /* the port counter's reads: 2 ms against runs of seconds */
#define INSN(code, dst, src, off, imm) ((struct bpf_insn){code, dst, src, off, imm})
static double now(void) {
    struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec / 1e9;
}
static void timeout(int s, double secs) {
    struct timeval tv = {(time_t)secs, (suseconds_t)((secs - (time_t)secs) * 1e6)};
    setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
}
static long bpf(int cmd, union bpf_attr *a) { return syscall(__NR_bpf, cmd, a, sizeof *a); }
/* The program's end: count in map[0] and return `drop`; then "pass", the last two
   instructions, where the match's misses jump: return `pass`. */
static int count_tail(struct bpf_insn *p, int n, int map, int drop, int pass) {
    struct bpf_insn t[] = {
        INSN(BPF_ST | BPF_MEM | BPF_W, 10, 0, -4, 0),        /* key 0 on the stack */
        INSN(BPF_ALU64 | BPF_MOV | BPF_X, 2, 10, 0, 0),
        INSN(BPF_ALU64 | BPF_ADD | BPF_K, 2, 0, 0, -4),
        INSN(BPF_LD | BPF_DW | BPF_IMM, 1, BPF_PSEUDO_MAP_FD, 0, map),
        INSN(0, 0, 0, 0, 0),
        INSN(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_map_lookup_elem),
        INSN(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 2, 0),
        INSN(BPF_ALU64 | BPF_MOV | BPF_K, 1, 0, 0, 1),
        INSN(BPF_STX | BPF_XADD | BPF_DW, 0, 1, 0, 0),       /* atomic: any CPU may run it */
        INSN(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, drop),
        INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
        INSN(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, pass),
        INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
    };
    memcpy(p + n, t, sizeof t);
    return n + (int)(sizeof t / sizeof t[0]);
}
/* The counter's instructions into `p` (their number): IPv4 UDP datagrams (20 B IP header, as
   the sender's) to `port` counted and `drop`ped, any other frame `pass`ed. tc reads the fields
   with LD_ABS (any skb, linear or not, in host order; a frame too short for them ends the
   program with 0: passed); XDP allows no LD_ABS, so it reads them by direct packet access,
   the frame's first 38 bytes checked against data_end, 16-bit fields swapped from network
   order. */
static int counter_insns(struct bpf_insn *p, int xdp, int map, int port, int drop, int pass) {
    const struct { int off, size, value; } want[] = {
        {12, BPF_H, 0x0800}, {14, BPF_B, 0x45}, {23, BPF_B, 17}, {36, BPF_H, port},
    };  /* EtherType IPv4, version 4 with IHL 5, protocol UDP, destination port */
    int n = 0, miss[8], m = 0;
    if (xdp) {
        p[n++] = INSN(BPF_LDX | BPF_MEM | BPF_W, 2, 1, 0, 0);      /* r2 = data */
        p[n++] = INSN(BPF_LDX | BPF_MEM | BPF_W, 3, 1, 4, 0);      /* r3 = data_end */
        p[n++] = INSN(BPF_ALU64 | BPF_MOV | BPF_X, 4, 2, 0, 0);
        p[n++] = INSN(BPF_ALU64 | BPF_ADD | BPF_K, 4, 0, 0, 38);
        miss[m++] = n;
        p[n++] = INSN(BPF_JMP | BPF_JGT | BPF_X, 4, 3, 0, 0);      /* shorter than 38 B */
    } else {
        p[n++] = INSN(BPF_ALU64 | BPF_MOV | BPF_X, 6, 1, 0, 0);    /* r6 = the skb, for LD_ABS */
    }
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        if (!xdp) {
            p[n++] = INSN(BPF_LD | BPF_ABS | want[i].size, 0, 0, 0, want[i].off);
        } else {
            p[n++] = INSN(BPF_LDX | BPF_MEM | want[i].size, 0, 2, want[i].off, 0);
            if (want[i].size == BPF_H) p[n++] = INSN(BPF_ALU | BPF_END | BPF_TO_BE, 0, 0, 0, 16);
        }
        miss[m++] = n;
        p[n++] = INSN(BPF_JMP | BPF_JNE | BPF_K, 0, 0, 0, want[i].value);
    }
    n = count_tail(p, n, map, drop, pass);
    for (int i = 0; i < m; i++) p[miss[i]].off = (int16_t)(n - 2 - miss[i] - 1);  /* to "pass" */
    return n;
}
/* The port counter's hooks: a tc ingress program on a tcx link (Linux 6.6), else a generic
   (skb-mode) XDP program on an XDP link (Linux 5.9), each counting and dropping alike. The tc
   program is loaded with no expected attach type (tcx needs none), so a kernel without tcx
   loads it and refuses the link: there the fallback is decided. */
struct hook { const char *name, *what; int prog_type, expect, attach, flags, drop, pass; };
static const struct hook HOOKS[] = {
    {"tcx", "a tc ingress (tcx) BPF link (Linux 6.6 or later)", BPF_PROG_TYPE_SCHED_CLS, 0,
     TCX_INGRESS, 0, 2 /* TC_ACT_SHOT */, 0 /* TC_ACT_OK */},
    {"xdp", "a generic XDP BPF link (Linux 5.9 or later)", BPF_PROG_TYPE_XDP, BPF_XDP, BPF_XDP,
     XDP_SKB_MODE, 1 /* XDP_DROP */, 2 /* XDP_PASS */},
};
/* The counter program for `h` loaded, or -1 (errno set). */
static int counter_prog(const struct hook *h, int map, int port) {
    struct bpf_insn p[64];
    int n = counter_insns(p, h->prog_type == BPF_PROG_TYPE_XDP, map, port, h->drop, h->pass);
    union bpf_attr a;
    memset(&a, 0, sizeof a);
    a.prog_type = (uint32_t)h->prog_type; a.expected_attach_type = (uint32_t)h->expect;
    a.insns = (uintptr_t)p; a.insn_cnt = (uint32_t)n; a.license = (uintptr_t)"GPL";
    return (int)bpf(BPF_PROG_LOAD, &a);
}
/* `h`'s program attached to `ifindex`: 0, or 1 when the kernel lacks the hook, -1 on another
   error (errno set: "why" says what failed). */
static int attach(const struct hook *h, int map, int port, unsigned ifindex, const char **why) {
    int prog = counter_prog(h, map, port);
    *why = "its program refused";
    if (prog < 0) return -1;
    union bpf_attr a;
    memset(&a, 0, sizeof a);
    a.link_create.prog_fd = (uint32_t)prog; a.link_create.attach_type = (uint32_t)h->attach;
    a.link_create.target_ifindex = ifindex; a.link_create.flags = (uint32_t)h->flags;
    *why = "not on this kernel";
    if (bpf(BPF_LINK_CREATE, &a) >= 0) return 0;
    int e = errno;
    close(prog);
    errno = e;
    return e == EINVAL || e == EOPNOTSUPP || e == ENOTSUPP ? 1 : -1;
}
/* The counter's map and program attached to `ifname`'s ingress through `hook` ("tcx", "xdp",
   or "auto": tcx, else XDP when the kernel has no tcx); the map's fd after a line
   "listening HOOK" on stdout, or -1 after a line on stderr. The attachment lasts as long as
   this process (its link fd). */
static int port_counter(const char *ifname, int port, const char *hook) {
    unsigned ifindex = if_nametoindex(ifname);
    if (!ifindex) {
        fprintf(stderr, "cannot count at port %s: no such interface\n", ifname);
        return -1;
    }
    union bpf_attr a;
    memset(&a, 0, sizeof a);
    a.map_type = BPF_MAP_TYPE_ARRAY; a.key_size = 4; a.value_size = 8; a.max_entries = 1;
    int map = (int)bpf(BPF_MAP_CREATE, &a);
    if (map < 0) {
        fprintf(stderr, "cannot count at port %s: a BPF map: %s (root)\n", ifname,
                strerror(errno));
        return -1;
    }
    char missing[512] = "";
    for (size_t i = 0; i < sizeof HOOKS / sizeof HOOKS[0]; i++) {
        const struct hook *h = &HOOKS[i];
        if (strcmp(hook, "auto") && strcmp(hook, h->name)) continue;
        const char *why;
        int r = attach(h, map, port, ifindex, &why);
        if (!r) { printf("listening %s\n", h->name); fflush(stdout); return map; }
        size_t used = strlen(missing);
        snprintf(missing + used, sizeof missing - used, "%s%s: %s (%s)", used ? "; nor " : "",
                 h->what, why, strerror(errno));
        if (r < 0) break;  /* not a missing hook: no fallback hides it */
    }
    fprintf(stderr, "cannot count at port %s: %s\n", ifname,
            *missing ? missing : "no such hook (auto, tcx or xdp)");
    return -1;
}
static long counted(int map) {
    uint32_t key = 0;
    uint64_t value = 0;
    union bpf_attr a;
    memset(&a, 0, sizeof a);
    a.map_fd = (uint32_t)map; a.key = (uintptr_t)&key; a.value = (uintptr_t)&value;
    return bpf(BPF_MAP_LOOKUP_ELEM, &a) < 0 ? -1 : (long)value;
}
/* Frames counted at the port between the first and the last reads that saw the count move
   (frames and time between two reads, as the socket's count runs from its first frame to its
   last), and all it counted ("total"), ending 1 s after the last move, or `secs` + 5 s
   without any. */
static int count_at_port(const char *ifname, int port, double secs,
                         const char *hook) {
    int map = port_counter(ifname, port, hook);
    if (map < 0) return 1;
    long seen = 0, first = -1;
    double start = now(), t0 = 0, t1 = 0;
    for (;;) {
        usleep(POLL_US);
        long c = counted(map);
        double t = now();
        if (c < 0) { perror("port counter"); return 1; }
        if (c != seen) {
            if (first < 0) { first = c; t0 = t; }
            seen = c; t1 = t;
        }
        if (first >= 0 ? t - t1 > 1.0 : t - start > secs + 5) break;
    }
    printf("{\"count\": %ld, \"seconds\": %f, \"total\": %ld}\n",
           first < 0 ? 0 : seen - first, first < 0 ? 0.0 : t1 - t0, seen);
    return 0;
}
int main(int argc, char **argv) {
    if (argc != 3 && argc != 5) return 2;
    if (argc == 5) return count_at_port(argv[3], atoi(argv[1]), atof(argv[2]), argv[4]);
    int s = socket(AF_INET, SOCK_DGRAM, 0), big = 8 << 20;
    setsockopt(s, SOL_SOCKET, SO_RCVBUF, &big, sizeof big);
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET; a.sin_port = htons(atoi(argv[1]));
    if (bind(s, (struct sockaddr *)&a, sizeof a) < 0) { perror("bind"); return 1; }
    static char buf[BATCH][SLOT];
    struct iovec v[BATCH];
    struct mmsghdr m[BATCH];
    memset(m, 0, sizeof m);
    for (int i = 0; i < BATCH; i++) {
        v[i].iov_base = buf[i]; v[i].iov_len = SLOT;
        m[i].msg_hdr.msg_iov = &v[i]; m[i].msg_hdr.msg_iovlen = 1;
    }
    printf("listening\n"); fflush(stdout);
    timeout(s, atof(argv[2]) + 5);
    long count = 0;
    double first = 0, last = 0;
    for (;;) {
        int n = recvmmsg(s, m, BATCH, count ? MSG_DONTWAIT : MSG_WAITFORONE, NULL);
        if (n <= 0 && count) n = recvmmsg(s, m, BATCH, MSG_WAITFORONE, NULL);
        if (n <= 0) break;
        last = now();
        if (!count) { first = last; timeout(s, 1.0); }
        count += n;
    }
    printf("{\"count\": %ld, \"seconds\": %f}\n", count, count ? last - first : 0.0);
    return 0;
}
"""


def programs() -> tuple[str, str] | None:
    """(sender, receiver) executables, or None without a working C compiler."""
    try:
        return (str(compiled(SENDER, ["-O2"], ".udp-sender")),
                str(compiled(RECEIVER, ["-O2"], ".udp-receiver")))
    except Unsupported:
        return None
