// Drives rtl/sephirot/alu.sv with test vectors from stdin and prints one "valid result" line per vector.
//
// Input lines are hex fields "op wide off a b end_imm end_swap"; output lines are "valid result" in hex, in the
// same order, so a caller can compare them with a reference model line by line. A malformed line ends the run with
// exit status 2 and a message naming the line.

#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <memory>

#include "Valu.h"
#include "verilated.h"

int main(int argc, char** argv) {
    auto context = std::make_unique<VerilatedContext>();
    context->commandArgs(argc, argv);
    auto alu = std::make_unique<Valu>(context.get());

    char line[512];
    unsigned long line_number = 0;
    while (std::fgets(line, sizeof line, stdin) != nullptr) {
        ++line_number;
        if (std::strspn(line, " \t\r\n") == std::strlen(line)) {
            continue;
        }
        unsigned op = 0, wide = 0, off = 0, end_imm = 0, end_swap = 0;
        uint64_t a = 0, b = 0;
        int fields = std::sscanf(line, "%x %x %x %" SCNx64 " %" SCNx64 " %x %x", &op, &wide, &off, &a, &b,
                                 &end_imm, &end_swap);
        if (fields != 7 || op > 0xf || wide > 1 || off > 0xffff || end_swap > 1) {
            std::fprintf(stderr, "alu_tb: line %lu: expected \"op wide off a b end_imm end_swap\" in hex\n",
                         line_number);
            return 2;
        }
        alu->op_i = op;
        alu->wide_i = wide;
        alu->off_i = off;
        alu->a_i = a;
        alu->b_i = b;
        alu->end_imm_i = end_imm;
        alu->end_swap_i = end_swap;
        alu->eval();
        std::printf("%x %" PRIx64 "\n", static_cast<unsigned>(alu->valid_o),
                    static_cast<uint64_t>(alu->result_o));
    }
    alu->final();
    return 0;
}
