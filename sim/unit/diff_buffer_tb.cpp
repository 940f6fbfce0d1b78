// Drives rtl/sephirot/diff_buffer.sv (LANES 4, FRAME_BYTES 32) one clock cycle per stdin line.
//
// Input lines are hex fields:
//   clear wr_en {wr_addr wr_bytes wr_data} x4 {ov_addr ov_bytes ov_base} x4 fr_addr fr_base
// (wr_en one bit per lane, lane 0 in bit 0; fr_base 256 bits, byte 0 lowest). For each line the testbench applies
// the inputs, evaluates, prints "overflow ov_data0 ov_data1 ov_data2 ov_data3 fr_data" in hex (the combinational
// overlays of the state before this cycle's writes), then clocks one rising edge. A malformed line ends the run
// with exit status 2 and a message naming the line.

#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "Vdiff_buffer.h"
#include "verilated.h"

namespace {

constexpr int kLanes = 4;
constexpr int kFrameWords = 8;  // 32-bit words of a 256-bit frame

// Parses a hex string of up to 4 * words digits into little-endian 32-bit words.
bool parse_wide(const char* text, uint32_t* words, int count) {
    size_t len = std::strlen(text);
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

bool parse_u64(const char* text, uint64_t* value) {
    uint32_t words[2];
    if (!parse_wide(text, words, 2)) {
        return false;
    }
    *value = words[0] | (static_cast<uint64_t>(words[1]) << 32);
    return true;
}

void print_wide(const uint32_t* words, int count) {
    for (int i = count - 1; i >= 0; --i) {
        std::printf("%08x", words[i]);
    }
}

void tick(Vdiff_buffer* top) {
    top->clk_i = 1;
    top->eval();
    top->clk_i = 0;
    top->eval();
}

}  // namespace

int main(int argc, char** argv) {
    auto context = std::make_unique<VerilatedContext>();
    context->commandArgs(argc, argv);
    auto top = std::make_unique<Vdiff_buffer>(context.get());

    top->clk_i = 0;
    top->rst_ni = 0;
    top->clear_i = 0;
    top->eval();
    top->rst_ni = 1;
    top->eval();

    char buffer[4096];
    unsigned long line_number = 0;
    while (std::fgets(buffer, sizeof buffer, stdin) != nullptr) {
        ++line_number;
        std::vector<std::string> fields;
        for (char* token = std::strtok(buffer, " \t\r\n"); token != nullptr; token = std::strtok(nullptr, " \t\r\n")) {
            fields.emplace_back(token);
        }
        if (fields.empty()) {
            continue;
        }
        bool ok = fields.size() == 2 + 3 * kLanes + 3 * kLanes + 2;
        uint64_t clear = 0, wr_en = 0, wr_addr = 0, wr_bytes = 0, ov_addr = 0, ov_bytes = 0, fr_addr = 0;
        uint32_t wr_data[2 * kLanes] = {0}, ov_base[2 * kLanes] = {0}, fr_base[kFrameWords] = {0};
        if (ok) {
            ok = parse_u64(fields[0].c_str(), &clear) && clear <= 1 && parse_u64(fields[1].c_str(), &wr_en) &&
                 wr_en < (1u << kLanes);
        }
        for (int lane = 0; ok && lane < kLanes; ++lane) {
            uint64_t addr = 0, bytes = 0, data = 0;
            ok = parse_u64(fields[2 + 3 * lane].c_str(), &addr) && addr < 4096 &&
                 parse_u64(fields[3 + 3 * lane].c_str(), &bytes) && bytes < 16 &&
                 parse_u64(fields[4 + 3 * lane].c_str(), &data);
            wr_addr |= addr << (12 * lane);
            wr_bytes |= bytes << (4 * lane);
            wr_data[2 * lane] = static_cast<uint32_t>(data);
            wr_data[2 * lane + 1] = static_cast<uint32_t>(data >> 32);
        }
        for (int lane = 0; ok && lane < kLanes; ++lane) {
            int base = 2 + 3 * kLanes;
            uint64_t addr = 0, bytes = 0, data = 0;
            ok = parse_u64(fields[base + 3 * lane].c_str(), &addr) && addr < 4096 &&
                 parse_u64(fields[base + 1 + 3 * lane].c_str(), &bytes) && bytes < 16 &&
                 parse_u64(fields[base + 2 + 3 * lane].c_str(), &data);
            ov_addr |= addr << (12 * lane);
            ov_bytes |= bytes << (4 * lane);
            ov_base[2 * lane] = static_cast<uint32_t>(data);
            ov_base[2 * lane + 1] = static_cast<uint32_t>(data >> 32);
        }
        if (ok) {
            ok = parse_u64(fields[2 + 6 * kLanes].c_str(), &fr_addr) && fr_addr < 4096 &&
                 parse_wide(fields[3 + 6 * kLanes].c_str(), fr_base, kFrameWords);
        }
        if (!ok) {
            std::fprintf(stderr,
                         "diff_buffer_tb: line %lu: expected \"clear wr_en {addr bytes data}x4 {addr bytes base}x4 "
                         "fr_addr fr_base\" in hex\n",
                         line_number);
            return 2;
        }

        top->clear_i = clear;
        top->wr_en_i = wr_en;
        top->wr_addr_i = wr_addr;
        top->wr_bytes_i = wr_bytes;
        top->ov_addr_i = ov_addr;
        top->ov_bytes_i = ov_bytes;
        top->fr_addr_i = fr_addr;
        for (int i = 0; i < 2 * kLanes; ++i) {
            top->wr_data_i[i] = wr_data[i];
            top->ov_base_i[i] = ov_base[i];
        }
        for (int i = 0; i < kFrameWords; ++i) {
            top->fr_base_i[i] = fr_base[i];
        }
        top->eval();

        uint32_t words[kFrameWords];
        std::printf("%x", static_cast<unsigned>(top->overflow_o));
        for (int lane = 0; lane < kLanes; ++lane) {
            uint64_t value = top->ov_data_o[2 * lane] | (static_cast<uint64_t>(top->ov_data_o[2 * lane + 1]) << 32);
            std::printf(" %" PRIx64, value);
        }
        for (int i = 0; i < kFrameWords; ++i) {
            words[i] = top->fr_data_o[i];
        }
        std::printf(" ");
        print_wide(words, kFrameWords);
        std::printf("\n");
        tick(top.get());
    }
    top->final();
    return 0;
}
