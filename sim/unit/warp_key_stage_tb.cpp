// Drives rtl/warp/warp_key_stage.sv (CHUNK 128, KEY_BYTES 16, READ 2, TAG_W 8) one vector per stdin line.
//
// Input: CHUNK LEN KEY CFG TAG in hex (CHUNK 256 digits and KEY 32 digits, byte 0 first); the stage is clocked once
// with en_i and valid_i high, then once with en_i low. Output: "VALID KEY LEN TAG" in hex (KEY byte 0 first), the
// registered outputs after both clocks. A malformed line ends the run with exit status 2 and a message naming it.

#include <cinttypes>
#include <cstdio>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>

#include "Vwarp_key_stage.h"
#include "verilated.h"

namespace {

template <std::size_t W>
void set_wide(VlWide<W>& v, const std::string& hex) {
    for (unsigned w = 0; w < W; ++w) {
        uint32_t word = 0;
        for (unsigned i = 0; i < 4; ++i) {
            word |= static_cast<uint32_t>(std::stoul(hex.substr(2 * (4 * w + i), 2), nullptr, 16)) << (8 * i);
        }
        v[w] = word;
    }
}

void tick(Vwarp_key_stage* top) {
    top->clk_i = 1;
    top->eval();
    top->clk_i = 0;
    top->eval();
}

}  // namespace

int main(int argc, char** argv) {
    auto context = std::make_unique<VerilatedContext>();
    context->commandArgs(argc, argv);
    auto top = std::make_unique<Vwarp_key_stage>(context.get());
    top->rst_ni = 0;
    top->eval();
    tick(top.get());
    top->rst_ni = 1;
    std::string line;
    unsigned n = 0;
    while (std::getline(std::cin, line)) {
        ++n;
        std::istringstream in(line);
        std::string chunk, len, key, cfg, tag;
        if (!(in >> chunk >> len >> key >> cfg >> tag) || chunk.size() != 256 || key.size() != 32) {
            std::fprintf(stderr, "line %u: malformed\n", n);
            return 2;
        }
        set_wide(top->chunk_i, chunk);
        set_wide(top->key_i, key);
        top->len_i = std::stoul(len, nullptr, 16);
        top->cfg_i = std::stoull(cfg, nullptr, 16);
        top->tag_i = std::stoul(tag, nullptr, 16);
        top->valid_i = 1;
        top->en_i = 1;
        tick(top.get());
        top->en_i = 0;
        top->valid_i = 0;
        tick(top.get());
        std::printf("%x ", unsigned(top->valid_o));
        for (unsigned b = 0; b < 16; ++b) std::printf("%02x", (top->key_o[b / 4] >> (8 * (b % 4))) & 0xff);
        std::printf(" %x %x\n", unsigned(top->len_o), unsigned(top->tag_o));
    }
    top->final();
    return 0;
}
