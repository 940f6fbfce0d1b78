// Drives rtl/ebpflow/ebpflow_crossbar.sv (N 4 inputs, M 6 outputs, 128-bit tuser) with random packets: lengths of 1
// to 6 beats, masks of one output, several (a flood) or none (a drop), gaps on the inputs and random back-pressure on
// the outputs. Checks: every packet reaches exactly the outputs of its mask, once, whole and with its own bytes and
// tuser; an output never interleaves two packets; a beat offered on an output stays until taken; the packets of one
// input reach an output in their order; the crossbar drains (no deadlock).
//
// Input: one line "SEED CYCLES MODE" (decimal; MODE 0 random, 1 round robin: every input sends one-beat packets to
// output 0 without a gap, which must leave in input order 0, 1, 2, 3, 0, ...). Output: "ok PACKETS BEATS" or the first
// "mismatch ..." line (exit status 1).

#include <cinttypes>
#include <cstdio>
#include <deque>
#include <map>
#include <memory>
#include <set>
#include <utility>
#include <vector>

#include "Vebpflow_crossbar.h"
#include "verilated.h"

namespace {

constexpr int kN = 4;
constexpr int kM = 6;

uint64_t next(uint64_t& s) {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return s;
}

uint64_t word_of(uint32_t id, unsigned beat) { return (static_cast<uint64_t>(id) << 32) ^ (beat * 0x9e3779b9u) ^ 0x5a5a; }

template <typename W>
void put(W& w, unsigned lsb, unsigned width, uint64_t v) {
    for (unsigned b = 0; b < width; ++b) {
        const unsigned bit = lsb + b;
        const uint32_t m = 1u << (bit % 32);
        if ((v >> b) & 1) {
            w[bit / 32] |= m;
        } else {
            w[bit / 32] &= ~m;
        }
    }
}

template <typename W>
uint64_t get(const W& w, unsigned lsb, unsigned width) {
    uint64_t v = 0;
    for (unsigned b = 0; b < width; ++b) {
        const unsigned bit = lsb + b;
        v |= static_cast<uint64_t>((w[bit / 32] >> (bit % 32)) & 1) << b;
    }
    return v;
}

struct Packet {
    uint32_t id;
    unsigned beats;
    unsigned mask;
};

struct OutState {
    bool open = false;
    uint32_t id = 0;
    unsigned beat = 0;
    bool offered = false;  // a beat was offered and not taken in the last cycle
    uint64_t data = 0;
    uint32_t user = 0;
};

int fail(const char* what, uint64_t cycle, int o, uint32_t id) {
    std::printf("mismatch cycle %" PRIu64 " output %d packet %u: %s\n", cycle, o, id, what);
    return 1;
}

}  // namespace

