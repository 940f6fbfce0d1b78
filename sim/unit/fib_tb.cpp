// Drives rtl/sephirot/fib.sv with commands from stdin and prints one result line per command.
//
// Commands, numbers in hex; addresses, MACs and the struct are byte strings in hex, byte 0 first, exactly as long as
// the port (16, 6 and 64 bytes):
//   r                                                            reset                          -> "ok"
//   c                                                            tbl_clear_i for one cycle      -> "ERROR"
//   w KIND IFINDEX MAC MTU V6 ADDR LEN TYPE METRIC GWVALID GWV6 GW  one table write             -> "ERROR"
//   l FLAGS PARAMS HOLD                                          one lookup; HOLD 1 keeps req_valid_i high (with
//                                                                other params) while the module is busy, which it
//                                                                must ignore   -> "RET PARAMS CYCLES" (RET 16 hex
//                                                                digits; CYCLES from acceptance to rsp_valid_o)
// ERROR is tbl_error_o after the command. A malformed line ends the run with exit status 2 and a message naming it.

#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>

#include "Vfib.h"
#include "verilated.h"

namespace {

void tick(Vfib* top) {
    top->clk_i = 0;
    top->eval();
    top->clk_i = 1;
    top->eval();
}

int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

// The bytes of a hex string of exactly `n` bytes (byte 0 first) into out[]; false on bad input.
bool parse_bytes(const char* hex, std::size_t n, uint8_t* out) {
    if (std::strlen(hex) != 2 * n) return false;
    for (std::size_t i = 0; i < n; ++i) {
        int hi = hex_digit(hex[2 * i]), lo = hex_digit(hex[2 * i + 1]);
        if (hi < 0 || lo < 0) return false;
        out[i] = static_cast<uint8_t>(hi * 16 + lo);
    }
    return true;
}

template <std::size_t N>
void set_wide(VlWide<N>& port, const uint8_t* bytes) {
    for (std::size_t w = 0; w < N; ++w) port[w] = 0;
    for (std::size_t i = 0; i < N * 4; ++i) port[i / 4] |= static_cast<uint32_t>(bytes[i]) << (8 * (i % 4));
}

template <std::size_t N>
std::string get_wide(const VlWide<N>& port) {
    std::string out;
    char buf[3];
    for (std::size_t i = 0; i < N * 4; ++i) {
        std::snprintf(buf, sizeof buf, "%02x", (port[i / 4] >> (8 * (i % 4))) & 0xff);
        out += buf;
    }
    return out;
}

uint64_t mac_value(const uint8_t* bytes) {
    uint64_t v = 0;
    for (int i = 0; i < 6; ++i) v |= static_cast<uint64_t>(bytes[i]) << (8 * i);
    return v;
}

void idle_inputs(Vfib* top) {
    top->tbl_clear_i = 0;
    top->tbl_we_i = 0;
    top->req_valid_i = 0;
}

}  // namespace

int main(int argc, char** argv) {
    auto context = std::make_unique<VerilatedContext>();
    context->commandArgs(argc, argv);
    auto top = std::make_unique<Vfib>(context.get());

    idle_inputs(top.get());
    top->rst_ni = 0;
    tick(top.get());
    tick(top.get());
    top->rst_ni = 1;
    tick(top.get());

    static char line[4096];
    static char mac[256], addr[256], gw[256], params[512];
    unsigned long line_number = 0;
    while (std::fgets(line, sizeof line, stdin) != nullptr) {
        ++line_number;
        if (std::strspn(line, " \t\r\n") == std::strlen(line)) continue;
        Vfib* t = top.get();
        idle_inputs(t);
        bool ok = false;
        if (line[0] == 'r') {
            t->rst_ni = 0;
            tick(t);
            t->rst_ni = 1;
            tick(t);
            std::printf("ok\n");
            ok = true;
        } else if (line[0] == 'c') {
            t->tbl_clear_i = 1;
            tick(t);
            t->tbl_clear_i = 0;
            t->eval();
            std::printf("%x\n", static_cast<unsigned>(t->tbl_error_o));
            ok = true;
        } else if (line[0] == 'w') {
            unsigned kind = 0, ifindex = 0, mtu = 0, v6 = 0, len = 0, type = 0, metric = 0, gw_valid = 0, gw_v6 = 0;
            uint8_t mac_bytes[6], addr_bytes[16], gw_bytes[16];
            if (std::sscanf(line + 1, "%x %x %255s %x %x %255s %x %x %x %x %x %255s", &kind, &ifindex, mac, &mtu, &v6,
                            addr, &len, &type, &metric, &gw_valid, &gw_v6, gw) == 12 &&
                kind < 4 && v6 < 2 && len < 256 && type < 4 && gw_valid < 2 && gw_v6 < 2 &&
                parse_bytes(mac, 6, mac_bytes) && parse_bytes(addr, 16, addr_bytes) && parse_bytes(gw, 16, gw_bytes)) {
                t->tbl_we_i = 1;
                t->tbl_kind_i = kind;
                t->tbl_ifindex_i = ifindex;
                t->tbl_mac_i = mac_value(mac_bytes);
                t->tbl_mtu_i = mtu;
                t->tbl_v6_i = v6;
                set_wide(t->tbl_addr_i, addr_bytes);
                t->tbl_len_i = len;
                t->tbl_type_i = type;
                t->tbl_metric_i = metric;
                t->tbl_gw_valid_i = gw_valid;
                t->tbl_gw_v6_i = gw_v6;
                set_wide(t->tbl_gw_i, gw_bytes);
                tick(t);
                t->tbl_we_i = 0;
                t->eval();
                std::printf("%x\n", static_cast<unsigned>(t->tbl_error_o));
                ok = true;
            }
        } else if (line[0] == 'l') {
            unsigned flags = 0, hold = 0;
            uint8_t p[64];
            if (std::sscanf(line + 1, "%x %511s %x", &flags, params, &hold) == 3 && hold < 2 &&
                parse_bytes(params, 64, p)) {
                set_wide(t->req_params_i, p);
                t->req_flags_i = flags;
                t->req_valid_i = 1;
                for (unsigned long wait = 0;; ++wait) {
                    t->eval();
                    bool ready = t->req_ready_o;
                    tick(t);
                    if (ready) break;
                    if (wait > 1000) {
                        std::fprintf(stderr, "fib_tb: line %lu: request never accepted\n", line_number);
                        return 2;
                    }
                }
                if (hold) {
                    // another request offered while busy: different params and flags, which must not be taken
                    uint8_t other[64];
                    for (int i = 0; i < 64; ++i) other[i] = static_cast<uint8_t>(~p[i]);
                    set_wide(t->req_params_i, other);
                    t->req_flags_i = ~flags;
                } else {
                    t->req_valid_i = 0;
                }
                unsigned long cycles = 1;
                for (;;) {
                    t->eval();
                    if (t->rsp_valid_o) break;
                    tick(t);
                    ++cycles;
                    if (cycles > 1000) {
                        std::fprintf(stderr, "fib_tb: line %lu: no response\n", line_number);
                        return 2;
                    }
                }
                t->req_valid_i = 0;
                std::printf("%016" PRIx64 " %s %lx\n", static_cast<uint64_t>(t->rsp_ret_o),
                            get_wide(t->rsp_params_o).c_str(), cycles);
                tick(t);
                ok = true;
            }
        }
        if (!ok) {
            std::fprintf(stderr, "fib_tb: line %lu: malformed command: %s", line_number, line);
            return 2;
        }
    }
    top->final();
    return 0;
}
