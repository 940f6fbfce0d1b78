// Drives rtl/warp/warp_extract.sv (CHUNK 128), combinational, its two halves back to back: one vector per stdin
// line, one answer per line.
//
// Input: CHUNK LEN CFG_A CFG_B in hex (CHUNK 256 digits, byte 0 first). Output: "KIND VALUE" in hex. A malformed
// line ends the run with exit status 2 and a message naming the line.

#include <cinttypes>
#include <cstdio>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>

#include "Vwarp_extract.h"
#include "verilated.h"

int main(int argc, char** argv) {
    auto context = std::make_unique<VerilatedContext>();
    context->commandArgs(argc, argv);
    auto top = std::make_unique<Vwarp_extract>(context.get());
    std::string line;
    unsigned n = 0;
    while (std::getline(std::cin, line)) {
        ++n;
        std::istringstream in(line);
        std::string chunk, len, a, b;
        if (!(in >> chunk >> len >> a >> b) || chunk.size() != 256) {
            std::fprintf(stderr, "line %u: malformed\n", n);
            return 2;
        }
        for (unsigned w = 0; w < 32; ++w) {
            uint32_t word = 0;
            for (unsigned i = 0; i < 4; ++i) {
                word |= static_cast<uint32_t>(std::stoul(chunk.substr(2 * (4 * w + i), 2), nullptr, 16)) << (8 * i);
            }
            top->chunk_i[w] = word;
        }
        top->len_i = std::stoul(len, nullptr, 16);
        top->cfg_a_i = std::stoull(a, nullptr, 16);
        top->rd_cfg_a_i = top->cfg_a_i;
        top->cfg_b_i = std::stoull(b, nullptr, 16);
        top->eval();
        top->window_i = top->window_o;  // the two halves back to back, no register between them
        top->eval();
        std::printf("%x %" PRIx64 "\n", unsigned(top->kind_o), static_cast<uint64_t>(top->value_o));
    }
    top->final();
    return 0;
}
