// Drives rtl/ebpflow/ebpflow_nic.sv (NIC_PORTS ports, NIC_ENGINES_PER_PORT engines each, PORTS + 2 TX queues: the
// ports, the host queue, the controller): loads a program, streams packets into the RX ports and collects what leaves
// the TX queues.
//
// Build with -GPORTS=P -GENGINES_PER_PORT=G and -CFLAGS -DNIC_PORTS=P -CFLAGS -DNIC_ENGINES_PER_PORT=G.
//
// Commands on stdin, one per line, numbers in hex; one answer line each on stdout unless said otherwise:
//   imem SLOT VALUE        write instruction slot SLOT of the idle bank of the double-buffered
//                          instruction memory                                                      -> ok
//   len SLOTS              the idle bank's program length in slots                                 -> ok
//   swap                   the idle bank becomes the active one: packets that start from now on run
//                          its program                                                             -> ok
//   xdp FLAG               1: r0 is an XDP verdict, 0: a Table 4.2 action code                     -> ok
//   ifindex BASE           the ifindex of port 0, for XDP_REDIRECT targets (4 at start, as the cycle
//                          model's --ifindex)                                                      -> ok
//   ready PERCENT SEED     each TX queue takes a beat in PERCENT (decimal) of the cycles, drawn from
//                          SEED (100: always)                                                      -> ok
//   pkt PORT ID GAP BYTES  queue a packet for RX port PORT: ID (32 bits) rides in the header's
//                          timestamp-seconds field (bytes 3..6), GAP idle cycles between its beats,
//                          BYTES the frame (two digits a byte)                                     -> ok
//   go                     stream every queued packet (the ports in parallel, each port's packets in
//                          queue order, back to back) and run until every packet is in and the NIC
//                          is idle; then one line per packet copy that left a TX queue, in the order
//                          their last beats left:
//                            out QUEUE ID ENGINE DESTQ IN OUT BYTES
//                          QUEUE the TX queue, ENGINE the engine that ran it (header byte 13), DESTQ
//                          the header's destination-queue byte, IN the cycle its first beat was
//                          taken at RX, OUT the cycle its last beat left; then
//                            done CYCLES
//                          (the cycles since go), or "timeout" (then the model is unusable)
//   quit                   end
// Anything else answers "error <why>".

#include <cinttypes>
#include <cstdio>
#include <deque>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "Vebpflow_nic.h"
#include "verilated.h"

#ifndef NIC_PORTS
#define NIC_PORTS 4
#endif
#ifndef NIC_ENGINES_PER_PORT
#define NIC_ENGINES_PER_PORT 4
#endif

