// Drives rtl/warp/warp_tcam.sv (KEY_BITS 128, ENTRIES 64) one command per stdin line.
//
//   w SLICE ADDR DATA   a configuration write (one clock)                                  -> no answer
//   k KEY               key (32 hex digits, key byte 0 first), two clocks with en_i high   -> "HIT INDEX"
//   s KEY               key, one clock with en_i high, then one with it low                 -> "HIT INDEX"
//                       (the TCAM holds: still the earlier key's result)
// A malformed line ends the run with exit status 2 and a message naming the line.

#include <cinttypes>
#include <cstdio>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>

#include "Vwarp_tcam.h"
#include "verilated.h"

namespace {

void tick(Vwarp_tcam* top) {
    top->clk_i = 1;
    top->eval();
    top->clk_i = 0;
    top->eval();
}

}  // namespace

int main(int argc, char** argv) {
    auto context = std::make_unique<VerilatedContext>();
    context->commandArgs(argc, argv);
    auto top = std::make_unique<Vwarp_tcam>(context.get());
    top->rst_ni = 0;
    top->eval();
    tick(top.get());
    top->rst_ni = 1;
    top->eval();
    std::string line;
    unsigned n = 0;
    while (std::getline(std::cin, line)) {
        ++n;
        std::istringstream in(line);
        std::string cmd, x, y, z;
        in >> cmd;
        if (cmd == "w" && (in >> x >> y >> z)) {
            top->cfg_we_i = 1;
            top->cfg_slice_i = std::stoul(x, nullptr, 16);
            top->cfg_addr_i = std::stoul(y, nullptr, 16);
            top->cfg_data_i = std::stoull(z, nullptr, 16);
            tick(top.get());
            top->cfg_we_i = 0;
        } else if ((cmd == "k" || cmd == "s") && (in >> x) && x.size() == 32) {
            for (unsigned w = 0; w < 4; ++w) {
                uint32_t word = 0;
                for (unsigned i = 0; i < 4; ++i) {
                    word |= static_cast<uint32_t>(std::stoul(x.substr(2 * (4 * w + i), 2), nullptr, 16)) << (8 * i);
                }
                top->key_i[w] = word;
            }
            top->en_i = 1;
            tick(top.get());
            top->en_i = cmd == "k";
            tick(top.get());
            top->en_i = 0;
            std::printf("%x %x\n", unsigned(top->hit_o), unsigned(top->index_o));
        } else {
            std::fprintf(stderr, "line %u: malformed\n", n);
            return 2;
        }
    }
    top->final();
    return 0;
}
