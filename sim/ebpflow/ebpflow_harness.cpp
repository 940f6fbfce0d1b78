// Drives rtl/ebpflow/ebpflow_conformance.sv (one eBPFlow engine, its instruction memory, the unwind helper unit and
// its coprocessor): loads programs and map tables, streams packets in, reports results and reads the data memory.
//
// Commands on stdin, one per line, numbers in hex; one answer line each on stdout:
//   imem SLOT VALUE        write instruction slot SLOT (the 64-bit little-endian eBPF slot)        -> ok
//   len SLOTS              the program's length in slots (a slot at or past it faults)               -> ok
//   clear                  zero every data-memory word and the header, through the host port         -> ok
//   poke WORD VALUE        write data-memory word WORD (byte offset 8 * WORD)                         -> ok
//   run GAP USER BYTES     stream one packet: USER the first beat's tuser (the header's bytes 0..15 as
//                          a 128-bit number, 32 digits), BYTES the frame (two digits a byte, - for
//                          none), GAP idle cycles between two beats; then run until the engine is idle
//                          -> result R0 FAULT CYCLES DONE LAST OUT
//                          R0, FAULT and CYCLES as the engine reports them; DONE the cycle of its
//                          result and LAST the cycle the last input beat was taken, both counted from
//                          the first beat's cycle (0); OUT the frame as it left (- for none), or
//                          "timeout" when the engine is not idle within MAX cycles (then the model is
//                          unusable)
//   dump                   every data-memory word through the host port -> mem BYTES
//   map IDX TYPE KSZ VSZ MAX  write the coprocessor's map-table entry IDX (type, key size, value size, max entries;
//                          maps are laid out in the order written, from the model's start) -> ok, or error when the
//                          coprocessor refuses it
//   quit                   end
// Anything else answers "error <why>".

#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "Vebpflow_conformance.h"
#include "verilated.h"

namespace {

constexpr uint64_t kMaxCycles = 20000000;
constexpr unsigned kMemWords = 1024;  // 2**AW / 8 at the default AW = 13

class Bench {
  public:
    explicit Bench(VerilatedContext* context) : top_(std::make_unique<Vebpflow_conformance>(context)) {
        top_->clk_i = 0;
        top_->rst_ni = 1;
        top_->m_axis_tready_i = 1;
        top_->eval();
        top_->rst_ni = 0;  // a falling edge: the asynchronous resets act
        top_->eval();
        tick();
        top_->rst_ni = 1;
        top_->eval();
        // The coprocessor clears its value memory after reset.
        while (top_->coproc_busy_o) tick();
    }

    bool map(unsigned idx, unsigned type, unsigned ksz, unsigned vsz, uint32_t max) {
        top_->mt_we_i = 1;
        top_->mt_idx_i = idx;
        top_->mt_type_i = type;
        top_->mt_key_size_i = ksz;
        top_->mt_value_size_i = vsz;
        top_->mt_max_entries_i = max;
        top_->eval();
        tick();
        top_->mt_we_i = 0;
        top_->eval();
        return !top_->mt_err_o;
    }

    ~Bench() { top_->final(); }

    void tick() {
        top_->clk_i = 1;
        top_->eval();
        top_->clk_i = 0;
        top_->eval();
    }

    void imem(uint32_t slot, uint64_t value) {
        top_->imem_we_i = 1;
        top_->imem_addr_i = slot;
        top_->imem_data_i = value;
        tick();
        top_->imem_we_i = 0;
        top_->eval();
    }

    void set_len(uint32_t slots) { top_->prog_len_i = slots; }

    void poke(uint32_t word, uint64_t value) {
        top_->host_req_i = 1;
        top_->host_we_i = 1;
        top_->host_addr_i = word;
        top_->host_wdata_i = value;
        tick();
        top_->host_req_i = 0;
        top_->host_we_i = 0;
        top_->eval();
    }

    uint64_t peek(uint32_t word) {
        top_->host_req_i = 1;
        top_->host_we_i = 0;
        top_->host_addr_i = word;
        tick();
        top_->host_req_i = 0;
        top_->eval();
        return top_->host_rdata_o;
    }