namespace {

constexpr unsigned kPorts = NIC_PORTS;
constexpr unsigned kQueues = kPorts + 2;
constexpr uint64_t kMaxCycles = 50000000;
constexpr unsigned kSlots = 4096;

// Bits of a Verilated port: an integer for up to 64 bits, a VlWide (32-bit words) above.
template <typename T>
void put(T& w, unsigned lsb, unsigned width, uint64_t v) {
    for (unsigned b = 0; b < width; ++b) {
        const unsigned bit = lsb + b;
        if constexpr (std::is_integral_v<T>) {
            const T m = static_cast<T>(T{1} << bit);
            w = ((v >> b) & 1) ? static_cast<T>(w | m) : static_cast<T>(w & ~m);
        } else {
            const uint32_t m = 1u << (bit % 32);
            w[bit / 32] = ((v >> b) & 1) ? (w[bit / 32] | m) : (w[bit / 32] & ~m);
        }
    }
}

template <typename T>
uint64_t get(const T& w, unsigned lsb, unsigned width) {
    uint64_t v = 0;
    for (unsigned b = 0; b < width; ++b) {
        const unsigned bit = lsb + b;
        uint64_t x;
        if constexpr (std::is_integral_v<T>) {
            x = (static_cast<uint64_t>(w) >> bit) & 1;
        } else {
            x = (w[bit / 32] >> (bit % 32)) & 1;
        }
        v |= x << b;
    }
    return v;
}

struct Packet {
    uint32_t id;
    unsigned gap;
    std::vector<uint8_t> bytes;
};

struct Rx {
    std::deque<Packet> queue;
    size_t beat = 0;
    unsigned wait = 0;
};

struct Tx {
    bool open = false;
    std::vector<uint8_t> bytes;
};

class Bench {
  public:
    explicit Bench(VerilatedContext* context) : top_(std::make_unique<Vebpflow_nic>(context)) {
        top_->clk_i = 0;
        top_->rst_ni = 0;
        top_->eval();
        tick();
        top_->rst_ni = 1;
        top_->ifindex_base_i = 4;
        top_->eval();
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

    // False when the idle bank may not be written (a packet still runs on it: never between runs).
    bool ready() {
        top_->eval();
        return top_->imem_wr_ready_o;
    }

    void set_len(uint32_t slots) {
        top_->imem_len_we_i = 1;
        top_->imem_len_i = slots;
        tick();
        top_->imem_len_we_i = 0;
        top_->eval();
    }

    void swap() {
        top_->imem_swap_i = 1;
        tick();
        top_->imem_swap_i = 0;
        top_->eval();
    }
    void set_xdp(bool on) { top_->xdp_i = on; }
    void set_ifindex(uint32_t base) { top_->ifindex_base_i = base; }
    void set_ready(unsigned percent, uint64_t seed) {
        percent_ = percent;
        rng_ = seed == 0 ? 1 : seed;
    }
    void queue(unsigned port, Packet p) { rx_[port].queue.push_back(std::move(p)); }

    // Runs every queued packet through; prints the out lines and returns the done/timeout line.
    std::string go() {
        uint64_t cycle = 0;
        std::map<uint32_t, uint64_t> in_at;
        while (true) {
            bool pending = false;
            for (unsigned p = 0; p < kPorts; ++p) pending = offer(p) || pending;
            set_tready();
            top_->eval();
            collect(cycle, in_at);
            const unsigned taken = static_cast<unsigned>(get(top_->s_axis_rx_tvalid_i, 0, kPorts) &
                                                         get(top_->s_axis_rx_tready_o, 0, kPorts));
            tick();
            for (unsigned p = 0; p < kPorts; ++p) advance(p, (taken >> p) & 1, cycle, in_at);
            ++cycle;
            if (!pending && top_->idle_o) break;
            if (cycle > kMaxCycles) return "timeout";
        }
        put(top_->s_axis_rx_tvalid_i, 0, kPorts, 0);
        top_->eval();
        std::ostringstream line;
        line << std::hex << "done " << cycle;
        return line.str();
    }

  private:
    // Presents port p's current beat; false when the port has nothing left.
    bool offer(unsigned p) {
        Rx& rx = rx_[p];
        put(top_->s_axis_rx_tvalid_i, p, 1, 0);
        if (rx.queue.empty()) return false;
        if (rx.wait > 0) return true;
        const Packet& pk = rx.queue.front();
        const size_t beats = pk.bytes.empty() ? 1 : (pk.bytes.size() + 7) / 8;
        uint64_t word = 0;
        for (unsigned b = 0; b < 8; ++b) {
            const size_t i = rx.beat * 8 + b;
            if (i < pk.bytes.size()) word |= static_cast<uint64_t>(pk.bytes[i]) << (8 * b);
        }
        const size_t left = pk.bytes.size() > rx.beat * 8 ? pk.bytes.size() - rx.beat * 8 : 0;
        put(top_->s_axis_rx_tdata_i, p * 64, 64, word);
        put(top_->s_axis_rx_tkeep_i, p * 8, 8, left >= 8 ? 0xff : (1u << left) - 1);
        put(top_->s_axis_rx_tlast_i, p, 1, rx.beat + 1 == beats);
        // Header bytes 0..15: input port, queues 0, seconds = the id, nanoseconds 0, the length.
        put(top_->s_axis_rx_tuser_i, p * 128, 64, p | static_cast<uint64_t>(pk.id) << 24);
        put(top_->s_axis_rx_tuser_i, p * 128 + 64, 64, static_cast<uint64_t>(pk.bytes.size()) << 24);
        put(top_->s_axis_rx_tvalid_i, p, 1, 1);
        return true;
    }

    void advance(unsigned p, bool taken, uint64_t cycle, std::map<uint32_t, uint64_t>& in_at) {
        Rx& rx = rx_[p];
        if (rx.queue.empty()) return;
        if (!taken) {
            if (rx.wait > 0) --rx.wait;
            return;
        }
        const Packet& pk = rx.queue.front();
        const size_t beats = pk.bytes.empty() ? 1 : (pk.bytes.size() + 7) / 8;
        if (rx.beat == 0) in_at[pk.id] = cycle;
        ++rx.beat;
        rx.wait = pk.gap;
        if (rx.beat == beats) {
            rx.queue.pop_front();
            rx.beat = 0;
            rx.wait = 0;
        }
    }

    void set_tready() {
        for (unsigned q = 0; q < kQueues; ++q) {
            bool r = true;
            if (percent_ < 100) {
                rng_ ^= rng_ << 13;
                rng_ ^= rng_ >> 7;
                rng_ ^= rng_ << 17;
                r = rng_ % 100 < percent_;
            }
            put(top_->m_axis_tx_tready_i, q, 1, r);
        }
        top_->eval();
    }

    void collect(uint64_t cycle, const std::map<uint32_t, uint64_t>& in_at) {
        for (unsigned q = 0; q < kQueues; ++q) {
            if (!get(top_->m_axis_tx_tvalid_o, q, 1) || !get(top_->m_axis_tx_tready_i, q, 1)) continue;
            Tx& tx = tx_[q];
            tx.open = true;
            const uint64_t word = get(top_->m_axis_tx_tdata_o, q * 64, 64);
            const unsigned keep = static_cast<unsigned>(get(top_->m_axis_tx_tkeep_o, q * 8, 8));
            for (unsigned b = 0; b < 8; ++b) {
                if (keep & (1u << b)) tx.bytes.push_back(static_cast<uint8_t>(word >> (8 * b)));
            }
            if (!get(top_->m_axis_tx_tlast_o, q, 1)) continue;
            const uint64_t lo = get(top_->m_axis_tx_tuser_o, q * 128, 64);
            const uint64_t hi = get(top_->m_axis_tx_tuser_o, q * 128 + 64, 64);
            const uint32_t id = static_cast<uint32_t>(lo >> 24);
            const unsigned dest = static_cast<unsigned>((lo >> 16) & 0xff);
            const unsigned engine = static_cast<unsigned>((hi >> 40) & 0xff);
            const auto it = in_at.find(id);
            std::printf("out %x %x %x %x %" PRIx64 " %" PRIx64 " ", q, id, engine, dest,
                        it == in_at.end() ? 0 : it->second, cycle);
            if (tx.bytes.empty()) {
                std::printf("-");
            }
            for (uint8_t b : tx.bytes) std::printf("%02x", b);
            std::printf("\n");
            tx = Tx{};
        }
    }

    std::unique_ptr<Vebpflow_nic> top_;
    Rx rx_[kPorts];
    Tx tx_[kQueues];
    unsigned percent_ = 100;
    uint64_t rng_ = 1;
};

bool hex_u64(const std::string& text, uint64_t* out) {
    if (text.empty() || text.size() > 16) return false;
    char* end = nullptr;
    *out = std::strtoull(text.c_str(), &end, 16);
    return end != nullptr && *end == '\0';
}

bool hex_bytes(const std::string& text, std::vector<uint8_t>* out) {
    out->clear();
    if (text == "-") return true;
    if (text.size() % 2 != 0) return false;
    for (size_t i = 0; i < text.size(); i += 2) {
        uint64_t v = 0;
        if (!hex_u64(text.substr(i, 2), &v)) return false;
        out->push_back(static_cast<uint8_t>(v));
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
        std::string cmd, a, b, c, d;
        in >> cmd >> a >> b >> c >> d;
        uint64_t x = 0, y = 0, z = 0;
        std::string answer = "ok";
        if (cmd == "quit") {
            break;
        } else if (cmd == "imem") {
            if (!hex_u64(a, &x) || !hex_u64(b, &y) || x >= kSlots) {
                answer = "error imem: SLOT VALUE";
            } else if (!bench.ready()) {
                answer = "error imem: the idle bank is in use";
            } else {
                bench.imem(static_cast<uint32_t>(x), y);
            }
        } else if (cmd == "len") {
            if (!hex_u64(a, &x) || x > kSlots) {
                answer = "error len: SLOTS, at most 1000 (hex)";
            } else if (!bench.ready()) {
                answer = "error len: the idle bank is in use";
            } else {
                bench.set_len(static_cast<uint32_t>(x));
            }
        } else if (cmd == "swap") {
            bench.swap();
        } else if (cmd == "xdp") {
            if (!hex_u64(a, &x) || x > 1) {
                answer = "error xdp: 0 or 1";
            } else {
                bench.set_xdp(x == 1);
            }
        } else if (cmd == "ifindex") {
            if (!hex_u64(a, &x) || x > 0xffffffffu) {
                answer = "error ifindex: BASE (32 bits)";
            } else {
                bench.set_ifindex(static_cast<uint32_t>(x));
            }
        } else if (cmd == "ready") {
            char* end = nullptr;
            const unsigned long percent = std::strtoul(a.c_str(), &end, 10);
            if (a.empty() || *end != '\0' || percent == 0 || percent > 100 || !hex_u64(b, &y)) {
                answer = "error ready: PERCENT (1..100, decimal) SEED";
            } else {
                bench.set_ready(static_cast<unsigned>(percent), y);
            }
        } else if (cmd == "pkt") {
            Packet p;
            if (!hex_u64(a, &x) || x >= kPorts || !hex_u64(b, &y) || y > 0xffffffffu || !hex_u64(c, &z) ||
                !hex_bytes(d, &p.bytes) || p.bytes.size() > 4064) {
                answer = "error pkt: PORT ID GAP BYTES (a port the NIC has, at most 4064 bytes)";
            } else {
                p.id = static_cast<uint32_t>(y);
                p.gap = static_cast<unsigned>(z);
                bench.queue(static_cast<unsigned>(x), std::move(p));
            }
        } else if (cmd == "go") {
            answer = bench.go();
            if (answer == "timeout") {
                std::cout << answer << std::endl;
                return 1;
            }
        } else {
            answer = "error unknown command " + cmd;
        }
        std::cout << answer << std::endl;
    }
    return 0;
}
