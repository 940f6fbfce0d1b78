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
//   pkt PORT ID GAP BYTES [QUEUE [EPOCH]]
//                          queue a packet for RX port PORT: ID (32 bits) rides in the header's
//                          timestamp-seconds field (bytes 3..6), GAP idle cycles between its beats,
//                          BYTES the frame (two digits a byte), QUEUE the header's source-queue byte
//                          (byte 1, rx_queue_index; 0 if not given), EPOCH the program it must run: 0
//                          the one active at go, k the k-th of the sched list (0 if not given)     -> ok
//   prog IDX SLOTS         keep program IDX (SLOTS: 16 digits a slot, the slot's value) for sched   -> ok
//   sched IDX              the next epoch of the coming go runs program IDX                        -> ok
//   results FLAG           1: go also reports every run and every dropped packet (res, drop)       -> ok
//   map IDX TYPE KSZ VSZ MAX  write the coprocessor's map-table entry IDX (maps are laid out in the
//                          order written, after reset or mtclear)      -> ok, or error when refused
//   mtclear                clear the map table and zero the value memory                           -> ok
//   host ID R1 R2 R4 KEY VAL  a request on the coprocessor's host port (ID 1, 2, 3 lookup, update,
//                          delete of map R1 with flags R4; 256/257 read/write the window word at R1
//                          (data R2); 258 entry R2 of map R1: bit 0 in use, bits 63..1 its value index;
//                          259 the positions of map R1's entries), KEY and VAL bytes (- for none), while
//                          the NIC is idle                                      -> r0 R0 KEYBYTES
//   entries MAP MAX KSZ WORDS  every entry in use of map MAP (KSZ-byte keys, WORDS value words an entry;
//                          the positions from host id 259, MAX unused) through the host port: a line
//                          "e KEY VALUE" each, then end
//   go                     stream every queued packet (the ports in parallel, each port's packets in
//                          queue order, back to back) and run until every packet is in and the NIC
//                          is idle. Swaps under traffic: while epoch k runs, epoch k+1's program is
//                          written into the idle bank (as soon as no packet runs on it, a slot a
//                          cycle); the banks swap once it is written and every packet of an epoch up
//                          to k has entered its engine; a packet of epoch k+1 enters only after.
//                          Then one line per packet copy that left a TX queue, in the order their
//                          last beats left:
//                            out QUEUE ID ENGINE DESTQ IN OUT BYTES
//                          QUEUE the TX queue, ENGINE the engine that ran it (header byte 13), DESTQ
//                          the header's destination-queue byte, IN the cycle its first beat was
//                          taken at RX, OUT the cycle its last beat left; with results 1 also
//                            res ID ENGINE R0 FAULT CYCLES     at the end of each run
//                            drop ID ENGINE BYTES              a packet the crossbar took for no queue
//                          then
//                            done CYCLES SWAPS
//                          (the cycles since go, the swaps made), or "timeout" (then the model is
//                          unusable)
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
#ifndef NIC_KEY_BYTES
#define NIC_KEY_BYTES 16
#endif
#ifndef NIC_VAL_BYTES
#define NIC_VAL_BYTES 32
#endif
constexpr unsigned kKeyBytes = NIC_KEY_BYTES;  // the NIC's KEY_BYTES (-CFLAGS -DNIC_KEY_BYTES=, as -GKEY_BYTES=)
constexpr unsigned kValBytes = NIC_VAL_BYTES;  // the NIC's VAL_BYTES

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
    unsigned queue = 0;
    unsigned epoch = 0;
    std::vector<uint8_t> bytes;
};

constexpr unsigned kEngines = NIC_PORTS * NIC_ENGINES_PER_PORT;