    // Streams one packet and runs until the engine is idle again. Returns false on a timeout.
    bool run(unsigned gap, const uint32_t user[4], const std::vector<uint8_t>& bytes, std::string* answer) {
        const size_t beats = bytes.empty() ? 1 : (bytes.size() + 7) / 8;
        size_t sent = 0;
        unsigned wait = 0;
        uint64_t total = 0;  // cycles since the command began
        uint64_t first = 0;  // the cycle the first beat was taken
        uint64_t done_at = 0;
        uint64_t last_at = 0;
        bool started = false;
        bool done = false;
        bool out_last = false;
        uint64_t r0 = 0;
        unsigned fault = 0;
        uint32_t cycles = 0;
        std::vector<uint8_t> out;
        for (unsigned w = 0; w < 4; ++w) {
            top_->s_axis_tuser_i[w] = user[w];
        }
        while (true) {
            const bool offer = sent < beats && wait == 0;
            top_->s_axis_tvalid_i = offer;
            if (offer) {
                uint64_t word = 0;
                for (unsigned b = 0; b < 8; ++b) {
                    const size_t i = sent * 8 + b;
                    if (i < bytes.size()) {
                        word |= static_cast<uint64_t>(bytes[i]) << (8 * b);
                    }
                }
                const size_t left = bytes.size() > sent * 8 ? bytes.size() - sent * 8 : 0;
                top_->s_axis_tdata_i = word;
                top_->s_axis_tkeep_i = left >= 8 ? 0xff : static_cast<uint8_t>((1u << left) - 1);
                top_->s_axis_tlast_i = sent + 1 == beats;
            }
            top_->eval();
            const bool taken = offer && top_->s_axis_tready_o;
            if (taken && !started) {
                started = true;
                first = total;
            }
            if (taken && sent + 1 == beats) {
                last_at = total - first;
            }
            if (started && top_->result_valid_o && !done) {
                done = true;
                done_at = total - first;
                r0 = top_->result_r0_o;
                fault = top_->result_fault_o;
                cycles = top_->result_cycles_o;
            }
            if (top_->m_axis_tvalid_o && top_->m_axis_tready_i) {
                const uint64_t word = top_->m_axis_tdata_o;
                const unsigned keep = top_->m_axis_tkeep_o;
                for (unsigned b = 0; b < 8; ++b) {
                    if (keep & (1u << b)) {
                        out.push_back(static_cast<uint8_t>(word >> (8 * b)));
                    }
                }
                out_last = out_last || top_->m_axis_tlast_o;
            }
            tick();
            ++total;
            if (taken) {
                ++sent;
                wait = gap;
            } else if (wait > 0) {
                --wait;
            }
            if (done && out_last && top_->idle_o) {
                break;
            }
            if (total > kMaxCycles) {
                *answer = "timeout";
                return false;
            }
        }
        top_->s_axis_tvalid_i = 0;
        top_->eval();
        std::ostringstream line;
        line << std::hex << "result " << r0 << ' ' << fault << ' ' << cycles << ' ' << done_at << ' ' << last_at
             << ' ';
        if (out.empty()) {
            line << '-';
        } else {
            char buf[3];
            for (uint8_t b : out) {
                std::snprintf(buf, sizeof buf, "%02x", b);
                line << buf;
            }
        }
        *answer = line.str();
        return true;
    }

  private:
    std::unique_ptr<Vebpflow_conformance> top_;
};

bool hex_bytes(const std::string& text, std::vector<uint8_t>* out) {
    out->clear();
    if (text == "-") {
        return true;
    }
    if (text.size() % 2 != 0) {
        return false;
    }
    for (size_t i = 0; i < text.size(); i += 2) {
        char* end = nullptr;
        const std::string pair = text.substr(i, 2);
        const unsigned long v = std::strtoul(pair.c_str(), &end, 16);
        if (end == nullptr || *end != '\0') {
            return false;
        }
        out->push_back(static_cast<uint8_t>(v));
    }
    return true;
}

bool hex_u64(const std::string& text, uint64_t* out) {
    if (text.empty() || text.size() > 16) {
        return false;
    }
    char* end = nullptr;
    *out = std::strtoull(text.c_str(), &end, 16);
    return end != nullptr && *end == '\0';
}

// A 128-bit hex number as four 32-bit words, least significant first.
bool hex_u128(const std::string& text, uint32_t out[4]) {
    if (text.empty() || text.size() > 32) {
        return false;
    }
    const std::string padded = std::string(32 - text.size(), '0') + text;
    for (unsigned w = 0; w < 4; ++w) {
        uint64_t v = 0;
        if (!hex_u64(padded.substr(32 - 8 * (w + 1), 8), &v)) {
            return false;
        }
        out[w] = static_cast<uint32_t>(v);
    }
    return true;
}

}  // namespace

