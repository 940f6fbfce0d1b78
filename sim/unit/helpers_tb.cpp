// Drives rtl/sephirot/helpers.sv: helper calls against a C++ memory (packet page, stack, map values behind mem_*),
// a maps stand-in answering mreq_* with scripted responses, and an APS stand-in doing the adjusts as XdpBuff does.
//
// Commands on stdin, one per line, numbers in hex; byte strings are hex pairs, byte 0 first ("-" for none):
//   r                              reset                                                      -> "ok"
//   c MAP TYPE KS VS MAX SLOTS     configure a map (cfg_we_i; MAX is max_entries) and give it SLOTS value slots of
//                                  VS bytes here                                              -> "ok"
//   v MAP SLOTS                    resize a map's value memory here (the reference allocates hash slots as it
//                                  goes), keeping the bytes of the slots that stay            -> "ok"
//   p META DATA END                the packet's page offsets                                  -> "ok"
//   k READY STEP                   pkt_ready_i starts at READY and grows by STEP a cycle up to 4096 (packet reads of
//                                  bytes at or beyond it read zeros, as the APS's unstored frames do) -> "ok"
//   s TOP                          the stack top: stack accesses ending past it fault         -> "ok"
//   t TIME CYCLES                  time_ns_i and cycles_i                                     -> "ok"
//   n                              start_i for one cycle (a new packet)                       -> "ok"
//   w ADDR BYTES                   write bytes at a tagged address, unchecked                 -> "ok" or "bad"
//   g IDX ENTRY                    program table: program IDX starts at bundle ENTRY          -> "ok"
//   m RET HIT SLOT DELAY VALUE     the next maps request is accepted after DELAY cycles of mreq_ready_i low, then
//                                  answered two cycles later with RET, HIT, SLOT, VALUE (rsp_value) -> "ok"
//   f RET DELAY PARAMS             the next fib request is accepted after DELAY cycles, answered four cycles later
//                                  with RET and the 64 bytes PARAMS                           -> "ok"
//   h ID A1 A2 A3 A4 A5            one helper call -> "R0 FAULT TAIL ENTRY CYCLES MREQ ADJ FIB": CYCLES from hcall_i
//                                  to hret_valid_o; MREQ "-" or OP:MAP:FLAGS:KEY:VALUE of the maps request made;
//                                  ADJ "-" or KIND:DELTA:RET of the adjust request made; FIB "-" or FLAGS:PARAMS of
//                                  the fib request made; or "timeout"
//   R                              drain the ring buffer through rb_* -> "PRESENT MAP CFG_ERROR OVERFLOW RECORDS",
//                                  RECORDS the records' bytes joined by ",", "-" when there are none
//   o                              the outcome record -> "VALID BY_MAP MAP KEY"
//   P                              the packet offsets -> "META DATA END"
//   d ADDR LEN                     memory bytes (checked as the memory port checks them) -> BYTES or "fault"
// Memory answers mem_* in the next cycle: packet accesses must lie in data_meta..data_end, stack accesses end at or
// below TOP (and 4096), map-value accesses in a configured slot within VS bytes; anything else faults, and a
// faulting write changes nothing. The tb also checks the protocol: a one-cycle hret_valid_o at least one cycle
// after hcall_i, mem_bytes_o of 1, 2, 4 or 8, one adjust pulse; a violation ends the run with status 3.
// A malformed line ends the run with exit status 2 and a message naming the line.

#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "Vhelpers.h"
#include "verilated.h"

