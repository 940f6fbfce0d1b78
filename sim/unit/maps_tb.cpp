// Drives rtl/sephirot/maps.sv with commands from stdin and prints one result line per command.
//
// Commands, fields in hex; keys and values are byte strings in hex, byte 0 first, shorter ones zero-padded:
//   r                                                  reset                              -> "ok"
//   c MAP TYPE KEY_SIZE VALUE_SIZE MAX_ENTRIES FLAGS   write one map definition          -> "ok"
//   d                                                  cfg_done, wait until idle          -> "ERROR CYCLES"
//   o PORT OP MAP FLAGS SLOT KEY VALUE STALL           a request (PORT 0) or host operation (PORT 1); STALL 1 keeps
//                                                      both value ports busy every other cycle while it runs
//                                                      -> "RET HIT SLOT KEY VALUE CYCLES" (KEY and VALUE from the
//                                                         host response; for requests KEY is "-" and VALUE the 8
//                                                         bytes of rsp_value_o; CYCLES from acceptance to the
//                                                         response pulse)
//   v R RMAP RSLOT ROFF RBYTES W WMAP WSLOT WOFF WBYTES WDATA
//                                                      one cycle of the value ports: a load when R is 1, a store
//                                                      when W is 1 (both in the same cycle when both are 1)
//                                                      -> "RDATA RFAULT WFAULT"
// A malformed line ends the run with exit status 2 and a message naming the line.

#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>

#include "Vmaps.h"
#include "verilated.h"

namespace {

vluint64_t sim_time = 0;

void tick(Vmaps* top) {
    top->clk_i = 0;
    top->eval();
    top->clk_i = 1;
    top->eval();
    ++sim_time;
}

int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

// Writes the bytes of a hex string (byte 0 first) into a wide port, zero-padding; false on bad input.
template <std::size_t N>
bool set_bytes(VlWide<N>& port, const char* hex) {
    for (std::size_t w = 0; w < N; ++w) port[w] = 0;
    if (std::strcmp(hex, "-") == 0) return true;
    std::size_t len = std::strlen(hex);
    if (len % 2 != 0 || len / 2 > N * 4) return false;
    for (std::size_t i = 0; i < len / 2; ++i) {
        int hi = hex_digit(hex[2 * i]), lo = hex_digit(hex[2 * i + 1]);
        if (hi < 0 || lo < 0) return false;
        port[i / 4] |= static_cast<uint32_t>(hi * 16 + lo) << (8 * (i % 4));
    }
    return true;
}

template <std::size_t N>
std::string get_bytes(const VlWide<N>& port) {
    std::string out;
    char buf[3];
    for (std::size_t i = 0; i < N * 4; ++i) {
        std::snprintf(buf, sizeof buf, "%02x", (port[i / 4] >> (8 * (i % 4))) & 0xff);
        out += buf;
    }
    return out;
}

void idle_inputs(Vmaps* top) {
    top->cfg_we_i = 0;
    top->cfg_done_i = 0;
    top->req_valid_i = 0;
    top->host_valid_i = 0;
    top->vrd_en_i = 0;
    top->vwr_en_i = 0;
}

}  // namespace

