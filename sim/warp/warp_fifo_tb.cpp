// Drives rtl/warp/warp_fifo.sv (WIDTH 64, DEPTH 8) with random pushes and pops, checked every clock against a queue:
// rdata_o is the oldest word whenever valid_o, full_o is high exactly when DEPTH words are held, a word pushed into
// an empty FIFO is on rdata_o two cycles later, a push while full is ignored, and every word comes out once, in order.
//
// Input: one line "SEED CYCLES" (decimal). Output: "ok PUSHED" or the first "mismatch ..." line (exit status 1).

#include <cinttypes>
#include <cstdio>
#include <deque>
#include <memory>

#include "Vwarp_fifo.h"
#include "verilated.h"

namespace {

constexpr size_t kDepth = 8;

uint64_t next(uint64_t& s) {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return s;
}

}  // namespace

int main(int argc, char** argv) {
    Verilated::commandArgs(argc, argv);
    uint64_t seed = 0, cycles = 0;
    if (std::scanf("%" SCNu64 " %" SCNu64, &seed, &cycles) != 2 || seed == 0) {
        std::fprintf(stderr, "expected a line \"SEED CYCLES\" with a non-zero seed\n");
        return 2;
    }
    auto top = std::make_unique<Vwarp_fifo>();
    top->rst_ni = 0;
    top->push_i = 0;
    top->pop_i = 0;
    top->clk_i = 0;
    top->eval();
    top->clk_i = 1;
    top->eval();
    top->rst_ni = 1;
    std::deque<uint64_t> model;
    uint64_t pushed = 0, popped = 0;
    int empty_for = 0;  // cycles the FIFO has held a word while valid_o was low
    for (uint64_t c = 0; c < cycles + 64; ++c) {
        uint64_t r = next(seed);
        bool draining = c >= cycles;
        // Phases of mostly pushes and mostly pops, so the FIFO runs full and empty.
        bool push_phase = ((c / 50) % 2) == 0;
        bool push = !draining && (r % 4) < (push_phase ? 3u : 1u);
        bool pop = ((r >> 8) % 4) < (draining ? 4u : (push_phase ? 1u : 3u));
        uint64_t data = next(seed);
        top->push_i = push;
        top->wdata_i = data;
        top->pop_i = pop;
        top->clk_i = 0;
        top->eval();
        bool valid = top->valid_o, full = top->full_o;
        if (full != (model.size() == kDepth)) {
            std::printf("mismatch cycle %" PRIu64 ": full_o %d with %zu words held\n", c, full, model.size());
            return 1;
        }
        if (valid && (model.empty() || top->rdata_o != model.front())) {
            std::printf("mismatch cycle %" PRIu64 ": rdata_o %" PRIx64 ", oldest %" PRIx64 " (%zu held)\n", c,
                        static_cast<uint64_t>(top->rdata_o), model.empty() ? 0 : model.front(), model.size());
            return 1;
        }
        empty_for = (!valid && !model.empty()) ? empty_for + 1 : 0;
        if (empty_for > 2) {
            std::printf("mismatch cycle %" PRIu64 ": %zu words held, valid_o low for 3 cycles\n", c, model.size());
            return 1;
        }
        if (valid && pop) {
            model.pop_front();
            ++popped;
        }
        if (push && !full) {
            model.push_back(data);
            ++pushed;
        }
        top->clk_i = 1;
        top->eval();
    }
    if (!model.empty() || popped != pushed) {
        std::printf("mismatch: %" PRIu64 " pushed, %" PRIu64 " popped, %zu left\n", pushed, popped, model.size());
        return 1;
    }
    std::printf("ok %" PRIu64 "\n", pushed);
    return 0;
}