namespace {

constexpr uint64_t kPage = 4096;
constexpr uint64_t kStackBytes = 4096;
constexpr uint64_t kXdpFrame = 40;
constexpr uint64_t kTailroom = 320;
constexpr uint64_t kEthHlen = 14;
constexpr uint64_t kMaxMeta = 32;
#ifndef TB_MAPS
#error "build with -CFLAGS -DTB_MAPS=<the module's MAPS>"
#endif
constexpr unsigned kMaps = TB_MAPS;
#ifndef TB_KEY_BYTES
#error "build with -CFLAGS -DTB_KEY_BYTES=<the module's KEY_BYTES>"
#endif
#ifndef TB_VALUE_BYTES
#error "build with -CFLAGS -DTB_VALUE_BYTES=<the module's VALUE_BYTES>"
#endif
constexpr unsigned kKeyBytes = TB_KEY_BYTES;
constexpr unsigned kValueBytes = TB_VALUE_BYTES;

struct MapMem {
    bool present = false;
    uint64_t value_size = 0;
    uint64_t slots = 0;
    std::vector<uint8_t> bytes;
};

struct MapsScript {
    uint64_t ret = 0;
    bool hit = false;
    uint32_t slot = 0;
    unsigned delay = 0;
    uint64_t value = 0;
};

struct FibScript {
    uint64_t ret = 0;
    unsigned delay = 0;
    std::vector<uint8_t> params = std::vector<uint8_t>(64, 0);
};

int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

bool parse_bytes(const char* hex, std::vector<uint8_t>& out) {
    out.clear();
    if (std::strcmp(hex, "-") == 0) return true;
    std::size_t len = std::strlen(hex);
    if (len % 2 != 0) return false;
    for (std::size_t i = 0; i < len / 2; ++i) {
        int hi = hex_digit(hex[2 * i]), lo = hex_digit(hex[2 * i + 1]);
        if (hi < 0 || lo < 0) return false;
        out.push_back(static_cast<uint8_t>(hi * 16 + lo));
    }
    return true;
}

std::string hex_bytes(const uint8_t* p, std::size_t n) {
    std::string out;
    char buf[3];
    for (std::size_t i = 0; i < n; ++i) {
        std::snprintf(buf, sizeof buf, "%02x", p[i]);
        out += buf;
    }
    return out.empty() ? "-" : out;
}

template <std::size_t N>
std::string wide_bytes(const VlWide<N>& port, std::size_t bytes) {
    std::vector<uint8_t> b(bytes);
    for (std::size_t i = 0; i < bytes; ++i) b[i] = (port[i / 4] >> (8 * (i % 4))) & 0xff;
    return hex_bytes(b.data(), bytes);
}

class Bench {
  public:
    explicit Bench(VerilatedContext* context) : top_(std::make_unique<Vhelpers>(context)) {
        page_.assign(kPage, 0);
        stack_.assign(kStackBytes, 0);
        maps_.resize(kMaps);
        idle_inputs();
        reset();
    }

    ~Bench() { top_->final(); }

    void reset() {
        top_->rst_ni = 0;
        cycle();
        top_->rst_ni = 1;
        cycle();
    }

    void idle_inputs() {
        Vhelpers* t = top_.get();
        t->start_i = 0;
        t->hcall_i = 0;
        t->cfg_we_i = 0;
        t->mreq_ready_i = 0;
        t->mrsp_valid_i = 0;
        t->fib_req_ready_i = 0;
        t->fib_rsp_valid_i = 0;
        t->prog_we_i = 0;
        t->rb_rd_i = 0;
        t->rb_pop_i = 0;
        t->adj_done_i = 0;
        t->mem_fault_i = 0;
        t->mem_rdata_i = 0;
        apply_offsets();
    }

    void apply_offsets() {
        top_->data_meta_i = meta_;
        top_->data_i = data_;
        top_->data_end_i = end_;
        top_->pkt_ready_i = ready_;
    }

