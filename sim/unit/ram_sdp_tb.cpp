// Drives rtl/common/ram_sdp.sv (WIDTH 64, DEPTH 512) with random writes (byte enables) and reads, one of each per
// clock, checked against a model of the RAM: registered read, read-first on a same-address write, the output held
// while rd_en_i is low.
//
// Input: one line "SEED CYCLES" (decimal). Output: "ok CYCLES" or the first "mismatch ..." line (exit status 1).

#include <cinttypes>
#include <cstdio>
#include <memory>

#include "Vram_sdp.h"
#include "verilated.h"

namespace {

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
    auto top = std::make_unique<Vram_sdp>();
    static uint64_t model[512] = {};
    uint64_t expected = 0;
    bool known = false;
    for (uint64_t c = 0; c < cycles; ++c) {
        uint64_t r = next(seed);
        // Narrow addresses (32 words) so reads often meet the word written in the same cycle.
        unsigned waddr = (r >> 1) % 32, raddr = (r >> 9) % 32;
        bool we = r & 1, re = (r >> 17) & 1;
        uint8_t be = static_cast<uint8_t>(r >> 24);
        uint64_t data = next(seed);
        top->wr_en_i = we;
        top->wr_addr_i = waddr;
        top->wr_data_i = data;
        top->wr_be_i = be;
        top->rd_en_i = re;
        top->rd_addr_i = raddr;
        top->clk_i = 0;
        top->eval();
        top->clk_i = 1;
        top->eval();
        if (re) {
            expected = model[raddr];
            known = true;
        }
        if (we) {
            for (int b = 0; b < 8; ++b) {
                if (be >> b & 1) {
                    uint64_t mask = 0xffULL << (8 * b);
                    model[waddr] = (model[waddr] & ~mask) | (data & mask);
                }
            }
        }
        if (known && top->rd_data_o != expected) {
            std::printf("mismatch cycle %" PRIu64 " read %016" PRIx64 " expected %016" PRIx64 "\n", c,
                        static_cast<uint64_t>(top->rd_data_o), expected);
            return 1;
        }
    }
    std::printf("ok %" PRIu64 "\n", cycles);
    return 0;
}
