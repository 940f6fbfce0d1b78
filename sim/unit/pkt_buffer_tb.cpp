// Drives rtl/sephirot/pkt_buffer.sv (LANES 4, FRAME_BYTES 32, PAGE_BYTES 4096, HEADROOM 256) with commands from
// stdin, one per line, hex fields:
//   c                               one cycle with clear_i
//   f gap keep last data            in_valid_i low for gap cycles, then one frame (in_keep_i, in_last_i, 256-bit
//                                   in_data_i, byte 0 lowest) held until accepted; prints nothing
//   s                               prints "s len complete overflow in_ready emit_busy" (no clock)
//   x rd_en {addr bytes}x4 wr_en {addr bytes data}x4
//                                   one cycle of lane reads and writes (enables one bit per lane, lane 0 in bit 0);
//                                   after the clock edge prints "r data0 data1 data2 data3" (rd_data_o)
//   e lo hi seed                    one cycle with emit_i, then clocks with out_ready_i from a xorshift generator
//                                   seeded with seed (0: always ready; else ready three cycles in four) until
//                                   emit_busy_o falls; prints "b keep last data" per accepted beat, then
//                                   "e cycles" (clock edges from the emit cycle's to the last handshake's)
// A malformed line ends the run with exit status 2, a hung handshake with status 3, each with a message.

#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "Vpkt_buffer.h"
#include "verilated.h"

namespace {

constexpr int kLanes = 4;
constexpr int kFrameWords = 8;  // 32-bit words of a 256-bit frame
constexpr unsigned long kPatience = 100000;

bool parse_wide(const std::string& text, uint32_t* words, int count) {
    size_t len = text.size();
    if (len == 0 || len > static_cast<size_t>(count) * 8) {
        return false;
    }
    for (int i = 0; i < count; ++i) {
        words[i] = 0;
    }
    for (size_t i = 0; i < len; ++i) {
        char c = text[len - 1 - i];
        unsigned digit;
        if (c >= '0' && c <= '9') {
            digit = c - '0';
        } else if (c >= 'a' && c <= 'f') {
            digit = c - 'a' + 10;
        } else if (c >= 'A' && c <= 'F') {
            digit = c - 'A' + 10;
        } else {
            return false;
        }
        words[i / 8] |= digit << (4 * (i % 8));
    }
    return true;
}

bool parse_u64(const std::string& text, uint64_t* value) {
    uint32_t words[2];
    if (!parse_wide(text, words, 2)) {
        return false;
    }
    *value = words[0] | (static_cast<uint64_t>(words[1]) << 32);
    return true;
}

class Bench {
  public:
    explicit Bench(VerilatedContext* context) : top_(std::make_unique<Vpkt_buffer>(context)) {
        idle();
        top_->clk_i = 0;
        top_->rst_ni = 0;
        top_->eval();
        top_->rst_ni = 1;
        top_->eval();
    }

    ~Bench() { top_->final(); }

    Vpkt_buffer* top() { return top_.get(); }

    // Every input but the clock and reset to its idle value.
    void idle() {
        top_->clear_i = 0;
        top_->in_valid_i = 0;
        top_->in_last_i = 0;
        top_->in_keep_i = 0;
        for (int i = 0; i < kFrameWords; ++i) {
            top_->in_data_i[i] = 0;
            top_->wr_data_i[i] = 0;
        }
        top_->rd_en_i = 0;
        top_->rd_addr_i = 0;
        top_->rd_bytes_i = 0;
        top_->wr_en_i = 0;
        top_->wr_addr_i = 0;
        top_->wr_bytes_i = 0;
        top_->emit_i = 0;
        top_->emit_lo_i = 0;
        top_->emit_hi_i = 0;
        top_->out_ready_i = 0;
    }

    void tick() {
        top_->clk_i = 1;
        top_->eval();
        top_->clk_i = 0;
        top_->eval();
    }

  private:
    std::unique_ptr<Vpkt_buffer> top_;
};

uint64_t lane_word(const VlWide<kFrameWords>& wide, int lane) {
    return wide[2 * lane] | (static_cast<uint64_t>(wide[2 * lane + 1]) << 32);
}

}  // namespace