    // One clock cycle: the inputs set for it are seen, the memory and stand-ins act on its outputs, then the edge.
    // Returns false on a protocol violation (reported on stderr).
    bool cycle() {
        Vhelpers* t = top_.get();
        t->clk_i = 0;
        t->eval();
        bool ok = true;
        // memory: answer next cycle
        bool req = t->mem_req_o;
        uint64_t rdata = 0;
        bool fault = false;
        if (req) {
            unsigned n = t->mem_bytes_o;
            if (n != 1 && n != 2 && n != 4 && n != 8) {
                std::fprintf(stderr, "helpers_tb: mem_bytes_o = %u\n", n);
                ok = false;
                n = 1;
            }
            ++accesses_;
            uint8_t* p = locate(t->mem_addr_o, n);
            if (p == nullptr) {
                fault = true;
            } else if (t->mem_we_o) {
                for (unsigned i = 0; i < n; ++i) p[i] = static_cast<uint8_t>(t->mem_wdata_o >> (8 * i));
            } else {
                uint64_t off = t->mem_addr_o & ((uint64_t{1} << 60) - 1);
                bool tag2 = (t->mem_addr_o >> 60) == 2;
                for (unsigned i = 0; i < n; ++i) {
                    bool stored = !tag2 || off + i < ready_;
                    rdata |= static_cast<uint64_t>(stored ? p[i] : 0) << (8 * i);
                }
            }
        }
        // maps stand-in
        bool accept = false;
        if (t->mreq_valid_o) {
            if (mreq_wait_ < script_.delay) {
                ++mreq_wait_;
            } else {
                accept = true;
            }
        }
        t->mreq_ready_i = accept;
        // fib stand-in
        bool fib_accept = false;
        if (t->fib_req_valid_o) {
            if (fib_wait_ < fib_.delay) {
                ++fib_wait_;
            } else {
                fib_accept = true;
            }
        }
        t->fib_req_ready_i = fib_accept;
        t->eval();
        if (fib_accept) {
            char buf[32];
            std::snprintf(buf, sizeof buf, "%x:", static_cast<unsigned>(t->fib_req_flags_o));
            fib_seen_ = std::string(buf) + wide_bytes(t->fib_req_params_o, 64);
            fib_countdown_ = 4;
            fib_wait_ = 0;
        }
        if (accept) {
            char buf[64];
            std::snprintf(buf, sizeof buf, "%x:%x:%" PRIx64 ":", static_cast<unsigned>(t->mreq_op_o),
                          static_cast<unsigned>(t->mreq_map_o), static_cast<uint64_t>(t->mreq_flags_o));
            mreq_seen_ = std::string(buf) + wide_bytes(t->mreq_key_o, kKeyBytes) + ":" +
                         wide_bytes(t->mreq_value_o, kValueBytes);
            rsp_countdown_ = 2;
            mreq_wait_ = 0;
        }
        // adjust stand-in: the APS answers in the next cycle
        bool adj_now = t->adj_valid_o;
        int64_t adj_ret = 0;
        if (adj_now) {
            int64_t delta = static_cast<int32_t>(t->adj_delta_o);
            unsigned kind = t->adj_kind_o;
            adj_ret = kind == 0 ? adjust_head(delta) : kind == 1 ? adjust_tail(delta) : adjust_meta(delta);
            if (!adj_seen_.empty()) {
                std::fprintf(stderr, "helpers_tb: two adjust requests in one call\n");
                ok = false;
            }
            char buf[96];
            std::snprintf(buf, sizeof buf, "%x:%x:%" PRIx64, kind, static_cast<unsigned>(t->adj_delta_o),
                          static_cast<uint64_t>(adj_ret));
            adj_seen_ = buf;
        }
        hret_now_ = t->hret_valid_o;
        t->clk_i = 1;
        t->eval();
        // inputs of the next cycle
        t->mem_rdata_i = rdata;
        t->mem_fault_i = req && fault;
        t->mreq_ready_i = 0;
        t->mrsp_valid_i = 0;
        if (rsp_countdown_ > 0 && --rsp_countdown_ == 0) {
            t->mrsp_valid_i = 1;
            t->mrsp_ret_i = script_.ret;
            t->mrsp_hit_i = script_.hit;
            t->mrsp_slot_i = script_.slot;
            t->mrsp_value_i = script_.value;
        }
        t->fib_req_ready_i = 0;
        t->fib_rsp_valid_i = 0;
        if (fib_countdown_ > 0 && --fib_countdown_ == 0) {
            t->fib_rsp_valid_i = 1;
            t->fib_rsp_ret_i = fib_.ret;
            for (unsigned w = 0; w < 16; ++w) t->fib_rsp_params_i[w] = 0;
            for (unsigned i = 0; i < 64; ++i) {
                t->fib_rsp_params_i[i / 4] |= static_cast<uint32_t>(fib_.params[i]) << (8 * (i % 4));
            }
        }
        ready_ = ready_ + ready_step_ > kPage ? kPage : ready_ + ready_step_;
        t->adj_done_i = adj_now;
        t->adj_ret_i = static_cast<uint64_t>(adj_ret);
        apply_offsets();
        return ok;
    }

