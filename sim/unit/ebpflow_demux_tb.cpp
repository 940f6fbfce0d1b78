// Drives rtl/ebpflow/ebpflow_demux.sv (G 4 engines, 128-bit tuser) with random packets (1 to 8 beats, gaps between
// beats) towards four stand-in engines: an engine is free (tready high) until it has taken a packet's last beat, then
// busy for a random number of cycles (its program and its output), then free again. Checks: every packet reaches
// exactly one engine, whole, in order and with its bytes and tuser; a packet goes to the first free engine at or after
// the one after the engine of the previous packet (round robin over free engines); no beat is taken while no engine
// is free.
//
// Input: one line "SEED PACKETS" (decimal). Output: "ok PACKETS" followed by the packets each engine took, or the
// first "mismatch ..." line (exit status 1).

#include <cinttypes>
#include <cstdio>
#include <memory>

#include "Vebpflow_demux.h"
#include "verilated.h"

namespace {

constexpr int kG = 4;

uint64_t next(uint64_t& s) {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return s;
}

uint64_t word_of(uint32_t id, unsigned beat) { return (static_cast<uint64_t>(id) << 20) ^ (beat * 0x2545f491u); }

struct Engine {
    bool receiving = false;
    uint32_t id = 0;
    unsigned beat = 0;
    unsigned busy = 0;  // cycles left before it is free again
    uint64_t packets = 0;
};

}  // namespace

int main(int argc, char** argv) {
    Verilated::commandArgs(argc, argv);
    uint64_t seed = 0, packets = 0;
    if (std::scanf("%" SCNu64 " %" SCNu64, &seed, &packets) != 2 || seed == 0) {
        std::fprintf(stderr, "expected a line \"SEED PACKETS\" with a non-zero seed\n");
        return 2;
    }
    auto top = std::make_unique<Vebpflow_demux>();
    Engine eng[kG];
    top->rst_ni = 0;
    top->clk_i = 0;
    top->eval();
    top->rst_ni = 1;
    top->eval();
    uint32_t id = 1;
    unsigned beat = 0;
    unsigned beats = 1 + next(seed) % 8;
    bool offering = false;
    int rr = 0;  // the engine tried first for the next packet
    int cur = -1;
    const uint64_t limit = packets * 100 + 100;
    uint64_t c = 0;
    for (; c < limit && id <= packets; ++c) {
        if (!offering && next(seed) % 3 == 0) {
            offering = false;
        } else {
            offering = true;
        }
        unsigned ready = 0;
        for (int g = 0; g < kG; ++g) {
            if (eng[g].busy == 0) ready |= 1u << g;
        }
        top->m_axis_tready_i = ready;
        top->s_axis_tvalid_i = offering;
        top->s_axis_tdata_i = word_of(id, beat);
        top->s_axis_tkeep_i = 0xff;
        top->s_axis_tlast_i = beat + 1 == beats;
        top->s_axis_tuser_i[0] = id;
        top->s_axis_tuser_i[1] = beat;
        top->eval();
        const bool taken = offering && top->s_axis_tready_o;
        unsigned valids = top->m_axis_tvalid_o;
        if (offering && beat == 0) {
            int want = -1;
            for (int k = 0; k < kG && want < 0; ++k) {
                const int g = (rr + k) % kG;
                if ((ready >> g) & 1) want = g;
            }
            if (want < 0 && taken) {
                std::printf("mismatch cycle %" PRIu64 ": packet %u taken with no engine free\n", c, id);
                return 1;
            }
            if (want >= 0 && (!taken || valids != (1u << want))) {
                std::printf("mismatch cycle %" PRIu64 ": packet %u to engines %x, the free one after %d is %d\n", c,
                            id, valids, rr, want);
                return 1;
            }
            cur = want;
        } else if (offering && valids != (1u << cur)) {
            std::printf("mismatch cycle %" PRIu64 ": beat %u of packet %u to engines %x, not %d\n", c, beat, id,
                        valids, cur);
            return 1;
        }
        unsigned done = 0;
        for (int g = 0; g < kG; ++g) {
            if (!((valids >> g) & 1) || !((ready >> g) & 1)) continue;
            Engine& e = eng[g];
            if (top->m_axis_tdata_o != word_of(id, beat) || top->m_axis_tuser_o[0] != id ||
                (e.receiving && e.id != id) || (!e.receiving && beat != 0)) {
                std::printf("mismatch cycle %" PRIu64 ": engine %d got a wrong beat of packet %u\n", c, g, id);
                return 1;
            }
            e.receiving = true;
            e.id = id;
            if (top->m_axis_tlast_o) {
                e.receiving = false;
                e.busy = 1 + next(seed) % 40;
                ++e.packets;
                done |= 1u << g;
            }
        }
        top->clk_i = 1;
        top->eval();
        top->clk_i = 0;
        top->eval();
        for (int g = 0; g < kG; ++g) {
            if (eng[g].busy > 0 && !((done >> g) & 1)) {
                --eng[g].busy;
            }
        }
        if (taken) {
            ++beat;
            if (beat == beats) {
                rr = (cur + 1) % kG;
                ++id;
                beat = 0;
                beats = 1 + next(seed) % 8;
                offering = false;
            }
        }
    }
    if (id <= packets) {
        std::printf("mismatch: %u packets in after %" PRIu64 " cycles\n", id - 1, c);
        return 1;
    }
    std::printf("ok %" PRIu64, packets);
    for (int g = 0; g < kG; ++g) std::printf(" %" PRIu64, eng[g].packets);
    std::printf("\n");
    return 0;
}
