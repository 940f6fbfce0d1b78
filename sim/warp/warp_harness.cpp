// Drives rtl/warp/warp_engine.sv (the Warp Engine): writes its configuration, streams packets back to back, reports
// each packet's record and bytes as they left.
//
// Commands on stdin, one per line, numbers in hex; one answer line each on stdout:
//   cfg SEL ADDR WORD DATA   one configuration-port write (warp_engine.sv's header)                     -> ok
//   pkt BYTES                queue a packet (two digits a byte)                                          -> ok
//   go READY                 stream every queued packet back to back (a beat a clock while the engine is
//                            ready), m_axis_tready in clock c being bit (c % 64) of the 64-bit READY; run
//                            until every packet has left. One line per packet, in order:
//                              rec IN OUT HIT VERDICT RULE RETVAL SLOT WARPED LEN RK RV STACK BYTES
//                            IN the clock its last beat was taken, OUT the clock its first beat left (clock 0
//                            the first of the command), RK the nine register kinds (comma separated), RV the
//                            nine values, STACK the writes as size:offset:kind:value joined by ',' (- none),
//                            BYTES the frame as it left; then "done CLOCKS", or "timeout" (the model is then
//                            unusable), or "error <why>" when a record changed within a frame
//   quit                     end
// Anything else answers "error <why>".

#include <cinttypes>
#include <cstdio>
#include <deque>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "Vwarp_engine.h"
#include "verilated.h"

#ifndef WARP_DATA_W
#define WARP_DATA_W 512
#endif

namespace {

constexpr unsigned kBeat = WARP_DATA_W / 8;
constexpr uint64_t kMaxClocks = 10000000;
#ifndef WARP_STACK_EXTRACTORS
#define WARP_STACK_EXTRACTORS 10
#endif
constexpr unsigned kStackWrites = WARP_STACK_EXTRACTORS;

// Bit fields of a Verilator port, whatever its C++ type.
template <typename T>
uint64_t field(const T& v, unsigned lo, unsigned n) {
    return (static_cast<uint64_t>(v) >> lo) & (n == 64 ? ~0ULL : ((1ULL << n) - 1));
}
template <std::size_t W>
uint64_t field(const VlWide<W>& v, unsigned lo, unsigned n) {
    uint64_t out = 0;
    for (unsigned i = 0; i < n; ++i) {
        const unsigned b = lo + i;
        out |= static_cast<uint64_t>((v[b / 32] >> (b % 32)) & 1U) << i;
    }
    return out;
}
template <typename T>
void set_bytes(T& v, const uint8_t* bytes) {
    uint64_t word = 0;
    for (unsigned b = 0; b < kBeat; ++b) word |= static_cast<uint64_t>(bytes[b]) << (8 * b);
    v = word;
}
template <std::size_t W>
void set_bytes(VlWide<W>& v, const uint8_t* bytes) {
    for (unsigned w = 0; w < W; ++w) {
        uint32_t word = 0;
        for (unsigned b = 0; b < 4; ++b) word |= static_cast<uint32_t>(bytes[4 * w + b]) << (8 * b);
        v[w] = word;
    }
}
template <typename T>
void set_keep(T& v, unsigned n) {
    v = n >= 64 ? ~0ULL : ((1ULL << n) - 1);
}
template <std::size_t W>
void set_keep(VlWide<W>& v, unsigned n) {
    for (unsigned w = 0; w < W; ++w) {
        const unsigned lo = 32 * w;
        v[w] = n >= lo + 32 ? ~0U : (n <= lo ? 0U : ((1U << (n - lo)) - 1));
    }
}

struct Out {
    uint64_t in_at = 0, out_at = 0;
    std::string record;
    std::vector<uint8_t> bytes;
};

class Bench {
  public:
    explicit Bench(VerilatedContext* context) : top_(std::make_unique<Vwarp_engine>(context)) {
        top_->clk_i = 0;
        top_->rst_ni = 0;
        top_->eval();
        tick();
        top_->rst_ni = 1;
        top_->eval();
    }
    ~Bench() { top_->final(); }

    void tick() {
        top_->clk_i = 1;
        top_->eval();
        top_->clk_i = 0;
        top_->eval();
    }

    void cfg(unsigned sel, unsigned addr, unsigned word, uint64_t data) {
        top_->cfg_we_i = 1;
        top_->cfg_sel_i = sel;
        top_->cfg_addr_i = addr;
        top_->cfg_word_i = word;
        top_->cfg_wdata_i = data;
        tick();
        top_->cfg_we_i = 0;
        top_->eval();
    }

    void queue(std::vector<uint8_t> bytes) { queued_.push_back(std::move(bytes)); }

    std::string record() const {
        std::ostringstream o;
        char buf[64];
        o << std::hex << unsigned(top_->m_hit_o) << ' ' << unsigned(top_->m_verdict_o) << ' '
          << unsigned(top_->m_rule_o) << ' ' << unsigned(top_->m_retval_o) << ' ' << unsigned(top_->m_slot_o)
          << ' ' << unsigned(top_->m_warped_o) << ' ' << unsigned(top_->m_len_o) << ' ';
        for (unsigned r = 0; r < 9; ++r) o << (r ? "," : "") << field(top_->m_reg_kind_o, 4 * r, 4);
        o << ' ';
        for (unsigned r = 0; r < 9; ++r) {
            std::snprintf(buf, sizeof buf, "%s%" PRIx64, r ? "," : "", field(top_->m_reg_value_o, 64 * r, 64));
            o << buf;
        }
        o << ' ';
        bool any = false;
        for (unsigned w = 0; w < kStackWrites; ++w) {
            const uint64_t size = field(top_->m_stack_size_o, 4 * w, 4);
            if (size == 0) continue;
            std::snprintf(buf, sizeof buf, "%s%" PRIx64 ":%" PRIx64 ":%" PRIx64 ":%" PRIx64, any ? "," : "", size,
                          field(top_->m_stack_off_o, 16 * w, 16), field(top_->m_stack_kind_o, 4 * w, 4),
                          field(top_->m_stack_value_o, 64 * w, 64));
            o << buf;
            any = true;
        }
        if (!any) o << '-';
        return o.str();
    }

