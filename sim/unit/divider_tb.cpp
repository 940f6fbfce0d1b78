// Drives rtl/sephirot/divider.sv with test vectors from stdin and prints one "valid result edges" line per vector.
//
// Input lines are hex fields "op wide off a b"; for each, start_i is held for one clock edge with the operands, then
// the clock runs until done_o (at most 200 edges). Output lines are "valid result edges" in hex: valid_o and result_o
// once done, and the edges after the start edge it took. A malformed line, or a division that never finishes, ends
// the run with exit status 2 and a message naming the line.

#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <memory>

#include "Vdivider.h"
#include "verilated.h"

namespace {

void tick(Vdivider& d) {
    d.clk_i = 0;
    d.eval();
    d.clk_i = 1;
    d.eval();
}

}  // namespace

int main(int argc, char** argv) {
    auto context = std::make_unique<VerilatedContext>();
    context->commandArgs(argc, argv);
    auto d = std::make_unique<Vdivider>(context.get());
    d->rst_ni = 0;
    d->start_i = 0;
    d->clk_i = 0;
    d->eval();
    d->rst_ni = 1;
    d->eval();

    char line[512];
    unsigned long line_number = 0;
    while (std::fgets(line, sizeof line, stdin) != nullptr) {
        ++line_number;
        if (std::strspn(line, " \t\r\n") == std::strlen(line)) {
            continue;
        }
        unsigned op = 0, wide = 0, off = 0;
        uint64_t a = 0, b = 0;
        int fields = std::sscanf(line, "%x %x %x %" SCNx64 " %" SCNx64, &op, &wide, &off, &a, &b);
        if (fields != 5 || op > 0xf || wide > 1 || off > 0xffff) {
            std::fprintf(stderr, "divider_tb: line %lu: expected \"op wide off a b\" in hex\n", line_number);
            return 2;
        }
        d->op_i = op;
        d->wide_i = wide;
        d->off_i = off;
        d->a_i = a;
        d->b_i = b;
        d->start_i = 1;
        tick(*d);
        d->start_i = 0;
        // Other inputs change while it runs: the divider must have sampled them at the start.
        d->a_i = ~a;
        d->b_i = a ^ b;
        d->op_i = op ^ 0x5;
        d->eval();
        unsigned edges = 0;
        while (!d->done_o) {
            if (edges == 200) {
                std::fprintf(stderr, "divider_tb: line %lu: no done_o after 200 edges\n", line_number);
                return 2;
            }
            tick(*d);
            ++edges;
        }
        std::printf("%x %" PRIx64 " %x\n", static_cast<unsigned>(d->valid_o), static_cast<uint64_t>(d->result_o),
                    edges);
    }
    d->final();
    return 0;
}
