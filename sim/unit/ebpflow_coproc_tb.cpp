// Drives rtl/ebpflow/ebpflow_coproc.sv (built with -GENGINES=4: requesters 0..3 are engines, 4 is the host) through
// queues of requests, one queue per requester, and prints what each request got and when.
//
// Input lines:
//   map IDX TYPE KSZ VSZ MAX            write map-table entry IDX; answers "map ERR" (ERR: mt_err_o, 0 or 1)
//   q R h ID MAP FLAGS KEYHEX VALHEX    queue on requester R a helper call (r1 = MAP, r4 = FLAGS, the key and value
//                                       bytes: byte 0 first, "-" for none)
//   q R m WE AT OFF SIZE WDATA CMP      queue a map-value access at R's last answer (a lookup's address) + OFF: WE 1
//                                       store, AT the atomic (0 none, 1 add .. 6 cmpxchg), SIZE log2 bytes, WDATA and
//                                       CMP hex; for the host (R = 4) a word read (host id 256) at that address + OFF.
//                                       "The last answer" is the last lookup's (helper 1) r0
//   run                                 starts every queue at cycle 1: requester R raises its next request in the cycle
//                                       after its last ack; prints one line per request, then "end CYCLES"
// Output per request: "r R SEQ REQ ACK VALUE FAULT" (REQ the cycle its request went up, ACK the cycle of its ack,
// VALUE r0 or the loaded bytes, hex), or "s R SEQ" when a map-value access had no address (the last answer was 0).

#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "Vebpflow_coproc.h"
#include "verilated.h"

namespace {

constexpr int kEngines = 4;
constexpr int kHost = kEngines;
constexpr int kKeyBytes = 16;
constexpr int kValBytes = 32;
constexpr uint64_t kMapvBase = 0x01000000;

template <std::size_t N>
void set_bits(VlWide<N>& w, int lsb, int width, uint64_t v) {
    for (int i = 0; i < width; ++i) {
        int b = lsb + i;
        uint32_t mask = 1u << (b % 32);
        if ((v >> i) & 1) {
            w[b / 32] |= mask;
        } else {
            w[b / 32] &= ~mask;
        }
    }
}

template <std::size_t N>
uint64_t get_bits(const VlWide<N>& w, int lsb, int width) {
    uint64_t v = 0;
    for (int i = 0; i < width; ++i) {
        int b = lsb + i;
        v |= static_cast<uint64_t>((w[b / 32] >> (b % 32)) & 1) << i;
    }
    return v;
}

template <std::size_t N>
void set_bytes(VlWide<N>& w, int lsb, const std::vector<uint8_t>& bytes, int count) {
    for (int i = 0; i < count; ++i) {
        set_bits(w, lsb + 8 * i, 8, i < static_cast<int>(bytes.size()) ? bytes[i] : 0);
    }
}

std::vector<uint8_t> unhex(const char* s) {
    std::vector<uint8_t> out;
    if (std::strcmp(s, "-") == 0) return out;
    for (std::size_t i = 0; s[i] && s[i + 1]; i += 2) {
        char b[3] = {s[i], s[i + 1], 0};
        out.push_back(static_cast<uint8_t>(std::strtoul(b, nullptr, 16)));
    }
    return out;
}

struct Req {
    bool helper = true;
    uint32_t id = 0;
    uint64_t map = 0, flags = 0;
    std::vector<uint8_t> key, val;
    int we = 0, at = 0, size = 0;
    uint64_t off = 0, wdata = 0, cmp = 0;
};

struct Requester {
    std::deque<Req> queue;
    bool active = false;
    Req cur;
    int seq = -1;
    uint64_t req_cycle = 0;
    uint64_t addr = 0;   // the window offset of the request in flight (map-value accesses)
    uint64_t last = 0;   // the last answer
};

std::unique_ptr<Vebpflow_coproc> top;
uint64_t cycle = 0;

void tick() {
    top->clk_i = 1;
    top->eval();
    top->clk_i = 0;
    top->eval();
}

void clear_inputs() {
    top->hlp_req_i = 0;
    top->mv_req_i = 0;
    top->host_req_i = 0;
    top->mt_we_i = 0;
    top->mt_clear_i = 0;
}

// Drives requester r's request onto its port.
void drive(int r, const Requester& q) {
    const Req& x = q.cur;
    if (r == kHost) {
        top->host_req_i = 1;
        top->host_id_i = x.helper ? x.id : 256;
        for (int i = 0; i < 10; ++i) set_bits(top->host_args_i, 64 * i, 64, 0);
        if (x.helper) {
            set_bits(top->host_args_i, 0, 64, x.map);
            set_bits(top->host_args_i, 192, 64, x.flags);
            set_bytes(top->host_key_i, 0, x.key, kKeyBytes);
            set_bytes(top->host_val_i, 0, x.val, kValBytes);
        } else {
            set_bits(top->host_args_i, 0, 64, q.addr);
        }
        return;
    }
    if (x.helper) {
        top->hlp_req_i |= 1u << r;
        top->hlp_kfunc_i &= ~(1u << r);
        set_bits(top->hlp_id_i, 32 * r, 32, x.id);
        for (int i = 0; i < 5; ++i) set_bits(top->hlp_args_i, 320 * r + 64 * i, 64, 0);
        set_bits(top->hlp_args_i, 320 * r, 64, x.map);
        set_bits(top->hlp_args_i, 320 * r + 192, 64, x.flags);
        set_bytes(top->hlp_key_i, 8 * kKeyBytes * r, x.key, kKeyBytes);
        set_bytes(top->hlp_val_i, 8 * kValBytes * r, x.val, kValBytes);
    } else {
        top->mv_req_i |= 1u << r;
        top->mv_we_i = (top->mv_we_i & ~(1u << r)) | (x.we << r);
        top->mv_atomic_i = (top->mv_atomic_i & ~(7u << (3 * r))) | (x.at << (3 * r));
        top->mv_size_i = (top->mv_size_i & ~(3u << (2 * r))) | (x.size << (2 * r));
        set_bits(top->mv_addr_i, 24 * r, 24, q.addr);
        set_bits(top->mv_wdata_i, 64 * r, 64, x.wdata);
        set_bits(top->mv_cmp_i, 64 * r, 64, x.cmp);
    }
}

// Starts requester r's next request, printing the map-value accesses that have no address.
void start_next(int r, Requester& q) {
    while (!q.queue.empty()) {
        q.cur = q.queue.front();
        q.queue.pop_front();
        ++q.seq;
        if (!q.cur.helper) {
            if (q.last < kMapvBase) {
                std::printf("s %d %d\n", r, q.seq);
                continue;
            }
            q.addr = q.last - kMapvBase + q.cur.off;
        }
        q.active = true;
        q.req_cycle = cycle;
        return;
    }
}

void run(std::vector<Requester>& rq) {
    cycle = 0;
    for (;;) {
        ++cycle;
        bool any = false;
        clear_inputs();
        for (int r = 0; r <= kHost; ++r) {
            if (!rq[r].active) start_next(r, rq[r]);
            if (rq[r].active) {
                drive(r, rq[r]);
                any = true;
            }
        }
        if (!any) break;
        top->eval();
        for (int r = 0; r <= kHost; ++r) {
            Requester& q = rq[r];
            if (!q.active) continue;
            bool ack, fault = false;
            uint64_t value;
            if (r == kHost) {
                ack = top->host_ack_o;
                value = top->host_r0_o;
            } else if (q.cur.helper) {
                ack = (top->hlp_ack_o >> r) & 1;
                fault = (top->hlp_fault_o >> r) & 1;
                value = get_bits(top->hlp_r0_o, 64 * r, 64);
            } else {
                ack = (top->mv_ack_o >> r) & 1;
                fault = (top->mv_fault_o >> r) & 1;
                value = get_bits(top->mv_rdata_o, 64 * r, 64);
            }
            if (!ack) continue;
            std::printf("r %d %d %" PRIu64 " %" PRIu64 " %" PRIx64 " %d\n", r, q.seq, q.req_cycle, cycle, value,
                        fault ? 1 : 0);
            if (q.cur.helper && q.cur.id == 1) q.last = value;
            q.active = false;
        }
        tick();
        if (cycle > 10000000) {
            std::printf("timeout\n");
            return;
        }
    }
    std::printf("end %" PRIu64 "\n", cycle - 1);
    for (auto& q : rq) q.seq = -1;
}

}  // namespace