int main(int argc, char** argv) {
    Verilated::commandArgs(argc, argv);
    uint64_t seed = 0, cycles = 0;
    int mode = 0;
    if (std::scanf("%" SCNu64 " %" SCNu64 " %d", &seed, &cycles, &mode) != 3 || seed == 0) {
        std::fprintf(stderr, "expected a line \"SEED CYCLES MODE\" with a non-zero seed\n");
        return 2;
    }
    auto top = std::make_unique<Vebpflow_crossbar>();
    std::deque<Packet> pending[kN];
    std::map<uint32_t, Packet> all;
    uint32_t next_id = 1;
    for (int i = 0; i < kN; ++i) {
        for (uint64_t k = 0; k < cycles / 4; ++k) {
            Packet p{next_id++, 1, 1};
            if (mode == 0) {
                const uint64_t r = next(seed);
                p.beats = 1 + r % 6;
                const unsigned kind = (r >> 8) % 10;
                p.mask = kind < 6 ? 1u << ((r >> 16) % kM) : kind < 8 ? static_cast<unsigned>((r >> 24) % 64) : 0;
            }
            pending[i].push_back(p);
            all[p.id] = p;
        }
    }
    unsigned sent_beat[kN] = {};
    bool offering[kN] = {};
    OutState out[kM];
    std::set<std::pair<uint32_t, int>> delivered;
    std::map<std::pair<int, int>, uint32_t> last_id;  // (input, output) -> the last id delivered
    std::map<uint32_t, int> input_of;
    for (int i = 0; i < kN; ++i) {
        for (const Packet& p : pending[i]) input_of[p.id] = i;
    }
    std::vector<int> rr_order;
    uint64_t beats_out = 0;
    top->rst_ni = 0;
    top->clk_i = 0;
    top->eval();
    top->rst_ni = 1;
    top->eval();
    const uint64_t limit = cycles * 20 + 1000;
    uint64_t c = 0;
    for (; c < limit; ++c) {
        bool busy = false;
        for (int i = 0; i < kN; ++i) busy = busy || !pending[i].empty();
        if (!busy) break;
        // inputs
        unsigned valid = 0, last = 0;
        uint32_t masks = 0;
        for (int i = 0; i < kN; ++i) {
            if (pending[i].empty()) continue;
            const Packet& p = pending[i].front();
            if (!offering[i] && mode == 0 && next(seed) % 4 == 0) continue;
            offering[i] = true;
            valid |= 1u << i;
            if (sent_beat[i] + 1 == p.beats) last |= 1u << i;
            masks |= p.mask << (i * kM);
            put(top->s_axis_tdata_i, i * 64, 64, word_of(p.id, sent_beat[i]));
            put(top->s_axis_tuser_i, i * 128, 32, p.id);
        }
        top->s_axis_tvalid_i = valid;
        top->s_axis_tlast_i = last;
        top->s_axis_tkeep_i = 0xffffffffu;
        top->s_mask_i = masks;
        unsigned ready = 0;
        for (int o = 0; o < kM; ++o) {
            if (mode == 1 || next(seed) % 10 < 6) ready |= 1u << o;
        }
        top->m_axis_tready_i = ready;
        top->eval();
        // outputs
        for (int o = 0; o < kM; ++o) {
            const bool v = (top->m_axis_tvalid_o >> o) & 1;
            OutState& s = out[o];
            const uint64_t data = get(top->m_axis_tdata_o, o * 64, 64);
            const uint32_t user = static_cast<uint32_t>(get(top->m_axis_tuser_o, o * 128, 32));
            if (s.offered && (!v || data != s.data || user != s.user)) {
                return fail("an offered beat changed before it was taken", c, o, s.user);
            }
            s.offered = v && !((ready >> o) & 1);
            s.data = data;
            s.user = user;
            if (!v || !((ready >> o) & 1)) continue;
            ++beats_out;
            auto it = all.find(user);
            if (it == all.end()) return fail("unknown packet", c, o, user);
            if (s.open && user != s.id) return fail("packets interleaved", c, o, user);
            if (!s.open) {
                s.open = true;
                s.id = user;
                s.beat = 0;
                if (!((it->second.mask >> o) & 1)) return fail("output not in the mask", c, o, user);
                if (mode == 1 && o == 0) rr_order.push_back(input_of[user]);
            }
            if (data != word_of(user, s.beat)) return fail("wrong data", c, o, user);
            const bool l = (top->m_axis_tlast_o >> o) & 1;
            if (l != (s.beat + 1 == it->second.beats)) return fail("tlast at the wrong beat", c, o, user);
            ++s.beat;
            if (l) {
                s.open = false;
                if (!delivered.insert({user, o}).second) return fail("delivered twice", c, o, user);
                const auto key = std::make_pair(input_of[user], o);
                if (last_id.count(key) && last_id[key] > user) return fail("out of order", c, o, user);
                last_id[key] = user;
            }
        }
        const unsigned taken = top->s_axis_tvalid_i & top->s_axis_tready_o;
        top->clk_i = 1;
        top->eval();
        top->clk_i = 0;
        top->eval();
        for (int i = 0; i < kN; ++i) {
            if (!((taken >> i) & 1)) continue;
            ++sent_beat[i];
            if (sent_beat[i] == pending[i].front().beats) {
                pending[i].pop_front();
                sent_beat[i] = 0;
                offering[i] = false;
            }
        }
    }
    if (c == limit) {
        std::printf("mismatch: not drained after %" PRIu64 " cycles\n", c);
        return 1;
    }
    for (const auto& [id, p] : all) {
        for (int o = 0; o < kM; ++o) {
            const bool want = (p.mask >> o) & 1;
            if (want != (delivered.count({id, o}) == 1)) return fail("missing or extra delivery", c, o, id);
        }
    }
    if (mode == 1) {
        for (size_t k = 0; k < rr_order.size(); ++k) {
            if (rr_order[k] != static_cast<int>(k % kN)) return fail("not round robin", c, 0, static_cast<uint32_t>(k));
        }
    }
    std::printf("ok %zu %" PRIu64 "\n", all.size(), beats_out);
    return 0;
}