int main(int argc, char** argv) {
    auto context = std::make_unique<VerilatedContext>();
    context->commandArgs(argc, argv);
    Bench bench(context.get());
    Vpkt_buffer* top = bench.top();

    char buffer[4096];
    unsigned long line_number = 0;
    auto malformed = [&](const char* expected) {
        std::fprintf(stderr, "pkt_buffer_tb: line %lu: expected \"%s\" in hex\n", line_number, expected);
        return 2;
    };
    while (std::fgets(buffer, sizeof buffer, stdin) != nullptr) {
        ++line_number;
        std::vector<std::string> f;
        for (char* token = std::strtok(buffer, " \t\r\n"); token != nullptr; token = std::strtok(nullptr, " \t\r\n")) {
            f.emplace_back(token);
        }
        if (f.empty()) {
            continue;
        }
        bench.idle();
        const std::string& command = f[0];
        if (command == "c" && f.size() == 1) {
            top->clear_i = 1;
            top->eval();
            bench.tick();
        } else if (command == "f") {
            uint64_t gap = 0, keep = 0, last = 0;
            uint32_t data[kFrameWords];
            if (f.size() != 5 || !parse_u64(f[1], &gap) || !parse_u64(f[2], &keep) || keep > 0xffffffffu ||
                !parse_u64(f[3], &last) || last > 1 || !parse_wide(f[4], data, kFrameWords)) {
                return malformed("f gap keep last data");
            }
            for (uint64_t i = 0; i < gap; ++i) {
                top->eval();
                bench.tick();
            }
            top->in_valid_i = 1;
            top->in_keep_i = static_cast<uint32_t>(keep);
            top->in_last_i = last;
            for (int i = 0; i < kFrameWords; ++i) {
                top->in_data_i[i] = data[i];
            }
            top->eval();
            unsigned long waited = 0;
            while (!top->in_ready_o) {
                bench.tick();
                if (++waited > kPatience) {
                    std::fprintf(stderr, "pkt_buffer_tb: line %lu: in_ready_o stays low\n", line_number);
                    return 3;
                }
            }
            bench.tick();
        } else if (command == "s" && f.size() == 1) {
            top->eval();
            std::printf("s %x %x %x %x %x\n", static_cast<unsigned>(top->len_o), static_cast<unsigned>(top->complete_o),
                        static_cast<unsigned>(top->overflow_o), static_cast<unsigned>(top->in_ready_o),
                        static_cast<unsigned>(top->emit_busy_o));
        } else if (command == "x") {
            bool ok = f.size() == 3 + 2 * kLanes + 3 * kLanes;
            uint64_t rd_en = 0, wr_en = 0, rd_addr = 0, rd_bytes = 0, wr_addr = 0, wr_bytes = 0;
            uint32_t wr_data[2 * kLanes] = {0};
            ok = ok && parse_u64(f[1], &rd_en) && rd_en < 16;
            for (int lane = 0; ok && lane < kLanes; ++lane) {
                uint64_t addr = 0, bytes = 0;
                ok = parse_u64(f[2 + 2 * lane], &addr) && addr < 4096 && parse_u64(f[3 + 2 * lane], &bytes) &&
                     bytes < 16;
                rd_addr |= addr << (12 * lane);
                rd_bytes |= bytes << (4 * lane);
            }
            int base = 2 + 2 * kLanes;
            ok = ok && parse_u64(f[base], &wr_en) && wr_en < 16;
            for (int lane = 0; ok && lane < kLanes; ++lane) {
                uint64_t addr = 0, bytes = 0, data = 0;
                ok = parse_u64(f[base + 1 + 3 * lane], &addr) && addr < 4096 &&
                     parse_u64(f[base + 2 + 3 * lane], &bytes) && bytes < 16 &&
                     parse_u64(f[base + 3 + 3 * lane], &data);
                wr_addr |= addr << (12 * lane);
                wr_bytes |= bytes << (4 * lane);
                wr_data[2 * lane] = static_cast<uint32_t>(data);
                wr_data[2 * lane + 1] = static_cast<uint32_t>(data >> 32);
            }
            if (!ok) {
                return malformed("x rd_en {addr bytes}x4 wr_en {addr bytes data}x4");
            }
            top->rd_en_i = rd_en;
            top->rd_addr_i = rd_addr;
            top->rd_bytes_i = rd_bytes;
            top->wr_en_i = wr_en;
            top->wr_addr_i = wr_addr;
            top->wr_bytes_i = wr_bytes;
            for (int i = 0; i < 2 * kLanes; ++i) {
                top->wr_data_i[i] = wr_data[i];
            }
            top->eval();
            bench.tick();
            std::printf("r");
            for (int lane = 0; lane < kLanes; ++lane) {
                std::printf(" %" PRIx64, lane_word(top->rd_data_o, lane));
            }
            std::printf("\n");
        } else if (command == "e") {
            uint64_t lo = 0, hi = 0, seed = 0;
            if (f.size() != 4 || !parse_u64(f[1], &lo) || lo > 4095 || !parse_u64(f[2], &hi) || hi > 4095 ||
                !parse_u64(f[3], &seed)) {
                return malformed("e lo hi seed");
            }
            top->emit_i = 1;
            top->emit_lo_i = lo;
            top->emit_hi_i = hi;
            top->eval();
            bench.tick();
            bench.idle();
            unsigned long cycles = 1, last_handshake = 0;
            while (true) {
                if (seed != 0) {
                    seed ^= seed >> 12;
                    seed ^= seed << 25;
                    seed ^= seed >> 27;
                }
                top->out_ready_i = seed == 0 || ((seed * 0x2545f4914f6cdd1dull) >> 62) != 0;
                top->eval();
                if (!top->emit_busy_o) {
                    break;
                }
                if (top->out_valid_o && top->out_ready_i) {
                    std::printf("b %x %x ", static_cast<unsigned>(top->out_keep_o),
                                static_cast<unsigned>(top->out_last_o));
                    for (int i = kFrameWords - 1; i >= 0; --i) {
                        std::printf("%08x", top->out_data_o[i]);
                    }
                    std::printf("\n");
                    last_handshake = cycles + 1;
                }
                bench.tick();
                if (++cycles > kPatience) {
                    std::fprintf(stderr, "pkt_buffer_tb: line %lu: emission does not finish\n", line_number);
                    return 3;
                }
            }
            std::printf("e %lx\n", last_handshake);
        } else {
            return malformed("c | f gap keep last data | s | x ... | e lo hi seed");
        }
    }
    return 0;
}