    // Streams the queued packets; false on a timeout, error set when a record changed within a frame.
    bool go(uint64_t ready, std::vector<Out>* outs, uint64_t* clocks, std::string* error) {
        std::deque<std::vector<uint8_t>> in(queued_.begin(), queued_.end());
        const size_t total = queued_.size();
        queued_.clear();
        outs->assign(total, Out{});
        size_t sent = 0, beat = 0, got = 0;
        bool in_frame = false;
        std::vector<uint8_t> zero(kBeat, 0);
        for (uint64_t c = 0; c < kMaxClocks; ++c) {
            top_->m_axis_tready_i = (ready >> (c % 64)) & 1U;
            const bool offer = !in.empty();
            top_->s_axis_tvalid_i = offer;
            if (offer) {
                const std::vector<uint8_t>& p = in.front();
                const size_t beats = (p.size() + kBeat - 1) / kBeat;
                std::vector<uint8_t> b(kBeat, 0);
                for (unsigned i = 0; i < kBeat && beat * kBeat + i < p.size(); ++i) b[i] = p[beat * kBeat + i];
                set_bytes(top_->s_axis_tdata_i, b.data());
                const size_t left = p.size() - beat * kBeat;
                set_keep(top_->s_axis_tkeep_i, left >= kBeat ? kBeat : static_cast<unsigned>(left));
                top_->s_axis_tlast_i = beat + 1 == beats;
            }
            top_->eval();
            const bool in_fire = offer && top_->s_axis_tready_o;
            const bool out_fire = top_->m_axis_tvalid_o && top_->m_axis_tready_i;
            if (in_fire) {
                if (beat + 1 == (in.front().size() + kBeat - 1) / kBeat) {
                    (*outs)[sent].in_at = c;
                    ++sent;
                    beat = 0;
                    in.pop_front();
                } else {
                    ++beat;
                }
            }
            if (out_fire) {
                Out& o = (*outs)[got];
                const std::string rec = record();
                if (!in_frame) {
                    o.out_at = c;
                    o.record = rec;
                    in_frame = true;
                } else if (rec != o.record) {
                    *error = "record changed within frame " + std::to_string(got);
                    return true;
                }
                for (unsigned i = 0; i < kBeat; ++i) {
                    if (field(top_->m_axis_tkeep_o, i, 1)) {
                        o.bytes.push_back(static_cast<uint8_t>(field(top_->m_axis_tdata_o, 8 * i, 8)));
                    }
                }
                if (top_->m_axis_tlast_o) {
                    in_frame = false;
                    ++got;
                }
            }
            tick();
            if (got == total && in.empty()) {
                *clocks = c + 1;
                return true;
            }
        }
        return false;
    }

  private:
    std::unique_ptr<Vwarp_engine> top_;
    std::vector<std::vector<uint8_t>> queued_;
};

bool unhex(const std::string& text, std::vector<uint8_t>* out) {
    if (text == "-") return true;
    if (text.size() % 2) return false;
    for (size_t i = 0; i < text.size(); i += 2) {
        out->push_back(static_cast<uint8_t>(std::stoul(text.substr(i, 2), nullptr, 16)));
    }
    return true;
}

}  // namespace

int main(int argc, char** argv) {
    auto context = std::make_unique<VerilatedContext>();
    context->commandArgs(argc, argv);
    Bench bench(context.get());
    std::string line;
    while (std::getline(std::cin, line)) {
        std::istringstream in(line);
        std::string cmd;
        in >> cmd;
        try {
            if (cmd == "cfg") {
                std::string sel, addr, word, data;
                in >> sel >> addr >> word >> data;
                bench.cfg(std::stoul(sel, nullptr, 16), std::stoul(addr, nullptr, 16), std::stoul(word, nullptr, 16),
                          std::stoull(data, nullptr, 16));
                std::cout << "ok\n";
            } else if (cmd == "pkt") {
                std::string bytes;
                in >> bytes;
                std::vector<uint8_t> p;
                if (!unhex(bytes, &p) || p.empty()) {
                    std::cout << "error bad packet\n";
                } else {
                    bench.queue(std::move(p));
                    std::cout << "ok\n";
                }
            } else if (cmd == "go") {
                std::string ready;
                in >> ready;
                std::vector<Out> outs;
                uint64_t clocks = 0;
                std::string error;
                if (!bench.go(std::stoull(ready, nullptr, 16), &outs, &clocks, &error)) {
                    std::cout << "timeout\n";
                } else if (!error.empty()) {
                    std::cout << "error " << error << "\n";
                } else {
                    for (const Out& o : outs) {
                        std::cout << std::hex << "rec " << o.in_at << ' ' << o.out_at << ' ' << o.record << ' ';
                        for (uint8_t b : o.bytes) {
                            char buf[3];
                            std::snprintf(buf, sizeof buf, "%02x", b);
                            std::cout << buf;
                        }
                        if (o.bytes.empty()) std::cout << '-';
                        std::cout << '\n';
                    }
                    std::cout << "done " << std::hex << clocks << "\n";
                }
            } else if (cmd == "quit") {
                break;
            } else {
                std::cout << "error unknown command " << cmd << "\n";
            }
        } catch (const std::exception& e) {
            std::cout << "error " << e.what() << "\n";
        }
        std::cout.flush();
    }
    return 0;
}
