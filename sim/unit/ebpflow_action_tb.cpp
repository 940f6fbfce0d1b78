// Drives rtl/ebpflow/ebpflow_action.sv (P 4 ports, M 6 TX queues: 0-3 the ports, 4 the host, 5 the controller) with
// every XDP verdict and every Table 4.2 code class, then random results, and checks the action code, the TX-queue
// mask and the destination-queue byte against the table (docs/ebpflow.md, "Actions"):
//   XDP mode: a fault, XDP_ABORTED, XDP_DROP and any other verdict drop; XDP_PASS goes to the host (0xFFF2); XDP_TX
//   to the input port; XDP_REDIRECT to the reported port, or drops without one. The verdict is r0's low 32 bits.
//   Code mode: 0 .. 3 a port, 4 .. 0xFFEF a port the NIC does not have (dropped), 0xFFF0 drop, 0xFFF3 the
//   controller, 0xFFF2/0xFFF4/0xFFF5 the host, 0xFFFF every port but the input port, the rest and r0 above 0xFFFF
//   drop.
//
// Input: one line "SEED CASES" (decimal). Output: "ok CASES" or the first "mismatch ..." line (exit status 1).

#include <cinttypes>
#include <cstdio>
#include <memory>
#include <vector>

#include "Vebpflow_action.h"
#include "verilated.h"

namespace {

constexpr unsigned kP = 4;
constexpr unsigned kHost = 4;
constexpr unsigned kCtrl = 5;

uint64_t next(uint64_t& s) {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return s;
}

struct Want {
    unsigned code;
    unsigned mask;
    unsigned dest;
};

Want expect(bool xdp, uint64_t r0, bool fault, unsigned in_port, bool rdr_valid, unsigned rdr_port) {
    unsigned code = 0xfff0;
    if (fault) {
        code = 0xfff0;
    } else if (xdp) {
        const uint32_t v = static_cast<uint32_t>(r0);
        code = v == 2 ? 0xfff2 : v == 3 ? in_port : v == 4 ? (rdr_valid ? rdr_port : 0xfff0) : 0xfff0;
    } else {
        code = (r0 >> 16) == 0 ? static_cast<unsigned>(r0) : 0xfff0;
    }
    if (code < kP) return {code, 1u << code, code};
    if (code == 0xfff3) return {code, 1u << kCtrl, kCtrl};
    if (code == 0xfff2 || code == 0xfff4 || code == 0xfff5) return {code, 1u << kHost, kHost};
    if (code == 0xffff) return {code, 0xfu & ~(1u << in_port), 0xff};
    return {code, 0, 0xf0};
}

}  // namespace

int main(int argc, char** argv) {
    Verilated::commandArgs(argc, argv);
    uint64_t seed = 0, cases = 0;
    if (std::scanf("%" SCNu64 " %" SCNu64, &seed, &cases) != 2 || seed == 0) {
        std::fprintf(stderr, "expected a line \"SEED CASES\" with a non-zero seed\n");
        return 2;
    }
    auto top = std::make_unique<Vebpflow_action>();
    const std::vector<uint64_t> special = {0,      1,      2,      3,      4,      5,      0xffffffff, 0x100000003,
                                           0xffef, 0xfff0, 0xfff1, 0xfff2, 0xfff3, 0xfff4, 0xfff5,     0xfff6,
                                           0xfffe, 0xffff, 0x10000, 0x1ffff, 7,     0x10002};
    uint64_t n = 0;
    for (uint64_t k = 0; k < cases; ++k) {
        const uint64_t r = next(seed);
        const bool xdp = r & 1;
        const bool fault = (r >> 1) % 8 == 0;
        const unsigned in_port = (r >> 4) % kP;
        const bool rdr_valid = (r >> 6) & 1;
        const unsigned rdr_port = (r >> 7) % 3 == 0 ? static_cast<unsigned>((r >> 9) & 0xffff) : (r >> 9) % 6;
        const uint64_t r0 = k < special.size() * 4 ? special[k % special.size()] : (r >> 20) % 3 ? (r >> 30) % 8 : next(seed);
        top->xdp_i = xdp;
        top->r0_i = r0;
        top->fault_i = fault;
        top->in_port_i = in_port;
        top->redirect_valid_i = rdr_valid;
        top->redirect_port_i = rdr_port;
        top->eval();
        const Want w = expect(xdp, r0, fault, in_port, rdr_valid, rdr_port);
        if (top->action_o != w.code || top->mask_o != w.mask || top->dest_q_o != w.dest) {
            std::printf("mismatch case %" PRIu64 ": xdp %d r0 %" PRIx64 " fault %d port %u redirect %d:%u -> code %x mask %x "
                        "dest %x, want %x %x %x\n",
                        k, xdp, r0, fault, in_port, rdr_valid, rdr_port, top->action_o, top->mask_o, top->dest_q_o,
                        w.code, w.mask, w.dest);
            return 1;
        }
        ++n;
    }
    std::printf("ok %" PRIu64 "\n", n);
    return 0;
}
