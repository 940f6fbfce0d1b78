// Drives rtl/common/ram_tdp.sv (WIDTH 64, DEPTH 512) with random reads and writes on both ports each clock, checked
// against a model of the RAM: registered reads, a read of the word the other port writes returns the old word, each
// port's output held until its next read, byte enables. Both ports never write one address at the same edge.
//
// Input: one line "SEED CYCLES" (decimal). Output: "ok CYCLES" or the first "mismatch ..." line (exit status 1).

#include <cinttypes>
#include <cstdio>
#include <memory>

#include "Vram_tdp.h"
#include "verilated.h"

namespace {

uint64_t next(uint64_t& s) {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return s;
}

struct Port {
    bool en, we;
    unsigned addr;
    uint64_t data;
    uint8_t be;
};

Port random_port(uint64_t& seed) {
    uint64_t r = next(seed);
    return Port{(r & 3) != 0, ((r >> 2) & 1) != 0, static_cast<unsigned>((r >> 3) % 32), next(seed),
                static_cast<uint8_t>(r >> 16)};
}

void write(uint64_t* model, const Port& p) {
    for (int b = 0; b < 8; ++b) {
        if (p.be >> b & 1) {
            uint64_t mask = 0xffULL << (8 * b);
            model[p.addr] = (model[p.addr] & ~mask) | (p.data & mask);
        }
    }
}

}  // namespace

int main(int argc, char** argv) {
    Verilated::commandArgs(argc, argv);
    uint64_t seed = 0, cycles = 0;
    if (std::scanf("%" SCNu64 " %" SCNu64, &seed, &cycles) != 2 || seed == 0) {
        std::fprintf(stderr, "expected a line \"SEED CYCLES\" with a non-zero seed\n");
        return 2;
    }
    auto top = std::make_unique<Vram_tdp>();
    static uint64_t model[512] = {};
    uint64_t expect_a = 0, expect_b = 0;
    bool known_a = false, known_b = false;
    for (uint64_t c = 0; c < cycles; ++c) {
        Port a = random_port(seed), b = random_port(seed);
        if (a.en && a.we && b.en && b.we && a.addr == b.addr) b.we = false;
        top->a_en_i = a.en;
        top->a_we_i = a.we;
        top->a_addr_i = a.addr;
        top->a_wdata_i = a.data;
        top->a_be_i = a.be;
        top->b_en_i = b.en;
        top->b_we_i = b.we;
        top->b_addr_i = b.addr;
        top->b_wdata_i = b.data;
        top->b_be_i = b.be;
        top->clk_i = 0;
        top->eval();
        top->clk_i = 1;
        top->eval();
        if (a.en && !a.we) {
            expect_a = model[a.addr];
            known_a = true;
        }
        if (b.en && !b.we) {
            expect_b = model[b.addr];
            known_b = true;
        }
        if (a.en && a.we) write(model, a);
        if (b.en && b.we) write(model, b);
        if ((known_a && top->a_rdata_o != expect_a) || (known_b && top->b_rdata_o != expect_b)) {
            std::printf("mismatch cycle %" PRIu64 " a %016" PRIx64 " (expected %016" PRIx64 ") b %016" PRIx64
                        " (expected %016" PRIx64 ")\n",
                        c, static_cast<uint64_t>(top->a_rdata_o), expect_a, static_cast<uint64_t>(top->b_rdata_o),
                        expect_b);
            return 1;
        }
    }
    std::printf("ok %" PRIu64 "\n", cycles);
    return 0;
}