    // Bytes [addr, addr + n) of a tagged address, or nullptr when the access faults.
    uint8_t* locate(uint64_t addr, uint64_t n) {
        uint64_t tag = addr >> 60, off = addr & ((uint64_t{1} << 60) - 1);
        switch (tag) {
            case 2:
                if (off < meta_ || off + n > end_) return nullptr;
                return &page_[off];
            case 3:
                if (off + n > stack_top_ || off + n > kStackBytes) return nullptr;
                return &stack_[off];
            case 4: {
                uint64_t map = off >> 52, slot = (off >> 24) & ((uint64_t{1} << 28) - 1), voff = off & 0xffffff;
                if (map >= kMaps || !maps_[map].present) return nullptr;
                MapMem& m = maps_[map];
                if (slot >= m.slots || voff + n > m.value_size) return nullptr;
                return &m.bytes[slot * m.value_size + voff];
            }
            default:
                return nullptr;
        }
    }

    // Unchecked writes for setting up memory: the whole page, the whole stack, any configured slot.
    bool poke(uint64_t addr, const std::vector<uint8_t>& bytes) {
        uint64_t tag = addr >> 60, off = addr & ((uint64_t{1} << 60) - 1);
        uint8_t* p = nullptr;
        if (tag == 2 && off + bytes.size() <= kPage) p = &page_[off];
        if (tag == 3 && off + bytes.size() <= kStackBytes) p = &stack_[off];
        if (tag == 4) {
            uint64_t map = off >> 52, slot = (off >> 24) & ((uint64_t{1} << 28) - 1), voff = off & 0xffffff;
            if (map < kMaps && maps_[map].present && slot < maps_[map].slots &&
                voff + bytes.size() <= maps_[map].value_size) {
                p = &maps_[map].bytes[slot * maps_[map].value_size + voff];
            }
        }
        if (p == nullptr) return false;
        std::memcpy(p, bytes.data(), bytes.size());
        return true;
    }

    // XdpBuff::adjust_head / adjust_meta / adjust_tail (crates/xdp/src/buff.rs).
    int64_t adjust_head(int64_t delta) {
        int64_t metalen = static_cast<int64_t>(data_ - meta_);
        int64_t data = static_cast<int64_t>(data_) + delta;
        if (data < static_cast<int64_t>(kXdpFrame) + metalen || data > static_cast<int64_t>(end_ - kEthHlen)) {
            return -22;
        }
        uint64_t meta = static_cast<uint64_t>(data - metalen);
        if (metalen > 0) std::memmove(&page_[meta], &page_[meta_], static_cast<std::size_t>(metalen));
        meta_ = meta;
        data_ = static_cast<uint64_t>(data);
        return 0;
    }

    int64_t adjust_meta(int64_t delta) {
        int64_t meta = static_cast<int64_t>(meta_) + delta;
        if (meta < static_cast<int64_t>(kXdpFrame) || meta > static_cast<int64_t>(data_)) return -22;
        uint64_t metalen = data_ - static_cast<uint64_t>(meta);
        if (metalen > kMaxMeta || metalen % 4 != 0) return -13;
        meta_ = static_cast<uint64_t>(meta);
        return 0;
    }

    int64_t adjust_tail(int64_t delta) {
        int64_t end = static_cast<int64_t>(end_) + delta;
        if (end > static_cast<int64_t>(kPage - kTailroom) || end < static_cast<int64_t>(data_ + kEthHlen)) return -22;
        if (static_cast<uint64_t>(end) > end_) std::memset(&page_[end_], 0, static_cast<std::size_t>(end) - end_);
        end_ = static_cast<uint64_t>(end);
        return 0;
    }