int main(int argc, char** argv) {
    auto context = std::make_unique<VerilatedContext>();
    context->commandArgs(argc, argv);
    auto top = std::make_unique<Vmaps>(context.get());

    idle_inputs(top.get());
    top->rst_ni = 0;
    tick(top.get());
    tick(top.get());
    top->rst_ni = 1;
    tick(top.get());

    static char line[4096];
    static char key[1024], value[1024];
    unsigned long line_number = 0;
    while (std::fgets(line, sizeof line, stdin) != nullptr) {
        ++line_number;
        if (std::strspn(line, " \t\r\n") == std::strlen(line)) continue;
        Vmaps* t = top.get();
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
            unsigned map = 0, type = 0, ks = 0, vs = 0, max = 0, flags = 0;
            if (std::sscanf(line + 1, "%x %x %x %x %x %x", &map, &type, &ks, &vs, &max, &flags) == 6 && map < 256) {
                t->cfg_we_i = 1;
                t->cfg_map_i = map;
                t->cfg_type_i = type;
                t->cfg_key_size_i = ks;
                t->cfg_value_size_i = vs;
                t->cfg_max_entries_i = max;
                t->cfg_flags_i = flags;
                tick(t);
                t->cfg_we_i = 0;
                std::printf("ok\n");
                ok = true;
            }
        } else if (line[0] == 'd') {
            t->cfg_done_i = 1;
            tick(t);
            t->cfg_done_i = 0;
            unsigned long cycles = 1;
            for (;;) {
                t->eval();
                if (t->req_ready_o) break;
                tick(t);
                ++cycles;
                if (cycles > 1000000) {
                    std::fprintf(stderr, "maps_tb: line %lu: configuration never finished\n", line_number);
                    return 2;
                }
            }
            std::printf("%x %lx\n", static_cast<unsigned>(t->cfg_error_o), cycles);
            ok = true;
        } else if (line[0] == 'o') {
            unsigned port = 0, op = 0, map = 0, stall = 0;
            uint64_t flags = 0, slot = 0;
            if (std::sscanf(line + 1, "%x %x %x %" SCNx64 " %" SCNx64 " %1023s %1023s %x", &port, &op, &map, &flags,
                            &slot, key, value, &stall) == 8 &&
                port < 2 && op < 4 && map < 256 && stall < 2) {
                bool host = port == 1;
                if (host) {
                    ok = set_bytes(t->host_key_i, key) && set_bytes(t->host_value_i, value);
                    t->host_op_i = op;
                    t->host_map_i = map;
                    t->host_flags_i = flags;
                    t->host_slot_i = static_cast<uint32_t>(slot & 0xfffffff);
                    t->host_valid_i = 1;
                } else {
                    ok = set_bytes(t->req_key_i, key) && set_bytes(t->req_value_i, value);
                    t->req_op_i = op;
                    t->req_map_i = map;
                    t->req_flags_i = flags;
                    t->req_valid_i = 1;
                }
                if (ok) {
                    // offer until accepted
                    for (unsigned long wait = 0;; ++wait) {
                        t->eval();
                        bool ready = host ? t->host_ready_o : t->req_ready_o;
                        tick(t);
                        if (ready) break;
                        if (wait > 1000000) {
                            std::fprintf(stderr, "maps_tb: line %lu: request never accepted\n", line_number);
                            return 2;
                        }
                    }
                    t->req_valid_i = 0;
                    t->host_valid_i = 0;
                    unsigned long cycles = 0;
                    for (;;) {
                        if (stall) {
                            // on every other cycle a harmless one-byte read of map 0, slot 0, and a store to a map
                            // that does not exist (it faults, writing nothing, but occupies the write port)
                            bool busy = (cycles % 2) == 0;
                            t->vrd_en_i = busy;
                            t->vrd_map_i = 0;
                            t->vrd_slot_i = 0;
                            t->vrd_off_i = 0;
                            t->vrd_bytes_i = 1;
                            t->vwr_en_i = busy;
                            t->vwr_map_i = 255;
                            t->vwr_slot_i = 0;
                            t->vwr_off_i = 0;
                            t->vwr_bytes_i = 1;
                            t->vwr_wdata_i = 0;
                        }
                        t->eval();
                        bool done = host ? t->host_rsp_valid_o : t->rsp_valid_o;
                        if (done) break;
                        tick(t);
                        ++cycles;
                        if (cycles > 1000000) {
                            std::fprintf(stderr, "maps_tb: line %lu: no response\n", line_number);
                            return 2;
                        }
                    }
                    if (host) {
                        std::printf("%" PRIx64 " %x 0 %s %s %lx\n", static_cast<uint64_t>(t->host_rsp_ret_o),
                                    static_cast<unsigned>(t->host_rsp_hit_o), get_bytes(t->host_rsp_key_o).c_str(),
                                    get_bytes(t->host_rsp_value_o).c_str(), cycles);
                    } else {
                        std::string word;
                        char buf[3];
                        for (int i = 0; i < 8; ++i) {
                            std::snprintf(buf, sizeof buf, "%02x",
                                          static_cast<unsigned>((t->rsp_value_o >> (8 * i)) & 0xff));
                            word += buf;
                        }
                        std::printf("%" PRIx64 " %x %x - %s %lx\n", static_cast<uint64_t>(t->rsp_ret_o),
                                    static_cast<unsigned>(t->rsp_hit_o), static_cast<unsigned>(t->rsp_slot_o),
                                    word.c_str(), cycles);
                    }
                    t->vrd_en_i = 0;
                    t->vwr_en_i = 0;
                    tick(t);
                }
            }
        } else if (line[0] == 'v') {
            unsigned re = 0, rmap = 0, roff = 0, rbytes = 0, we = 0, wmap = 0, woff = 0, wbytes = 0;
            uint64_t rslot = 0, wslot = 0, wdata = 0;
            if (std::sscanf(line + 1, "%x %x %" SCNx64 " %x %x %x %x %" SCNx64 " %x %x %" SCNx64, &re, &rmap, &rslot,
                            &roff, &rbytes, &we, &wmap, &wslot, &woff, &wbytes, &wdata) == 11 &&
                re < 2 && rmap < 256 && roff < 4096 && rbytes < 16 && we < 2 && wmap < 256 && woff < 4096 &&
                wbytes < 16) {
                t->vrd_en_i = re;
                t->vrd_map_i = rmap;
                t->vrd_slot_i = static_cast<uint32_t>(rslot & 0xfffffff);
                t->vrd_off_i = roff;
                t->vrd_bytes_i = rbytes;
                t->vwr_en_i = we;
                t->vwr_map_i = wmap;
                t->vwr_slot_i = static_cast<uint32_t>(wslot & 0xfffffff);
                t->vwr_off_i = woff;
                t->vwr_bytes_i = wbytes;
                t->vwr_wdata_i = wdata;
                tick(t);
                t->vrd_en_i = 0;
                t->vwr_en_i = 0;
                t->eval();
                std::printf("%" PRIx64 " %x %x\n", static_cast<uint64_t>(t->vrd_rdata_o),
                            static_cast<unsigned>(t->vrd_fault_o), static_cast<unsigned>(t->vwr_fault_o));
                ok = true;
            }
        }
        if (!ok) {
            std::fprintf(stderr, "maps_tb: line %lu: malformed command: %s", line_number, line);
            return 2;
        }
    }
    top->final();
    return 0;
}
