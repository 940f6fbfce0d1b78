// Streams packets through a generated eHDL pipeline (top `ehdl_pipe`) over its AXI4-Stream ports.
//
// stdin: a first line "cfg GAP STALL SEED [REPORT]" (percent of cycles with no input beat offered, percent of cycles
// with m_axis_tready low, a seed for those choices, and REPORT 1 for the longer last line below), then one packet per
// line, "IFINDEX RXQ BYTES [TIME]" in hex (the
// ingress_ifindex and rx_queue_index go with the length on s_axis_tuser_i of the first beat; TIME, when given, is the
// packet's timestamp in ns on tuser bits 143:80 with the valid bit 144, which bpf_ktime_get_ns then reads). Lines
// "w MAP ADDR DATA MASK" (hex) are host-port writes done before the first packet, and "m MAP BYTES [BASE]" asks for a
// dump of BYTES bytes from host address BASE (default 0) of a map after the last packet, printed as "map MAP BYTES".
// stdout: one line per packet
// leaving the pipeline, "pkt VERDICT DEST BYTES" (verdict from m_axis_tuser_o, the redirect from m_axis_tdest_o,
// the bytes, all in hex), in output order,
// then "cycles C latency L beats B": C clock cycles from the first beat accepted to the last beat out, L cycles from
// the first beat accepted to the first beat out; with REPORT 1 the line goes on with " stalls S": S cycles in which a
// beat was offered, the output was not back-pressured and s_axis_tready was low, i.e. the pipeline's stall checks
// (map hazards) held the input, then " flushes F": F cycles in which flush_o was high (a flush evaluation block
// dropped the packets younger than a writer, to be fed again).
// A line "vcd FIRST END UNIT HALF START FILE" (numbers in hex; FILE is the rest of the line) records a VCD waveform of
// packets FIRST to END-1 (counted from 0 in input order) into FILE, in a model built with `--trace`: from the cycle
// packet FIRST's first beat is offered to the cycle packet END-1's last beat leaves, time in UNITs (1ps or 1fs) from
// START, HALF of them per half clock period (the clock falls at START, rises HALF later, ...); stdout then gets
// "vcd T" (decimal) before the cycles line, T the waveform's last time.
// Exit status 2 on malformed input, 3 when the pipeline stops producing packets, 4 when tuser changes inside a packet.

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "Vehdl_pipe.h"
#include "verilated.h"
#if VM_TRACE
#include "verilated_vcd_c.h"
#endif

namespace {

int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

bool read_line(std::string& line) {
    line.clear();
    int c;
    while ((c = std::getchar()) != EOF && c != '\n') line.push_back(static_cast<char>(c));
    return c != EOF || !line.empty();
}

uint64_t rng_state = 1;
unsigned percent() {
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return static_cast<unsigned>((rng_state * 0x2545f4914f6cdd1dULL) >> 33) % 100;
}

}  // namespace