    // One helper call; false when the protocol is broken.
    bool call(uint32_t id, const uint64_t args[5], std::string& result) {
        Vhelpers* t = top_.get();
        mreq_seen_.clear();
        adj_seen_.clear();
        fib_seen_.clear();
        t->hcall_i = 1;
        t->hcall_id_i = id;
        for (unsigned i = 0; i < 5; ++i) {
            t->hcall_args_i[2 * i] = static_cast<uint32_t>(args[i]);
            t->hcall_args_i[2 * i + 1] = static_cast<uint32_t>(args[i] >> 32);
        }
        bool ok = cycle();
        if (hret_now_) {
            std::fprintf(stderr, "helpers_tb: hret_valid_o in the hcall_i cycle\n");
            return false;
        }
        t->hcall_i = 0;
        for (unsigned long cycles = 1; cycles <= 1000000; ++cycles) {
            t->eval();
            uint64_t r0 = t->hret_o;
            bool fault = t->hret_fault_o, tail = t->hret_tail_o;
            unsigned entry = t->hret_entry_o;
            ok = cycle() && ok;
            if (hret_now_) {
                // the pulse is one cycle long
                ok = cycle() && ok;
                if (hret_now_) {
                    std::fprintf(stderr, "helpers_tb: hret_valid_o longer than a cycle\n");
                    return false;
                }
                char buf[128];
                std::snprintf(buf, sizeof buf, "%" PRIx64 " %x %x %x %lx ", r0, fault ? 1u : 0u, tail ? 1u : 0u,
                              entry, cycles);
                result = std::string(buf) + (mreq_seen_.empty() ? "-" : mreq_seen_) + " " +
                         (adj_seen_.empty() ? "-" : adj_seen_) + " " + (fib_seen_.empty() ? "-" : fib_seen_);
                return ok;
            }
        }
        result = "timeout";
        return ok;
    }

    Vhelpers* top() { return top_.get(); }

    // Every record in the ring, oldest first, through the drain port.
    bool drain(std::string& out) {
        Vhelpers* t = top_.get();
        bool ok = true;
        out.clear();
        for (;;) {
            unsigned waited = 0;
            t->eval();
            while (!t->rb_avail_o && waited < 4) {
                ok = cycle() && ok;
                t->eval();
                ++waited;
            }
            if (!t->rb_avail_o) break;
            uint32_t len = t->rb_len_o;
            std::vector<uint8_t> rec(len);
            for (uint32_t w = 0; w * 8 < len; ++w) {
                t->rb_rd_i = 1;
                t->rb_word_i = w;
                ok = cycle() && ok;
                t->rb_rd_i = 0;
                t->eval();
                uint64_t data = t->rb_rdata_o;
                for (uint32_t i = 0; i < 8 && w * 8 + i < len; ++i) rec[w * 8 + i] = static_cast<uint8_t>(data >> (8 * i));
            }
            t->rb_pop_i = 1;
            ok = cycle() && ok;
            t->rb_pop_i = 0;
            if (!out.empty()) out += ",";
            out += hex_bytes(rec.data(), rec.size());
            if (out.size() > (1u << 20)) break;
        }
        if (out.empty()) out = "-";
        return ok;
    }

    uint64_t meta_ = 256, data_ = 256, end_ = 256 + 64;
    uint64_t stack_top_ = 512;
    uint64_t ready_ = kPage, ready_step_ = 0;
    MapsScript script_;
    FibScript fib_;
    std::vector<MapMem> maps_;

  private:
    std::unique_ptr<Vhelpers> top_;
    std::vector<uint8_t> page_, stack_;
    bool hret_now_ = false;
    unsigned mreq_wait_ = 0;
    unsigned rsp_countdown_ = 0;
    unsigned fib_wait_ = 0;
    unsigned fib_countdown_ = 0;
    unsigned long accesses_ = 0;
    std::string mreq_seen_, adj_seen_, fib_seen_;
};

}  // namespace

