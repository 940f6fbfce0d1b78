// Drives rtl/ebpflow/ebpflow_imem_db.sv (built with -GENGINES=4 -GDEPTH=64 -GIW=6) with engines that run random
// packets (a start, random reads for a random number of cycles, a done) while the host writes program after program
// into the inactive bank (whenever wr_ready_o allows, with gaps), sets its length and swaps. Program p's slot i is
// (p << 32) | i and its length 32 + p % 32.
//
// Checked every cycle: each read of a packet returns the slot of the one program that was active when the packet
// started (so no packet runs on a half-written program or on two programs), prog_len_o is that program's length, and
// every packet that starts after a swap runs the program the swap made active.
//
// Input: one line "SEED CYCLES" (decimal). Output: "ok PACKETS SWAPS" or the first "mismatch ..." line (status 1).

#include <cinttypes>
#include <cstdio>
#include <memory>

#include "Vebpflow_imem_db.h"
#include "verilated.h"

namespace {

constexpr int kEngines = 4;
constexpr int kDepth = 64;

uint64_t next(uint64_t& s) {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return s;
}

uint64_t slot(uint64_t prog, uint64_t i) { return prog << 32 | i; }
uint64_t len_of(uint64_t prog) { return 32 + prog % 32; }

struct Engine {
    bool busy = false;
    int left = 0;          // cycles of the packet still to run
    uint64_t prog = 0;     // the program it runs
    bool pending = false;  // a read was issued at the last edge
    uint64_t addr = 0;
};

}  // namespace

int main(int argc, char** argv) {
    Verilated::commandArgs(argc, argv);
    uint64_t seed = 0, cycles = 0;
    if (std::scanf("%" SCNu64 " %" SCNu64, &seed, &cycles) != 2 || seed == 0) {
        std::fprintf(stderr, "expected a line \"SEED CYCLES\" with a non-zero seed\n");
        return 2;
    }
    auto top = std::make_unique<Vebpflow_imem_db>();
    top->clk_i = 0;
    top->rst_ni = 1;
    top->eval();
    top->rst_ni = 0;
    top->eval();
    top->rst_ni = 1;
    top->eval();

    Engine eng[kEngines];
    uint64_t active_prog = 0;    // the program in the active bank (program 0: the empty bank, all zeros)
    uint64_t writing = 1;        // the program the host writes next
    uint64_t written = 0;        // slots of it written so far
    bool len_done = false;
    uint64_t packets = 0, swaps = 0;
    bool first = true;
    for (uint64_t c = 0; c < cycles; ++c) {
        // Inputs of this cycle.
        top->wr_en_i = 0;
        top->len_we_i = 0;
        top->swap_i = 0;
        top->start_i = 0;
        top->done_i = 0;
        top->rd_en_i = 0;
        uint64_t r = next(seed);
        bool ready = top->wr_ready_o;
        bool swapping = false;
        if (written < static_cast<uint64_t>(kDepth)) {
            if (r & 1) {
                top->wr_en_i = 1;
                top->wr_addr_i = written;
                top->wr_data_i = slot(writing, written);
            }
        } else if (!len_done) {
            top->len_we_i = 1;
            top->len_i = len_of(writing);
        } else if ((r >> 1) % 8 == 0) {
            top->swap_i = 1;
            swapping = true;
        }
        for (int e = 0; e < kEngines; ++e) {
            uint64_t x = next(seed);
            Engine& g = eng[e];
            if (!g.busy) {
                if (x % 3 == 0) {
                    top->start_i |= 1u << e;
                    g.busy = true;
                    g.left = 1 + static_cast<int>((x >> 8) % 40);
                    g.prog = active_prog;
                    ++packets;
                }
            } else if (--g.left == 0) {
                top->done_i |= 1u << e;
                g.busy = false;
            }
            bool rd = (top->start_i >> e & 1) || (g.busy && (x >> 4) % 2 == 0);
            if (rd) {
                top->rd_en_i |= 1u << e;
                uint64_t a = (top->start_i >> e & 1) ? 0 : (x >> 16) % kDepth;
                top->rd_addr_i = (top->rd_addr_i & ~(0x3fULL << (6 * e))) | (a << (6 * e));
                g.addr = a;
            }
        }
        top->eval();
        // Lengths while packets run on their bank.
        for (int e = 0; e < kEngines; ++e) {
            if (eng[e].busy || (top->start_i >> e & 1)) {
                uint64_t len = (top->prog_len_o >> (7 * e)) & 0x7f;
                uint64_t want = eng[e].prog == 0 ? 0 : len_of(eng[e].prog);
                if (len != want && !(top->done_i >> e & 1)) {
                    std::printf("mismatch cycle %" PRIu64 " engine %d: length %" PRIu64 " for program %" PRIu64 "\n",
                                c, e, len, eng[e].prog);
                    return 1;
                }
            }
        }
        top->clk_i = 1;
        top->eval();
        top->clk_i = 0;
        top->eval();
        // The host's writes took effect only when ready.
        if (top->wr_en_i && ready) ++written;
        if (top->len_we_i && ready) len_done = true;
        if (swapping) {
            active_prog = writing;
            ++writing;
            written = 0;
            len_done = false;
            ++swaps;
        }
        // The reads of this cycle.
        for (int e = 0; e < kEngines; ++e) {
            if (!(top->rd_en_i >> e & 1)) continue;
            uint64_t got = top->rd_data_o[2 * e] | static_cast<uint64_t>(top->rd_data_o[2 * e + 1]) << 32;
            uint64_t want = eng[e].prog == 0 ? 0 : slot(eng[e].prog, eng[e].addr);
            if (got != want) {
                std::printf("mismatch cycle %" PRIu64 " engine %d slot %" PRIu64 ": %" PRIx64 " for program %" PRIu64
                            "\n", c, e, eng[e].addr, got, eng[e].prog);
                return 1;
            }
        }
        first = false;
    }
    (void)first;
    std::printf("ok %" PRIu64 " %" PRIu64 "\n", packets, swaps);
    top->final();
    return 0;
}
