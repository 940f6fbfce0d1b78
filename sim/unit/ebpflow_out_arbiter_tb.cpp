// Drives rtl/ebpflow/ebpflow_out_arbiter.sv (G 4 engines, 128-bit tuser) with four stand-in engines, each offering
// random packets (1 to 8 beats) after random pauses and holding every beat until it is taken, and random
// back-pressure on the output. Checks: the output carries whole packets, never interleaved, each with its bytes,
// tuser and tlast; an offered output beat stays until taken; each engine's packets leave in its order; a packet that
// starts comes from the first engine with tvalid high at or after the one after the previous packet's engine (round
// robin); every packet leaves.
//
// Input: one line "SEED PACKETS" (decimal, packets per engine). Output: "ok PACKETS BEATS" or the first
// "mismatch ..." line (exit status 1).

#include <cinttypes>
#include <cstdio>
#include <memory>

#include "Vebpflow_out_arbiter.h"
#include "verilated.h"

namespace {

constexpr int kG = 4;

uint64_t next(uint64_t& s) {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return s;
}

uint64_t word_of(uint32_t id, unsigned beat) { return (static_cast<uint64_t>(id) << 24) ^ (beat * 0x632be5abu); }

struct Source {
    uint32_t sent = 0;  // packets gone
    unsigned beat = 0;
    unsigned beats = 1;
    unsigned pause = 0;
    bool offering = false;
    uint32_t id() const { return sent * kG; }
};

int fail(uint64_t c, const char* what, uint32_t id) {
    std::printf("mismatch cycle %" PRIu64 " packet %u: %s\n", c, id, what);
    return 1;
}

}  // namespace

int main(int argc, char** argv) {
    Verilated::commandArgs(argc, argv);
    uint64_t seed = 0, packets = 0;
    if (std::scanf("%" SCNu64 " %" SCNu64, &seed, &packets) != 2 || seed == 0) {
        std::fprintf(stderr, "expected a line \"SEED PACKETS\" with a non-zero seed\n");
        return 2;
    }
    auto top = std::make_unique<Vebpflow_out_arbiter>();
    Source src[kG];
    for (auto& s : src) s.beats = 1 + next(seed) % 8;
    top->rst_ni = 0;
    top->clk_i = 0;
    top->eval();
    top->rst_ni = 1;
    top->eval();
    int rr = 0;
    bool open = false;
    int cur = -1;
    bool offered = false;
    uint64_t held = 0;
    uint64_t beats_out = 0;
    uint64_t done = 0;
    const uint64_t limit = packets * kG * 40 + 100;
    uint64_t c = 0;
    for (; c < limit && done < packets * kG; ++c) {
        unsigned valid = 0, last = 0;
        for (int g = 0; g < kG; ++g) {
            Source& s = src[g];
            if (s.sent >= packets) continue;
            if (!s.offering) {
                if (s.pause > 0) {
                    --s.pause;
                    continue;
                }
                s.offering = true;
            }
            valid |= 1u << g;
            if (s.beat + 1 == s.beats) last |= 1u << g;
            const uint32_t id = s.id() + g;
            const uint64_t w = word_of(id, s.beat);
            top->s_axis_tdata_i[2 * g] = static_cast<uint32_t>(w);
            top->s_axis_tdata_i[2 * g + 1] = static_cast<uint32_t>(w >> 32);
            top->s_axis_tuser_i[4 * g] = id;
        }
        top->s_axis_tvalid_i = valid;
        top->s_axis_tlast_i = last;
        top->s_axis_tkeep_i = 0xffffffffu;
        const bool ready = next(seed) % 10 < 7;
        top->m_axis_tready_i = ready;
        top->eval();
        const bool v = top->m_axis_tvalid_o;
        const uint64_t data = top->m_axis_tdata_o;
        const uint32_t user = top->m_axis_tuser_o[0];
        if (offered && (!v || data != held)) return fail(c, "an offered beat changed before it was taken", user);
        offered = v && !ready;
        held = data;
        if (v && !open) {
            int want = -1;
            for (int k = 0; k < kG && want < 0; ++k) {
                const int g = (rr + k) % kG;
                if ((valid >> g) & 1) want = g;
            }
            if (static_cast<int>(user % kG) != want) return fail(c, "not the round-robin engine", user);
            cur = want;
            open = true;
        }
        if (v) {
            const Source& s = src[cur];
            if (user != s.id() + cur) return fail(c, "packets interleaved or out of order", user);
            if (data != word_of(user, s.beat)) return fail(c, "wrong data", user);
            if (static_cast<bool>(top->m_axis_tlast_o) != (s.beat + 1 == s.beats)) return fail(c, "wrong tlast", user);
        }
        const unsigned taken = valid & top->s_axis_tready_o;
        if (taken != ((v && ready) ? 1u << cur : 0u)) return fail(c, "tready to the wrong engine", user);
        top->clk_i = 1;
        top->eval();
        top->clk_i = 0;
        top->eval();
        if (v && ready) {
            ++beats_out;
            Source& s = src[cur];
            ++s.beat;
            if (s.beat == s.beats) {
                ++s.sent;
                ++done;
                s.beat = 0;
                s.beats = 1 + next(seed) % 8;
                s.offering = false;
                s.pause = next(seed) % 12;
                open = false;
                rr = (cur + 1) % kG;
            }
        }
    }
    if (done < packets * kG) {
        std::printf("mismatch: %" PRIu64 " packets out after %" PRIu64 " cycles\n", done, c);
        return 1;
    }
    std::printf("ok %" PRIu64 " %" PRIu64 "\n", done, beats_out);
    return 0;
}