int main(int argc, char** argv) {
    auto context = std::make_unique<VerilatedContext>();
    context->commandArgs(argc, argv);
    Bench bench(context.get());

    static char line[1 << 17];
    static char text[1 << 17];
    unsigned long line_number = 0;
    while (std::fgets(line, sizeof line, stdin) != nullptr) {
        ++line_number;
        if (std::strspn(line, " \t\r\n") == std::strlen(line)) continue;
        Vhelpers* t = bench.top();
        bool ok = false;
        bool protocol = true;
        switch (line[0]) {
            case 'r':
                bench.reset();
                std::printf("ok\n");
                ok = true;
                break;
            case 'c': {
                unsigned map = 0, type = 0, ks = 0, vs = 0, max = 0, slots = 0;
                if (std::sscanf(line + 1, "%x %x %x %x %x %x", &map, &type, &ks, &vs, &max, &slots) == 6 &&
                    map < kMaps && slots <= 4096 && vs <= 4096) {
                    t->cfg_we_i = 1;
                    t->cfg_map_i = map;
                    t->cfg_type_i = type;
                    t->cfg_key_size_i = ks;
                    t->cfg_value_size_i = vs;
                    t->cfg_max_entries_i = max;
                    protocol = bench.cycle();
                    t->cfg_we_i = 0;
                    MapMem& m = bench.maps_[map];
                    m.present = true;
                    m.value_size = vs;
                    m.slots = slots;
                    m.bytes.assign(static_cast<std::size_t>(vs) * slots, 0);
                    std::printf("ok\n");
                    ok = true;
                }
                break;
            }
            case 'v': {
                unsigned map = 0, slots = 0;
                if (std::sscanf(line + 1, "%x %x", &map, &slots) == 2 && map < kMaps && slots <= 4096 &&
                    bench.maps_[map].present) {
                    MapMem& m = bench.maps_[map];
                    m.slots = slots;
                    m.bytes.resize(static_cast<std::size_t>(m.value_size) * slots, 0);
                    std::printf("ok\n");
                    ok = true;
                }
                break;
            }
            case 'p': {
                uint64_t meta = 0, data = 0, end = 0;
                if (std::sscanf(line + 1, "%" SCNx64 " %" SCNx64 " %" SCNx64, &meta, &data, &end) == 3 &&
                    meta <= data && data <= end && end <= kPage) {
                    bench.meta_ = meta;
                    bench.data_ = data;
                    bench.end_ = end;
                    bench.apply_offsets();
                    std::printf("ok\n");
                    ok = true;
                }
                break;
            }
            case 'k': {
                uint64_t ready = 0, step = 0;
                if (std::sscanf(line + 1, "%" SCNx64 " %" SCNx64, &ready, &step) == 2 && ready <= kPage) {
                    bench.ready_ = ready;
                    bench.ready_step_ = step;
                    bench.apply_offsets();
                    std::printf("ok\n");
                    ok = true;
                }
                break;
            }
            case 's': {
                uint64_t top = 0;
                if (std::sscanf(line + 1, "%" SCNx64, &top) == 1) {
                    bench.stack_top_ = top;
                    std::printf("ok\n");
                    ok = true;
                }
                break;
            }
            case 't': {
                uint64_t time = 0, cycles = 0;
                if (std::sscanf(line + 1, "%" SCNx64 " %" SCNx64, &time, &cycles) == 2 && cycles <= 0xffffffffu) {
                    t->time_ns_i = time;
                    t->cycles_i = static_cast<uint32_t>(cycles);
                    std::printf("ok\n");
                    ok = true;
                }
                break;
            }
            case 'n':
                t->start_i = 1;
                protocol = bench.cycle();
                t->start_i = 0;
                std::printf("ok\n");
                ok = true;
                break;
            case 'w': {
                uint64_t addr = 0;
                std::vector<uint8_t> bytes;
                if (std::sscanf(line + 1, "%" SCNx64 " %131071s", &addr, text) == 2 && parse_bytes(text, bytes)) {
                    std::printf(bench.poke(addr, bytes) ? "ok\n" : "bad\n");
                    ok = true;
                }
                break;
            }
            case 'g': {
                unsigned idx = 0, entry = 0;
                if (std::sscanf(line + 1, "%x %x", &idx, &entry) == 2 && idx < 256 && entry < 65536) {
                    t->prog_we_i = 1;
                    t->prog_idx_i = idx;
                    t->prog_entry_i = entry;
                    protocol = bench.cycle();
                    t->prog_we_i = 0;
                    std::printf("ok\n");
                    ok = true;
                }
                break;
            }
            case 'f': {
                uint64_t ret = 0;
                unsigned delay = 0;
                std::vector<uint8_t> params;
                if (std::sscanf(line + 1, "%" SCNx64 " %x %131071s", &ret, &delay, text) == 3 &&
                    parse_bytes(text, params) && params.size() == 64 && delay < 1000) {
                    bench.fib_ = FibScript{ret, delay, params};
                    std::printf("ok\n");
                    ok = true;
                }
                break;
            }
            case 'R': {
                std::string records;
                protocol = bench.drain(records);
                std::printf("%x %x %x %x %s\n", static_cast<unsigned>(t->rb_present_o),
                            static_cast<unsigned>(t->rb_map_o), static_cast<unsigned>(t->rb_cfg_error_o),
                            static_cast<unsigned>(t->rb_overflow_o), records.c_str());
                ok = true;
                break;
            }
            case 'm': {
                uint64_t ret = 0, value = 0;
                unsigned hit = 0, slot = 0, delay = 0;
                if (std::sscanf(line + 1, "%" SCNx64 " %x %x %x %" SCNx64, &ret, &hit, &slot, &delay, &value) == 5 &&
                    hit < 2 && slot < (1u << 28) && delay < 1000) {
                    bench.script_ = MapsScript{ret, hit == 1, slot, delay, value};
                    std::printf("ok\n");
                    ok = true;
                }
                break;
            }
            case 'h': {
                unsigned id = 0;
                uint64_t a[5] = {0, 0, 0, 0, 0};
                if (std::sscanf(line + 1, "%x %" SCNx64 " %" SCNx64 " %" SCNx64 " %" SCNx64 " %" SCNx64, &id, &a[0],
                                &a[1], &a[2], &a[3], &a[4]) == 6) {
                    std::string result;
                    protocol = bench.call(id, a, result);
                    std::printf("%s\n", result.c_str());
                    ok = true;
                }
                break;
            }
            case 'o':
                t->eval();
                std::printf("%x %x %x %" PRIx64 "\n", static_cast<unsigned>(t->redirect_valid_o),
                            static_cast<unsigned>(t->redirect_by_map_o), static_cast<unsigned>(t->redirect_map_o),
                            static_cast<uint64_t>(t->redirect_key_o));
                ok = true;
                break;
            case 'P':
                std::printf("%" PRIx64 " %" PRIx64 " %" PRIx64 "\n", bench.meta_, bench.data_, bench.end_);
                ok = true;
                break;
            case 'd': {
                uint64_t addr = 0, len = 0;
                if (std::sscanf(line + 1, "%" SCNx64 " %" SCNx64, &addr, &len) == 2 && len <= 65536) {
                    uint8_t* p = len == 0 ? nullptr : bench.locate(addr, len);
                    std::printf("%s\n", p == nullptr ? "fault" : hex_bytes(p, len).c_str());
                    ok = true;
                }
                break;
            }
            default:
                break;
        }
        std::fflush(stdout);
        if (!ok) {
            std::fprintf(stderr, "helpers_tb: line %lu: cannot parse: %s", line_number, line);
            return 2;
        }
        if (!protocol) {
            std::fprintf(stderr, "helpers_tb: line %lu: protocol violation\n", line_number);
            return 3;
        }
    }
    return 0;
}