// The program of the next epoch, on its way into the idle bank.
struct Loading {
    size_t slot = 0;
    bool len_done = false;
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
        // The coprocessor zeroes its value memory after reset.
        while (top_->mt_busy_o) tick();
    }

    bool map(unsigned idx, unsigned type, unsigned ksz, unsigned vsz, uint32_t max) {
        top_->mt_we_i = 1;
        top_->mt_idx_i = idx;
        top_->mt_type_i = type;
        top_->mt_key_size_i = ksz;
        top_->mt_value_size_i = vsz;
        top_->mt_max_entries_i = max;
        tick();
        top_->mt_we_i = 0;
        top_->eval();
        return !top_->mt_err_o;
    }

    void mt_clear() {
        top_->mt_clear_i = 1;
        tick();
        top_->mt_clear_i = 0;
        top_->eval();
        while (top_->mt_busy_o) tick();
    }

    // One host-port request, held until its ack: r0 and the key the coprocessor answered (KEY_BYTES bytes).
    uint64_t host(uint32_t id, const uint64_t r[5], const std::vector<uint8_t>& key, const std::vector<uint8_t>& val,
                  std::vector<uint8_t>* key_out) {
        top_->host_id_i = id;
        for (unsigned i = 0; i < 5; ++i) put(top_->host_args_i, 64 * i, 64, r[i]);
        for (unsigned b = 0; b < kKeyBytes; ++b) put(top_->host_key_i, 8 * b, 8, b < key.size() ? key[b] : 0);
        for (unsigned b = 0; b < kValBytes; ++b) put(top_->host_val_i, 8 * b, 8, b < val.size() ? val[b] : 0);
        top_->host_req_i = 1;
        top_->eval();
        uint64_t r0 = 0;
        for (unsigned c = 0; c < 1000; ++c) {
            if (top_->host_ack_o) {
                r0 = top_->host_r0_o;
                key_out->clear();
                for (unsigned b = 0; b < kKeyBytes; ++b) {
                    key_out->push_back(static_cast<uint8_t>(get(top_->host_key_o, 8 * b, 8)));
                }
                tick();
                break;
            }
            tick();
        }
        top_->host_req_i = 0;
        top_->eval();
        return r0;
    }

    // Every entry in use of map m: "e KEY VALUE" lines.
    void entries(unsigned m, uint32_t max, unsigned ksz, unsigned words) {
        std::vector<uint8_t> key;
        const std::vector<uint8_t> none;
        // The positions of the map's dumps (a HASH map's bucket slots and the stash; any other map's entries, max):
        // host id 259; each dump answers bit 0 "in use" and above it the entry's value index.
        const uint64_t ask[5] = {m, 0, 0, 0, 0};
        std::vector<uint8_t> unused_key;
        const uint64_t positions = host(259, ask, none, none, &unused_key);
        (void)max;
        for (uint64_t i = 0; i < positions; ++i) {
            const uint64_t dump[5] = {m, i, 0, 0, 0};
            const uint64_t r0 = host(258, dump, none, none, &key);
            if ((r0 & 1) == 0) continue;
            const uint64_t at_index = r0 >> 1;
            std::printf("e ");
            for (unsigned b = 0; b < ksz && b < key.size(); ++b) std::printf("%02x", key[b]);
            std::printf(" ");
            if (words == 0) std::printf("-");
            for (unsigned w = 0; w < words; ++w) {
                const uint64_t at = (static_cast<uint64_t>(m) << 20) + (at_index * words + w) * 8;
                const uint64_t rd[5] = {at, 0, 0, 0, 0};
                std::vector<uint8_t> unused;
                const uint64_t v = host(256, rd, none, none, &unused);
                for (unsigned b = 0; b < 8; ++b) std::printf("%02x", static_cast<unsigned>((v >> (8 * b)) & 0xff));
            }
            std::printf("\n");
        }
    }

    void keep(unsigned idx, std::vector<uint64_t> slots) { progs_[idx] = std::move(slots); }
    bool has(unsigned idx) const { return progs_.count(idx) != 0; }
    void sched(unsigned idx) { sched_.push_back(idx); }
    void set_results(bool on) { results_ = on; }

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
        begin_epochs();
        while (true) {
            bool pending = false;
            for (unsigned p = 0; p < kPorts; ++p) pending = offer(p) || pending;
            set_tready();
            load_step();
            top_->eval();
            collect(cycle, in_at);
            observe();
            const unsigned taken = static_cast<unsigned>(get(top_->s_axis_rx_tvalid_i, 0, kPorts) &
                                                         get(top_->s_axis_rx_tready_o, 0, kPorts));
            bind(taken);
            tick();
            top_->imem_we_i = 0;
            top_->imem_len_we_i = 0;
            top_->imem_swap_i = 0;
            for (unsigned p = 0; p < kPorts; ++p) advance(p, (taken >> p) & 1, cycle, in_at);
            ++cycle;
            if (!pending && top_->idle_o && epoch_ + 1 >= sched_.size() + 1) break;
            if (cycle > kMaxCycles) return "timeout";
        }
        put(top_->s_axis_rx_tvalid_i, 0, kPorts, 0);
        top_->eval();
        std::ostringstream line;
        line << std::hex << "done " << cycle << " " << swaps_;
        sched_.clear();
        return line.str();
    }

  private:
    // Counts the queued packets of each epoch; epoch 0 runs on the bank active now.
    void begin_epochs() {
        epoch_ = 0;
        swaps_ = 0;
        loading_ = Loading{};
        left_.assign(sched_.size() + 1, 0);
        for (unsigned p = 0; p < kPorts; ++p) {
            for (const Packet& pk : rx_[p].queue) {
                if (pk.epoch < left_.size()) ++left_[pk.epoch];
            }
        }
    }

    // The next epoch's program into the idle bank, a slot a cycle while no packet runs on it; then the swap, once
    // every packet of the epochs so far has entered its engine.
    void load_step() {
        if (epoch_ >= sched_.size()) return;
        top_->eval();
        const std::vector<uint64_t>& slots = progs_[sched_[epoch_]];
        if (loading_.slot < slots.size() || !loading_.len_done) {
            if (!top_->imem_wr_ready_o) return;
            if (loading_.slot < slots.size()) {
                top_->imem_we_i = 1;
                top_->imem_addr_i = static_cast<uint32_t>(loading_.slot);
                top_->imem_data_i = slots[loading_.slot];
                ++loading_.slot;
            } else {
                top_->imem_len_we_i = 1;
                top_->imem_len_i = static_cast<uint32_t>(slots.size());
                loading_.len_done = true;
            }
            return;
        }
        for (unsigned e = 0; e <= epoch_; ++e) {
            if (left_[e] != 0) return;
        }
        top_->imem_swap_i = 1;
        ++epoch_;
        ++swaps_;
        loading_ = Loading{};
    }

    // The packets whose first beat enters an engine now: which engine runs which packet.
    void bind(unsigned taken) {
        const uint64_t starts = get(top_->eng_start_o, 0, kEngines);
        for (unsigned p = 0; p < kPorts; ++p) {
            Rx& rx = rx_[p];
            if (!((taken >> p) & 1) || rx.queue.empty() || rx.beat != 0) continue;
            const Packet& pk = rx.queue.front();
            if (pk.epoch < left_.size()) --left_[pk.epoch];
            for (unsigned g = 0; g < NIC_ENGINES_PER_PORT; ++g) {
                const unsigned e = p * NIC_ENGINES_PER_PORT + g;
                if ((starts >> e) & 1) engine_id_[e] = pk.id;
            }
        }
    }

    // Results of the runs that end now, and the packets the crossbar takes for no queue.
    void observe() {
        if (!results_) return;
        for (unsigned e = 0; e < kEngines; ++e) {
            if (!get(top_->res_valid_o, e, 1)) continue;
            std::printf("res %x %x %" PRIx64 " %x %" PRIx64 "\n", engine_id_[e], e, get(top_->res_r0_o, e * 64, 64),
                        static_cast<unsigned>(get(top_->res_fault_o, e, 1)), get(top_->res_cycles_o, e * 32, 32));
        }
        for (unsigned p = 0; p < kPorts; ++p) {
            if (!get(top_->obs_tvalid_o, p, 1)) continue;
            std::vector<uint8_t>& bytes = obs_[p];
            const uint64_t word = get(top_->obs_tdata_o, p * 64, 64);
            const unsigned keep = static_cast<unsigned>(get(top_->obs_tkeep_o, p * 8, 8));
            for (unsigned b = 0; b < 8; ++b) {
                if (keep & (1u << b)) bytes.push_back(static_cast<uint8_t>(word >> (8 * b)));
            }
            if (!get(top_->obs_tlast_o, p, 1)) continue;
            if (get(top_->obs_mask_o, p * kQueues, kQueues) == 0) {
                const uint64_t lo = get(top_->obs_tuser_o, p * 128, 64);
                const uint64_t hi = get(top_->obs_tuser_o, p * 128 + 64, 64);
                std::printf("drop %x %x ", static_cast<uint32_t>(lo >> 24), static_cast<unsigned>((hi >> 40) & 0xff));
                if (bytes.empty()) std::printf("-");
                for (uint8_t b : bytes) std::printf("%02x", b);
                std::printf("\n");
            }
            bytes.clear();
        }
    }

    // Presents port p's current beat; false when the port has nothing left.
    bool offer(unsigned p) {
        Rx& rx = rx_[p];
        put(top_->s_axis_rx_tvalid_i, p, 1, 0);
        if (rx.queue.empty()) return false;
        if (rx.wait > 0) return true;
        const Packet& pk = rx.queue.front();
        if (rx.beat == 0 && pk.epoch > epoch_) return true;
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
        // Header bytes 0..15: input port, source queue, destination queue 0, seconds = the id, nanoseconds 0, the
        // length.
        put(top_->s_axis_rx_tuser_i, p * 128, 64,
            p | static_cast<uint64_t>(pk.queue & 0xff) << 8 | static_cast<uint64_t>(pk.id) << 24);
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
    std::vector<uint8_t> obs_[kPorts];
    uint32_t engine_id_[kEngines] = {};
    std::map<unsigned, std::vector<uint64_t>> progs_;
    std::vector<unsigned> sched_;
    std::vector<size_t> left_;  // packets of each epoch that have not entered an engine yet
    Loading loading_;
    size_t epoch_ = 0;
    unsigned swaps_ = 0;
    bool results_ = false;
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
        std::string cmd, a, b, c, d, e, f;
        in >> cmd >> a >> b >> c >> d >> e >> f;
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
            uint64_t q = 0, ep = 0;
            if (!hex_u64(a, &x) || x >= kPorts || !hex_u64(b, &y) || y > 0xffffffffu || !hex_u64(c, &z) ||
                !hex_bytes(d, &p.bytes) || p.bytes.size() > 4064 || (!e.empty() && (!hex_u64(e, &q) || q > 0xff)) ||
                (!f.empty() && !hex_u64(f, &ep))) {
                answer = "error pkt: PORT ID GAP BYTES [QUEUE [EPOCH]] (a port the NIC has, at most 4064 bytes)";
            } else {
                p.id = static_cast<uint32_t>(y);
                p.gap = static_cast<unsigned>(z);
                p.queue = static_cast<unsigned>(q);
                p.epoch = static_cast<unsigned>(ep);
                bench.queue(static_cast<unsigned>(x), std::move(p));
            }
        } else if (cmd == "prog") {
            std::vector<uint64_t> slots;
            bool ok = hex_u64(a, &x) && b.size() % 16 == 0 && b.size() / 16 <= kSlots;
            for (size_t i = 0; ok && i < b.size(); i += 16) {
                ok = hex_u64(b.substr(i, 16), &y);
                slots.push_back(y);
            }
            if (!ok) {
                answer = "error prog: IDX SLOTS (16 digits a slot, at most 4096 slots)";
            } else {
                bench.keep(static_cast<unsigned>(x), std::move(slots));
            }
        } else if (cmd == "sched") {
            if (!hex_u64(a, &x) || !bench.has(static_cast<unsigned>(x))) {
                answer = "error sched: IDX of a kept program";
            } else {
                bench.sched(static_cast<unsigned>(x));
            }
        } else if (cmd == "results") {
            if (!hex_u64(a, &x) || x > 1) {
                answer = "error results: 0 or 1";
            } else {
                bench.set_results(x == 1);
            }
        } else if (cmd == "map") {
            uint64_t t = 0, k = 0, v = 0, m = 0;
            if (!hex_u64(a, &x) || !hex_u64(b, &t) || !hex_u64(c, &k) || !hex_u64(d, &v) || !hex_u64(e, &m) ||
                t > 0xff || k > 0xff || v > 0x100000 || m > 0xffffffffu) {
                answer = "error map: IDX TYPE KSZ VSZ MAX";
            } else if (!bench.map(static_cast<unsigned>(x), static_cast<unsigned>(t), static_cast<unsigned>(k),
                                  static_cast<unsigned>(v), static_cast<uint32_t>(m))) {
                answer = "error map: the coprocessor refused it";
            }
        } else if (cmd == "mtclear") {
            bench.mt_clear();
        } else if (cmd == "host") {
            uint64_t r[5] = {0, 0, 0, 0, 0};
            std::vector<uint8_t> key, val, out;
            if (!hex_u64(a, &x) || !hex_u64(b, &r[0]) || !hex_u64(c, &r[1]) || !hex_u64(d, &r[3]) ||
                !hex_bytes(e, &key) || !hex_bytes(f, &val) || key.size() > kKeyBytes || val.size() > kValBytes) {
                answer = "error host: ID R1 R2 R4 KEY VAL";
            } else {
                const uint64_t r0 = bench.host(static_cast<uint32_t>(x), r, key, val, &out);
                std::ostringstream line;
                line << std::hex << "r0 " << r0 << " ";
                char buf[3];
                for (uint8_t byte : out) {
                    std::snprintf(buf, sizeof buf, "%02x", byte);
                    line << buf;
                }
                answer = line.str();
            }
        } else if (cmd == "entries") {
            uint64_t m = 0, max = 0, ksz = 0, words = 0;
            if (!hex_u64(a, &m) || !hex_u64(b, &max) || !hex_u64(c, &ksz) || !hex_u64(d, &words) || m > 0xf ||
                max > 0x10000 || ksz > kKeyBytes || words > 0x20000) {
                answer = "error entries: MAP MAX KSZ WORDS";
            } else {
                bench.entries(static_cast<unsigned>(m), static_cast<uint32_t>(max), static_cast<unsigned>(ksz),
                              static_cast<unsigned>(words));
                answer = "end";
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