int main(int argc, char** argv) {
    auto context = std::make_unique<VerilatedContext>();
    context->commandArgs(argc, argv);
    Bench bench(context.get());
    std::string line;
    while (std::getline(std::cin, line)) {
        std::istringstream in(line);
        std::string cmd;
        in >> cmd;
        std::string answer = "ok";
        if (cmd == "quit") {
            break;
        } else if (cmd == "imem") {
            std::string a, v;
            uint64_t slot = 0, value = 0;
            in >> a >> v;
            if (!hex_u64(a, &slot) || !hex_u64(v, &value) || slot >= 4096) {
                answer = "error imem: SLOT VALUE";
            } else {
                bench.imem(static_cast<uint32_t>(slot), value);
            }
        } else if (cmd == "len") {
            std::string a;
            uint64_t n = 0;
            in >> a;
            if (!hex_u64(a, &n) || n > 4096) {
                answer = "error len: SLOTS, at most 1000 (hex)";
            } else {
                bench.set_len(static_cast<uint32_t>(n));
            }
        } else if (cmd == "clear") {
            for (unsigned w = 0; w < kMemWords; ++w) {
                bench.poke(w, 0);
            }
        } else if (cmd == "poke") {
            std::string a, v;
            uint64_t word = 0, value = 0;
            in >> a >> v;
            if (!hex_u64(a, &word) || !hex_u64(v, &value) || word >= kMemWords) {
                answer = "error poke: WORD VALUE";
            } else {
                bench.poke(static_cast<uint32_t>(word), value);
            }
        } else if (cmd == "run") {
            std::string g, u, b;
            uint64_t gap = 0;
            uint32_t user[4] = {0, 0, 0, 0};
            std::vector<uint8_t> bytes;
            in >> g >> u >> b;
            if (!hex_u64(g, &gap) || !hex_u128(u, user) || !hex_bytes(b, &bytes) || bytes.size() > 4064) {
                answer = "error run: GAP USER BYTES (at most 4064 bytes)";
            } else if (!bench.run(static_cast<unsigned>(gap), user, bytes, &answer)) {
                std::cout << answer << std::endl;
                return 1;
            }
        } else if (cmd == "map") {
            std::string f[5];
            uint64_t v[5] = {0, 0, 0, 0, 0};
            in >> f[0] >> f[1] >> f[2] >> f[3] >> f[4];
            bool ok = true;
            for (int i = 0; i < 5; ++i) ok = ok && hex_u64(f[i], &v[i]);
            if (!ok || v[0] >= 8 || v[1] > 0xff || v[2] > 0xff || v[3] > 0xffff || v[4] > 0xffffffffULL) {
                answer = "error map: IDX TYPE KSZ VSZ MAX";
            } else if (!bench.map(static_cast<unsigned>(v[0]), static_cast<unsigned>(v[1]),
                                  static_cast<unsigned>(v[2]), static_cast<unsigned>(v[3]),
                                  static_cast<uint32_t>(v[4]))) {
                answer = "error map: the coprocessor refused it";
            }
        } else if (cmd == "dump") {
            std::ostringstream out;
            out << "mem ";
            char buf[3];
            for (unsigned w = 0; w < kMemWords; ++w) {
                const uint64_t v = bench.peek(w);
                for (unsigned b = 0; b < 8; ++b) {
                    std::snprintf(buf, sizeof buf, "%02x", static_cast<unsigned>((v >> (8 * b)) & 0xff));
                    out << buf;
                }
            }
            answer = out.str();
        } else {
            answer = "error unknown command " + cmd;
        }
        std::cout << answer << std::endl;
    }
    return 0;
}