int main(int argc, char** argv) {
    auto context = std::make_unique<VerilatedContext>();
    context->commandArgs(argc, argv);
#if VM_TRACE
    context->traceEverOn(true);
#endif
    auto top = std::make_unique<Vehdl_pipe>(context.get());
    const size_t words = sizeof(top->s_axis_tdata_i) / sizeof(EData);
    const size_t frame_bytes = words * 4;
    const size_t user_words = sizeof(top->s_axis_tuser_i) / sizeof(EData);

    std::string line;
    unsigned gap = 0, stall = 0;
    unsigned long long seed = 1;
    unsigned report = 0;
    if (!read_line(line) || std::sscanf(line.c_str(), "cfg %u %u %llu %u", &gap, &stall, &seed, &report) < 3) {
        std::fprintf(stderr, "ehdl_pipe_tb: line 1: expected \"cfg GAP STALL SEED [REPORT]\"\n");
        return 2;
    }
    rng_state = seed | 1;
    struct Packet {
        uint32_t ifindex, rxq;
        std::vector<uint8_t> bytes;
        bool timed;
        uint64_t time;
    };
    std::deque<Packet> packets;
    struct HostWrite {
        unsigned map;
        uint32_t addr;
        uint64_t data;
        unsigned mask;
    };
    std::vector<HostWrite> host_writes;
    struct Dump {
        unsigned map;
        uint32_t bytes, base;
    };
    std::vector<Dump> dumps;
    struct Waves {
        bool wanted = false;
        unsigned long long first = 0, end = 0, half = 0, start = 0;
        std::string unit, file;
    } waves;
    unsigned long line_number = 1;
    while (read_line(line)) {
        ++line_number;
        if (line.empty()) continue;
        if (line.compare(0, 4, "vcd ") == 0) {
            char unit[8] = {0};
            int file_at = -1;
            if (std::sscanf(line.c_str(), "vcd %llx %llx %7s %llx %llx %n", &waves.first, &waves.end, unit, &waves.half,
                            &waves.start, &file_at) != 5 ||
                file_at < 0 || static_cast<size_t>(file_at) >= line.size() || waves.first >= waves.end ||
                waves.half == 0 || (std::strcmp(unit, "1ps") != 0 && std::strcmp(unit, "1fs") != 0)) {
                std::fprintf(stderr,
                             "ehdl_pipe_tb: line %lu: expected \"vcd FIRST END UNIT HALF START FILE\" (FIRST < END, UNIT "
                             "1ps or 1fs, HALF > 0)\n",
                             line_number);
                return 2;
            }
            waves.wanted = true;
            waves.unit = unit;
            waves.file = line.substr(static_cast<size_t>(file_at));
            continue;
        }
        if (line[0] == 'w') {
            HostWrite w{};
            unsigned long long data = 0;
            if (std::sscanf(line.c_str(), "w %x %x %llx %x", &w.map, &w.addr, &data, &w.mask) != 4) {
                std::fprintf(stderr, "ehdl_pipe_tb: line %lu: expected \"w MAP ADDR DATA MASK\"\n", line_number);
                return 2;
            }
            w.data = data;
            host_writes.push_back(w);
            continue;
        }
        if (line[0] == 'm') {
            unsigned map = 0, bytes = 0, base = 0;
            if (std::sscanf(line.c_str(), "m %x %x %x", &map, &bytes, &base) < 2) {
                std::fprintf(stderr, "ehdl_pipe_tb: line %lu: expected \"m MAP BYTES [BASE]\"\n", line_number);
                return 2;
            }
            dumps.push_back(Dump{map, bytes, base});
            continue;
        }
        unsigned ifindex = 0, rxq = 0;
        unsigned long long time = 0;
        char hexbytes[20000];
        const int fields = line.size() >= sizeof hexbytes
                               ? 0
                               : std::sscanf(line.c_str(), "%x %x %19999s %llx", &ifindex, &rxq, hexbytes, &time);
        if (fields != 3 && fields != 4) {
            std::fprintf(stderr, "ehdl_pipe_tb: line %lu: expected \"IFINDEX RXQ BYTES [TIME]\" in hex\n", line_number);
            return 2;
        }
        std::string hex(hexbytes);
        if (hex.size() % 2 != 0) {
            std::fprintf(stderr, "ehdl_pipe_tb: line %lu: odd number of hex digits\n", line_number);
            return 2;
        }
        std::vector<uint8_t> bytes(hex.size() / 2);
        for (size_t i = 0; i < bytes.size(); ++i) {
            int hi = hex_digit(hex[2 * i]), lo = hex_digit(hex[2 * i + 1]);
            if (hi < 0 || lo < 0) {
                std::fprintf(stderr, "ehdl_pipe_tb: line %lu: not hex\n", line_number);
                return 2;
            }
            bytes[i] = static_cast<uint8_t>(hi * 16 + lo);
        }
        packets.push_back(Packet{ifindex, rxq, bytes, fields == 4, time});
    }
    const size_t expected = packets.size();
    if (waves.wanted && waves.end > expected) {
        std::fprintf(stderr, "ehdl_pipe_tb: vcd: packets %llu..%llu, but %zu packets in\n", waves.first, waves.end,
                     expected);
        return 2;
    }
#if VM_TRACE
    // The tracer is attached before the first eval and opened when packet FIRST is offered.
    std::unique_ptr<VerilatedVcdC> vcd;
    if (waves.wanted) {
        vcd = std::make_unique<VerilatedVcdC>();
        top->trace(vcd.get(), 99);
        vcd->set_time_unit(waves.unit);
        vcd->set_time_resolution(waves.unit);
    }
#else
    if (waves.wanted) {
        std::fprintf(stderr, "ehdl_pipe_tb: waves need a model built with verilator --trace (%s not written)\n",
                     waves.file.c_str());
        return 2;
    }
#endif
    long long vcd_from = -1;  // the cycle at time START, once recording
    unsigned long long vcd_last = 0;
    // Records the signals after this cycle's falling (phase 0) or rising (phase 1) edge.
    auto dump = [&](long long cycle, unsigned phase) {
#if VM_TRACE
        if (vcd && vcd->isOpen()) {
            vcd_last = waves.start + (static_cast<unsigned long long>(cycle - vcd_from) * 2 + phase) * waves.half;
            vcd->dump(static_cast<uint64_t>(vcd_last));
        }
#else
        (void)cycle;
        (void)phase;
#endif
    };

    top->clk_i = 0;
    top->rst_ni = 0;
    top->s_axis_tvalid_i = 0;
    top->m_axis_tready_i = 0;
    top->eval();
    // A clock edge in reset: an asynchronous reset that starts low has no negedge to trigger it.
    top->clk_i = 1;
    top->eval();
    top->clk_i = 0;
    top->eval();
    top->rst_ni = 1;
    top->host_we_i = 0;
    top->eval();
    for (const HostWrite& w : host_writes) {
        top->host_map_i = w.map;
        top->host_addr_i = w.addr;
        top->host_wdata_i = w.data;
        top->host_wmask_i = w.mask;
        top->host_we_i = 1;
        top->eval();
        top->clk_i = 1;
        top->eval();
        top->clk_i = 0;
        top->host_we_i = 0;
        top->eval();
    }

    size_t in_offset = 0;  // next byte of packets.front() to send
    size_t sent = 0;       // packets whose last beat went in
    bool offering = false;
    std::vector<uint8_t> out_bytes;
    uint32_t out_verdict = 0;
    uint64_t out_dest = 0;
    size_t done = 0;
    long long cycle = 0, first_in = -1, first_out = -1, last_out = -1, idle = 0;
    unsigned long long beats = 0, stalls = 0, flushes = 0;
    while (done < expected) {
        if (!offering && !packets.empty() && percent() >= gap) offering = true;
        for (size_t w = 0; w < words; ++w) top->s_axis_tdata_i[w] = 0;
        top->s_axis_tkeep_i = 0;
        top->s_axis_tvalid_i = offering;
        top->s_axis_tlast_i = 0;
        for (size_t w = 0; w < user_words; ++w) top->s_axis_tuser_i[w] = 0;
        if (offering) {
            const std::vector<uint8_t>& p = packets.front().bytes;
            if (in_offset == 0) {
                // {rx_queue_index, ingress_ifindex, length[15:0]} over bits 79:0.
                const uint32_t len = static_cast<uint32_t>(p.size()) & 0xffff, ifx = packets.front().ifindex,
                               rxq = packets.front().rxq;
                top->s_axis_tuser_i[0] = len | (ifx << 16);
                top->s_axis_tuser_i[1] = (ifx >> 16) | (rxq << 16);
                top->s_axis_tuser_i[2] = rxq >> 16;
                if (user_words >= 5 && packets.front().timed) {
                    // {time_valid, time[63:0]} over bits 144:80.
                    const uint64_t t = packets.front().time;
                    top->s_axis_tuser_i[2] |= static_cast<uint32_t>(t & 0xffff) << 16;
                    top->s_axis_tuser_i[3] = static_cast<uint32_t>(t >> 16);
                    top->s_axis_tuser_i[4] = static_cast<uint32_t>(t >> 48) | (1u << 16);
                }
            }
            size_t n = std::min(frame_bytes, p.size() - in_offset);
            for (size_t i = 0; i < n; ++i)
                top->s_axis_tdata_i[i / 4] |= static_cast<EData>(p[in_offset + i]) << (8 * (i % 4));
            top->s_axis_tkeep_i = n == 64 ? ~0ULL : ((1ULL << n) - 1);
            top->s_axis_tlast_i = in_offset + n == p.size();
        }
        top->m_axis_tready_i = percent() >= stall;
        top->eval();
#if VM_TRACE
        if (vcd && vcd_from < 0 && offering && in_offset == 0 && sent == waves.first) {
            vcd->open(waves.file.c_str());
            if (!vcd->isOpen()) {
                std::fprintf(stderr, "ehdl_pipe_tb: vcd: cannot open %s\n", waves.file.c_str());
                return 2;
            }
            vcd_from = cycle;
        }
#endif
        dump(cycle, 0);
        if (offering && top->m_axis_tready_i && !top->s_axis_tready_o) ++stalls;
        if (top->flush_o) ++flushes;
        if (offering && top->s_axis_tready_o) {
            if (first_in < 0) first_in = cycle;
            ++beats;
            in_offset += frame_bytes;
            if (in_offset >= packets.front().bytes.size()) {
                packets.pop_front();
                in_offset = 0;
                ++sent;
            }
            offering = false;
        }
        if (top->m_axis_tvalid_o && top->m_axis_tready_i) {
            if (first_out < 0) first_out = cycle;
            last_out = cycle;
            idle = 0;
            if (out_bytes.empty()) {
                out_verdict = top->m_axis_tuser_o;
                out_dest = top->m_axis_tdest_o;
            } else if (out_verdict != top->m_axis_tuser_o) {
                std::fprintf(stderr, "ehdl_pipe_tb: tuser changed inside packet %zu\n", done);
                return 4;
            }
            uint64_t keep = top->m_axis_tkeep_o;
            for (size_t i = 0; i < frame_bytes; ++i)
                if ((keep >> i) & 1) out_bytes.push_back(static_cast<uint8_t>(top->m_axis_tdata_o[i / 4] >> (8 * (i % 4))));
            if (top->m_axis_tlast_o) {
                std::printf("pkt %x %llx ", out_verdict, static_cast<unsigned long long>(out_dest));
                for (uint8_t b : out_bytes) std::printf("%02x", b);
                std::printf("\n");
                out_bytes.clear();
                ++done;
            }
        } else if (++idle > 100000) {
            std::fprintf(stderr, "ehdl_pipe_tb: no output for 100000 cycles after %zu of %zu packets\n", done, expected);
            return 3;
        }
        top->clk_i = 1;
        top->eval();
        dump(cycle, 1);
#if VM_TRACE
        if (vcd && vcd->isOpen() && done >= waves.end) vcd->close();
#endif
        top->clk_i = 0;
        top->eval();
        ++cycle;
    }
    for (const Dump& d : dumps) {
        std::printf("map %x ", d.map);
        for (uint32_t a = 0; a < d.bytes; a += 8) {
            // The host port reads one cycle after the address (RAM map blocks read registered).
            top->host_map_i = d.map;
            top->host_addr_i = d.base + a;
            top->eval();
            top->clk_i = 1;
            top->eval();
            top->clk_i = 0;
            top->eval();
            const uint64_t v = top->host_rdata_o;
            for (uint32_t b = 0; b < 8 && a + b < d.bytes; ++b)
                std::printf("%02x", static_cast<unsigned>((v >> (8 * b)) & 0xff));
        }
        std::printf("\n");
    }
    if (waves.wanted) std::printf("vcd %llu\n", vcd_last);
    std::printf("cycles %lld latency %lld beats %llu", last_out - first_in + 1, first_out - first_in, beats);
    if (report == 1) std::printf(" stalls %llu flushes %llu", stalls, flushes);
    std::printf("\n");
    top->final();
    return 0;
}