int main(int argc, char** argv) {
    Verilated::commandArgs(argc, argv);
    top = std::make_unique<Vebpflow_coproc>();
    clear_inputs();
    top->clk_i = 0;
    top->rst_ni = 1;
    top->eval();
    top->rst_ni = 0;   // an edge: the flip-flops reset asynchronously
    top->eval();
    top->rst_ni = 1;
    top->eval();
    while (top->mt_busy_o) tick();
    std::vector<Requester> rq(kHost + 1);
    char line[4096];
    while (std::fgets(line, sizeof line, stdin)) {
        char cmd[16] = {0};
        if (std::sscanf(line, "%15s", cmd) != 1) continue;
        if (std::strcmp(cmd, "map") == 0) {
            unsigned idx, type, ksz, vsz, max;
            if (std::sscanf(line, "map %u %u %u %u %u", &idx, &type, &ksz, &vsz, &max) != 5) return 2;
            clear_inputs();
            top->mt_we_i = 1;
            top->mt_idx_i = idx;
            top->mt_type_i = type;
            top->mt_key_size_i = ksz;
            top->mt_value_size_i = vsz;
            top->mt_max_entries_i = max;
            top->eval();
            tick();
            top->mt_we_i = 0;
            top->eval();
            std::printf("map %d\n", top->mt_err_o ? 1 : 0);
        } else if (std::strcmp(cmd, "q") == 0) {
            int r;
            char kind[4], a[64], b[64], c[64], d[64], e[1024], f[1024];
            if (std::sscanf(line, "q %d %3s %63s %63s %63s %63s %1023s %1023s", &r, kind, a, b, c, d, e, f) < 7 ||
                r < 0 || r > kHost) {
                std::fprintf(stderr, "bad line: %s", line);
                return 2;
            }
            Req x;
            if (kind[0] == 'h') {
                x.id = std::strtoul(a, nullptr, 10);
                x.map = std::strtoull(b, nullptr, 10);
                x.flags = std::strtoull(c, nullptr, 10);
                x.key = unhex(d);
                x.val = unhex(e);
            } else {
                x.helper = false;
                x.we = std::atoi(a);
                x.at = std::atoi(b);
                x.off = std::strtoull(c, nullptr, 10);
                x.size = std::atoi(d);
                x.wdata = std::strtoull(e, nullptr, 16);
                x.cmp = std::strtoull(f, nullptr, 16);
            }
            rq[r].queue.push_back(x);
        } else if (std::strcmp(cmd, "run") == 0) {
            run(rq);
        } else {
            std::fprintf(stderr, "unknown command: %s", line);
            return 2;
        }
        std::fflush(stdout);
    }
    top->final();
    top.reset();
    return 0;
}
