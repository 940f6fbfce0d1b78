// Verilator harness of the whole hXDP module (rtl/sephirot/hxdp.sv): loads an image, its maps and routes, runs
// packets through the AXI4-Stream ports and answers host map operations, one text line per command.
//
// The protocol (docs/hxdp-module.md, "Harness protocol"): one command per line on stdin, one answer line per command
// on stdout (flushed), numbers in hex without 0x, byte strings as hex pairs in memory order (byte 0 first), "-" for
// an empty one. A malformed or refused command answers "error <what>" and the harness keeps going; "quit" or the
// end of stdin ends it (no answer). Built with `--trace` the "vcd UNIT HALF FILE" command writes waves (time in UNITs,
// 1ps or 1fs, from 0 at the next cycle, HALF of them per half clock period); without it "vcd" answers an error. Widths of the key and value ports come from the model (-G overrides need no matching C++ flags); the map
// table written with "map" gives each map's key and value sizes.
//
// Built with -DHWXDP_WARP_TOP the harness drives rtl/warp/warp_hxdp.sv instead (the Warp Engine in front of the
// module, docs/warp.md): two more commands, "wcfg SEL ADDR WORD DATA" (one write of the engine's configuration port)
// and "entry SLOT BUNDLE" (one line of the entry table), answer "ok"; "latency" answers "ret CYCLES", the cycles from
// the last packet's last input beat to Sephirot's start (0 when Sephirot has not started since: the engine's verdict). Its input queue refuses a packet only after the
// engine, so a refusal is found among the results: "result" (or "packet") answers the refusal's error in the order
// refusals and outputs happened. A packet the engine drops (XDP_DROP or XDP_ABORTED, e_drop_o) never reaches the
// module: its result (the frame unchanged, 0 cycles) is made as it leaves the engine, so among queued packets it may
// come before earlier ones the module still holds.
//
// "done_at" answers "ret CYCLE": the harness cycle at which the last result answered had its last output beat taken
// (the interval between two results queued back to back is the module's rate for such packets).
//
// Usage: hxdp_sim [--budget CYCLES]   (cycles a packet or host operation may take before "error timeout", default
// 16777216; the module's own BUDGET parameter aborts a looping program earlier).

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#ifdef HWXDP_WARP_TOP
#include "Vwarp_hxdp.h"
using Top = Vwarp_hxdp;
#else
#include "Vhxdp.h"
using Top = Vhxdp;
#endif
#include "verilated.h"
#if VM_TRACE
#include "verilated_vcd_c.h"
#endif

namespace {

constexpr unsigned kBeatBytes = 32;
constexpr size_t kMinPacket = 14;
constexpr size_t kMaxPacket = 3520;
constexpr uint32_t kRingbufType = 27;  // BPF_MAP_TYPE_RINGBUF

using Bytes = std::vector<uint8_t>;

// ---------------------------------------------------------------------------------------------------------------
// Ports as byte arrays: Verilator gives ports up to 64 bits as integers and wider ones as VlWide<N> (32-bit words).
template <typename T>
typename std::enable_if<std::is_integral<T>::value, size_t>::type capacity(const T&) {
    return sizeof(T);
}
template <std::size_t N>
size_t capacity(const VlWide<N>&) {
    return 4 * N;
}

template <typename T>
typename std::enable_if<std::is_integral<T>::value>::type put_bytes(T& port, const Bytes& bytes) {
    uint64_t v = 0;
    for (size_t i = 0; i < bytes.size() && i < sizeof(T); ++i) v |= static_cast<uint64_t>(bytes[i]) << (8 * i);
    port = static_cast<T>(v);
}
template <std::size_t N>
void put_bytes(VlWide<N>& port, const Bytes& bytes) {
    for (std::size_t w = 0; w < N; ++w) port[w] = 0;
    for (size_t i = 0; i < bytes.size() && i < 4 * N; ++i) port[i / 4] |= static_cast<uint32_t>(bytes[i]) << (8 * (i % 4));
}

template <typename T>
typename std::enable_if<std::is_integral<T>::value, Bytes>::type get_bytes(const T& port, size_t count) {
    Bytes out;
    for (size_t i = 0; i < count; ++i) out.push_back(i < sizeof(T) ? static_cast<uint8_t>(static_cast<uint64_t>(port) >> (8 * i)) : 0);
    return out;
}
template <std::size_t N>
Bytes get_bytes(const VlWide<N>& port, size_t count) {
    Bytes out;
    for (size_t i = 0; i < count; ++i) out.push_back(i < 4 * N ? static_cast<uint8_t>(port[i / 4] >> (8 * (i % 4))) : 0);
    return out;
}

template <std::size_t N>
uint64_t get64(const VlWide<N>& port, unsigned word64) {
    return static_cast<uint64_t>(port[2 * word64]) | (static_cast<uint64_t>(port[2 * word64 + 1]) << 32);
}

std::string hex(const Bytes& bytes) {
    if (bytes.empty()) return "-";
    std::string out;
    char buf[3];
    for (uint8_t b : bytes) {
        std::snprintf(buf, sizeof buf, "%02x", b);
        out += buf;
    }
    return out;
}

// ---------------------------------------------------------------------------------------------------------------
// Command lines: words, hex numbers and hex byte strings, each failure naming the field.
struct BadLine {
    std::string what;
};

class Words {
  public:
    explicit Words(const std::string& line) : line_(line) {
        const char* space = " \t\r\n\f\v";
        for (size_t at = line.find_first_not_of(space); at != std::string::npos;) {
            const size_t end = line.find_first_of(space, at);
            starts_.push_back(at);
            words_.push_back(line.substr(at, end == std::string::npos ? std::string::npos : end - at));
            at = end == std::string::npos ? end : line.find_first_not_of(space, end);
        }
    }
    bool empty() const { return words_.empty(); }
    const std::string& command() const { return words_[0]; }

    uint64_t number(const char* what, uint64_t max = UINT64_MAX) {
        const std::string& w = next(what);
        if (w.empty() || w.size() > 16) throw BadLine{std::string(what) + " \"" + w + "\" is not a hex number"};
        uint64_t v = 0;
        for (char c : w) {
            int d = digit(c);
            if (d < 0) throw BadLine{std::string(what) + " \"" + w + "\" is not a hex number"};
            v = (v << 4) | static_cast<uint64_t>(d);
        }
        if (v > max) {
            char buf[64];
            std::snprintf(buf, sizeof buf, " %" PRIx64 " is above %" PRIx64, v, max);
            throw BadLine{std::string(what) + buf};
        }
        return v;
    }

    Bytes bytes(const char* what) {
        const std::string& w = next(what);
        Bytes out;
        if (w == "-") return out;
        if (w.size() % 2 != 0) throw BadLine{std::string(what) + " has an odd number of hex digits"};
        for (size_t i = 0; i < w.size(); i += 2) {
            int hi = digit(w[i]), lo = digit(w[i + 1]);
            if (hi < 0 || lo < 0) throw BadLine{std::string(what) + " is not a string of hex pairs"};
            out.push_back(static_cast<uint8_t>(hi * 16 + lo));
        }
        return out;
    }

    std::string word(const char* what) { return next(what); }

    // The rest of the line from the next word on, inner spaces kept (a file name); nothing is left after it.
    std::string rest(const char* what) {
        if (pos_ >= words_.size()) throw BadLine{std::string("no ") + what};
        std::string r = line_.substr(starts_[pos_]);
        r.erase(r.find_last_not_of(" \t\r\n\f\v") + 1);
        pos_ = words_.size();
        return r;
    }

    void end() {
        if (pos_ < words_.size()) throw BadLine{"unexpected \"" + words_[pos_] + "\" at the end"};
    }

  private:
    static int digit(char c) {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        if (c >= 'A' && c <= 'F') return c - 'A' + 10;
        return -1;
    }
    const std::string& next(const char* what) {
        if (pos_ >= words_.size()) throw BadLine{std::string("no ") + what};
        return words_[pos_++];
    }
    std::string line_;
    std::vector<size_t> starts_;
    std::vector<std::string> words_;
    size_t pos_ = 1;
};

struct MapDef {
    uint32_t type, key_size, value_size, max_entries, flags;
};

struct Result {
    uint32_t verdict;
    bool fault;
    uint32_t cycles;
    bool redirect_set, redirect_by_map;
    unsigned redirect_map;
    uint64_t redirect_key;
    Bytes bytes;
    bool refused;  // the warp top's input queue refused the packet (no output)
    uint64_t done_at;  // the cycle its last output beat was taken
};

// ---------------------------------------------------------------------------------------------------------------
class Harness {
  public:
    Harness(VerilatedContext* context, uint64_t budget) : top_(std::make_unique<Top>(context)), budget_(budget) {
#if VM_TRACE
        // The tracer is attached before the first eval and opened only by "vcd".
        vcd_ = std::make_unique<VerilatedVcdC>();
        top_->trace(vcd_.get(), 99);
#endif
        idle_inputs();
        top_->clk_i = 0;
        top_->rst_ni = 0;
        top_->eval();
        tick();
        tick();
        top_->rst_ni = 1;
        top_->eval();
        tick();
    }

    ~Harness() {
#if VM_TRACE
        if (vcd_->isOpen()) vcd_->close();
#endif
        top_->final();
    }

    // One command line; false on quit.
    bool command(const std::string& line) {
        Words w(line);
        if (w.empty()) {
            answer("error empty line");
            return true;
        }
        const std::string cmd = w.command();
        try {
            if (cmd == "quit") {
                w.end();
                return false;
            } else if (cmd == "imem") {
                imem(w);
            } else if (cmd == "prog") {
                prog(w);
            } else if (cmd == "map") {
                map(w);
            } else if (cmd == "maps_done") {
                maps_done(w);
            } else if (cmd == "host_update" || cmd == "host_lookup" || cmd == "host_delete" || cmd == "host_slot") {
                host(cmd, w);
            } else if (cmd == "packet") {
                packet(w);
            } else if (cmd == "queue") {
                queue(w);
            } else if (cmd == "result") {
                w.end();
                result();
            } else if (cmd == "fib_clear" || cmd == "fib_dev" || cmd == "fib_route" || cmd == "fib_neigh") {
                fib(cmd, w);
            } else if (cmd == "mready") {
                mready_ = static_cast<unsigned>(w.number("MASK", 0xff));
                w.end();
                if (mready_ == 0) {
                    mready_ = 0xff;
                    throw BadLine{"a mask of 0 never takes an output beat"};
                }
                answer("ok");
            } else if (cmd == "ringbuf") {
                ringbuf(w);
            } else if (cmd == "vcd") {
                vcd(w);
            } else if (cmd == "vcd_off") {
                w.end();
                vcd_off();
#ifdef HWXDP_WARP_TOP
            } else if (cmd == "wcfg") {
                wcfg(w);
            } else if (cmd == "entry") {
                entry(w);
            } else if (cmd == "latency") {
                w.end();
                // ret CYCLES: from the last packet's last input beat to Sephirot's start (0: not started since).
                char buf[48];
                std::snprintf(buf, sizeof buf, "ret %" PRIx64,
                              started_at_ > last_in_at_ ? started_at_ - last_in_at_ : 0);
                answer(buf);
#endif
            } else if (cmd == "done_at") {
                w.end();
                char buf[48];
                std::snprintf(buf, sizeof buf, "ret %" PRIx64, last_done_at_);
                answer(buf);
            } else if (cmd == "counters") {
                w.end();
                std::printf("counters %" PRIx64 " %" PRIx64 " %" PRIx64 "\n", static_cast<uint64_t>(top_->rx_packets_o),
                            static_cast<uint64_t>(top_->tx_packets_o), static_cast<uint64_t>(top_->drop_packets_o));
                std::fflush(stdout);
            } else {
                answer("error unknown command \"" + cmd + "\"");
            }
        } catch (const BadLine& bad) {
            answer("error " + cmd + ": " + bad.what);
        }
        return true;
    }

  private:
    void answer(const std::string& text) {
        std::printf("%s\n", text.c_str());
        std::fflush(stdout);
    }

    void idle_inputs() {
        top_->imem_we_i = 0;
        top_->prog_we_i = 0;
        top_->cfg_we_i = 0;
        top_->cfg_done_i = 0;
        top_->host_valid_i = 0;
        top_->fib_clear_i = 0;
        top_->fib_we_i = 0;
        top_->s_valid_i = 0;
        top_->s_last_i = 0;
        top_->m_ready_i = 1;
        top_->rb_rd_i = 0;
        top_->rb_pop_i = 0;
#ifdef HWXDP_WARP_TOP
        top_->wcfg_we_i = 0;
        top_->ent_we_i = 0;
#endif
    }

#ifdef HWXDP_WARP_TOP
    // wcfg SEL ADDR WORD DATA: one write of the Warp Engine's configuration port (warp_engine.sv's header).
    void wcfg(Words& w) {
        uint64_t sel = w.number("SEL", 7);
        uint64_t addr = w.number("ADDR", 0xffff);
        uint64_t word = w.number("WORD", 0xff);
        uint64_t data = w.number("DATA");
        w.end();
        top_->wcfg_sel_i = static_cast<uint32_t>(sel);
        top_->wcfg_addr_i = static_cast<uint32_t>(addr);
        top_->wcfg_word_i = static_cast<uint32_t>(word);
        top_->wcfg_wdata_i = data;
        top_->wcfg_we_i = 1;
        tick();
        top_->wcfg_we_i = 0;
        answer("ok");
    }

    // entry SLOT BUNDLE: the entry table's line for restore slot SLOT.
    void entry(Words& w) {
        uint64_t slot = w.number("SLOT", 0xffff);
        uint64_t bundle = w.number("BUNDLE", 0xffff);
        w.end();
        top_->ent_slot_i = static_cast<uint32_t>(slot);
        top_->ent_bundle_i = static_cast<uint32_t>(bundle);
        top_->ent_we_i = 1;
        tick();
        top_->ent_we_i = 0;
        answer("ok");
    }
#endif

    // One clock cycle. m_ready_i follows the "mready" pattern (bit k of the 8-bit mask: ready in cycles k mod 8);
    // before the rising edge an output beat on m_* is taken when valid and ready.
    void tick() {
        top_->m_ready_i = (mready_ >> (cycles_ % 8)) & 1;
        top_->clk_i = 0;
        top_->eval();
        dump(0);
        if (top_->m_valid_o && top_->m_ready_i) take_beat();
#ifdef HWXDP_WARP_TOP
        if (top_->s_refused_o) {
            Result r{};
            r.refused = true;
            results_.push_back(r);
        }
        if (top_->core_start_o) started_at_ = cycles_;
        if (top_->e_out_o) {
            // The packets leave the engine in the order they went in: this is the oldest one still in it.
            Bytes frame = std::move(in_engine_.front());
            in_engine_.pop_front();
            if (top_->e_drop_o) {
                // Dropped by the engine in front of the module: its result, unchanged and in no core cycle.
                Result r{};
                r.verdict = top_->e_drop_ret_o;
                r.bytes = std::move(frame);
                r.done_at = cycles_;
                results_.push_back(r);
            }
        }
#endif
        top_->clk_i = 1;
        top_->eval();
        dump(1);
        ++cycles_;
    }

    // Records the signals after the falling (phase 0) or rising (phase 1) edge of this cycle, at the waveform's time:
    // half periods since the cycle the waveform started.
    void dump(unsigned phase) {
#if VM_TRACE
        if (vcd_->isOpen()) vcd_->dump(((cycles_ - vcd_start_) * 2 + phase) * vcd_half_);
#else
        (void)phase;
#endif
    }

    void take_beat() {
        if (!out_open_) {
            out_open_ = true;
            cur_ = Result{};
            cur_.verdict = top_->m_user_o[0];
            cur_.fault = top_->m_user_o[1] & 1;
            cur_.redirect_set = (top_->m_user_o[1] >> 1) & 1;
            cur_.redirect_by_map = (top_->m_user_o[1] >> 2) & 1;
            cur_.redirect_map = (top_->m_user_o[1] >> 8) & 0xff;
            cur_.cycles = top_->m_user_o[2];
            cur_.redirect_key = static_cast<uint64_t>(top_->m_user_o[3]) | (static_cast<uint64_t>(top_->m_user_o[4]) << 32);
        }
        for (unsigned i = 0; i < kBeatBytes; ++i) {
            if ((top_->m_keep_o >> i) & 1) cur_.bytes.push_back(static_cast<uint8_t>(top_->m_data_o[i / 4] >> (8 * (i % 4))));
        }
        if (top_->m_last_o) {
            out_open_ = false;
            cur_.done_at = cycles_;
            results_.push_back(cur_);
        }
    }

    void imem(Words& w) {
        uint64_t bundle = w.number("BUNDLE", 0xffff);
        uint64_t lane = w.number("LANE", 7);
        uint64_t slot = w.number("SLOT");
        w.end();
        top_->imem_we_i = 1;
        top_->imem_addr_i = static_cast<uint32_t>(bundle);
        top_->imem_lane_i = static_cast<uint32_t>(lane);
        top_->imem_slot_i = slot;
        tick();
        top_->imem_we_i = 0;
        answer("ok");
    }

    void prog(Words& w) {
        uint64_t idx = w.number("IDX", 0xff);
        uint64_t entry = w.number("ENTRY", 0xffff);
        w.end();
        top_->prog_we_i = 1;
        top_->prog_idx_i = static_cast<uint32_t>(idx);
        top_->prog_entry_i = static_cast<uint32_t>(entry);
        tick();
        top_->prog_we_i = 0;
        answer("ok");
    }

    void map(Words& w) {
        MapDef m{};
        uint64_t idx = w.number("IDX", 0xff);
        m.type = static_cast<uint32_t>(w.number("TYPE", 0xffffffff));
        m.key_size = static_cast<uint32_t>(w.number("KEY_SIZE", 0xffffffff));
        m.value_size = static_cast<uint32_t>(w.number("VALUE_SIZE", 0xffffffff));
        m.max_entries = static_cast<uint32_t>(w.number("MAX_ENTRIES", 0xffffffff));
        m.flags = static_cast<uint32_t>(w.number("FLAGS", 0xffffffff));
        w.end();
        maps_[static_cast<unsigned>(idx)] = m;
        top_->cfg_we_i = 1;
        top_->cfg_map_i = static_cast<uint32_t>(idx);
        top_->cfg_type_i = m.type;
        top_->cfg_key_size_i = m.key_size;
        top_->cfg_value_size_i = m.value_size;
        top_->cfg_max_entries_i = m.max_entries;
        top_->cfg_flags_i = m.flags;
        tick();
        top_->cfg_we_i = 0;
        answer("ok");
    }

    void maps_done(Words& w) {
        w.end();
        top_->cfg_done_i = 1;
        tick();
        top_->cfg_done_i = 0;
        // The maps module lays the maps out, then zeroes their values: wait until it takes host operations.
        uint64_t waited = 0;
        for (;;) {
            top_->eval();
            if (top_->host_ready_o) break;
            if (++waited > budget_) throw BadLine{"timeout: the maps module stays busy"};
            tick();
        }
        if (top_->cfg_error_o) {
            throw BadLine{"the maps module refuses the map table (a type, size, flag or count it does not build: "
                          "rtl/sephirot/maps.sv's header lists them)"};
        }
        answer("ok");
    }

    const MapDef& known_map(uint64_t idx) {
        auto it = maps_.find(static_cast<unsigned>(idx));
        if (it == maps_.end()) {
            char buf[64];
            std::snprintf(buf, sizeof buf, "map %" PRIx64 " is not defined (no \"map\" command)", idx);
            throw BadLine{buf};
        }
        return it->second;
    }

    void check_size(const char* what, const Bytes& b, uint32_t size, size_t port_bytes) {
        if (b.size() != size) {
            char buf[96];
            std::snprintf(buf, sizeof buf, "%s has %zx bytes, the map's size is %x", what, b.size(), size);
            throw BadLine{buf};
        }
        if (b.size() > port_bytes) {
            char buf[96];
            std::snprintf(buf, sizeof buf, "%s of %zx bytes is wider than the module's port (%zx)", what, b.size(),
                          port_bytes);
            throw BadLine{buf};
        }
    }

    // host_update MAP FLAGS KEY VALUE / host_lookup MAP KEY / host_delete MAP KEY / host_slot MAP SLOT.
    void host(const std::string& cmd, Words& w) {
        uint64_t idx = w.number("MAP", 0xff);
        unsigned op = 0;
        uint64_t flags = 0, slot = 0;
        Bytes key, value;
        const MapDef& m = known_map(idx);
        if (cmd == "host_update") {
            op = 1;
            flags = w.number("FLAGS");
            key = w.bytes("KEY");
            value = w.bytes("VALUE");
            check_size("KEY", key, m.key_size, capacity(top_->host_key_i));
            check_size("VALUE", value, m.value_size, capacity(top_->host_value_i));
        } else if (cmd == "host_lookup" || cmd == "host_delete") {
            op = cmd == "host_lookup" ? 0 : 2;
            key = w.bytes("KEY");
            check_size("KEY", key, m.key_size, capacity(top_->host_key_i));
        } else {
            op = 3;
            slot = w.number("SLOT", 0xfffffff);
        }
        w.end();
        put_bytes(top_->host_key_i, key);
        put_bytes(top_->host_value_i, value);
        top_->host_op_i = op;
        top_->host_map_i = static_cast<uint32_t>(idx);
        top_->host_flags_i = flags;
        top_->host_slot_i = static_cast<uint32_t>(slot);
        top_->host_valid_i = 1;
        uint64_t waited = 0;
        for (;;) {
            top_->eval();
            bool ready = top_->host_ready_o;
            tick();
            if (ready) break;
            if (++waited > budget_) {
                top_->host_valid_i = 0;
                throw BadLine{"timeout: the maps module never takes the operation"};
            }
        }
        top_->host_valid_i = 0;
        for (waited = 0;; ++waited) {
            top_->eval();
            if (top_->host_rsp_valid_o) break;
            if (waited > budget_) throw BadLine{"timeout: no answer from the maps module"};
            tick();
        }
        uint64_t ret = top_->host_rsp_ret_o;
        bool hit = top_->host_rsp_hit_o;
        Bytes rkey = get_bytes(top_->host_rsp_key_o, m.key_size);
        Bytes rvalue = get_bytes(top_->host_rsp_value_o, m.value_size);
        tick();
        char buf[40];
        std::snprintf(buf, sizeof buf, "%" PRIx64, ret);
        if (op == 1 || op == 2) {
            answer(std::string("ret ") + buf);
        } else if (op == 0) {
            answer(std::string("ret ") + buf + (hit ? " 1 " + hex(rvalue) : std::string(" 0 -")));
        } else {
            answer(hit ? "slot 1 " + hex(rkey) + " " + hex(rvalue) : std::string("slot 0 - -"));
        }
    }

    // fib_clear / fib_dev IFINDEX MAC MTU / fib_route PREFIX LEN TYPE METRIC IFINDEX GW / fib_neigh ADDR IFINDEX MAC.
    void fib(const std::string& cmd, Words& w) {
        if (cmd == "fib_clear") {
            w.end();
            top_->fib_clear_i = 1;
            tick();
            top_->fib_clear_i = 0;
            answer("ok");
            return;
        }
        top_->fib_kind_i = 0;
        top_->fib_ifindex_i = 0;
        top_->fib_mac_i = 0;
        top_->fib_mtu_i = 0;
        top_->fib_v6_i = 0;
        put_bytes(top_->fib_addr_i, Bytes{});
        top_->fib_len_i = 0;
        top_->fib_type_i = 0;
        top_->fib_metric_i = 0;
        top_->fib_gw_valid_i = 0;
        top_->fib_gw_v6_i = 0;
        put_bytes(top_->fib_gw_i, Bytes{});
        auto family = [](const Bytes& a, const char* what) {
            if (a.size() != 4 && a.size() != 16) throw BadLine{std::string(what) + " is neither 4 (IPv4) nor 16 (IPv6) bytes"};
            return a.size() == 16;
        };
        auto mac = [](const Bytes& m) {
            if (m.size() != 6) throw BadLine{"MAC is not 6 bytes"};
            uint64_t v = 0;
            for (size_t i = 0; i < 6; ++i) v |= static_cast<uint64_t>(m[i]) << (8 * i);
            return v;
        };
        if (cmd == "fib_dev") {
            top_->fib_kind_i = 0;
            top_->fib_ifindex_i = static_cast<uint32_t>(w.number("IFINDEX", 0xffffffff));
            top_->fib_mac_i = mac(w.bytes("MAC"));
            top_->fib_mtu_i = static_cast<uint32_t>(w.number("MTU", 0xffffffff));
        } else if (cmd == "fib_route") {
            top_->fib_kind_i = 1;
            Bytes prefix = w.bytes("PREFIX");
            top_->fib_v6_i = family(prefix, "PREFIX");
            put_bytes(top_->fib_addr_i, prefix);
            top_->fib_len_i = static_cast<uint32_t>(w.number("LEN", 0xff));
            top_->fib_type_i = static_cast<uint32_t>(w.number("TYPE", 3));
            top_->fib_metric_i = static_cast<uint32_t>(w.number("METRIC", 0xffffffff));
            top_->fib_ifindex_i = static_cast<uint32_t>(w.number("IFINDEX", 0xffffffff));
            Bytes gw = w.bytes("GW");
            if (!gw.empty()) {
                top_->fib_gw_valid_i = 1;
                top_->fib_gw_v6_i = family(gw, "GW");
                put_bytes(top_->fib_gw_i, gw);
            }
        } else {
            top_->fib_kind_i = 2;
            Bytes addr = w.bytes("ADDR");
            top_->fib_v6_i = family(addr, "ADDR");
            put_bytes(top_->fib_addr_i, addr);
            top_->fib_ifindex_i = static_cast<uint32_t>(w.number("IFINDEX", 0xffffffff));
            top_->fib_mac_i = mac(w.bytes("MAC"));
        }
        w.end();
        top_->fib_we_i = 1;
        tick();
        top_->fib_we_i = 0;
        top_->eval();
        if (top_->fib_error_o) throw BadLine{"the route tables are full (ROUTES, DEVICES, NEIGHBORS), or were since fib_clear"};
        answer("ok");
    }

    // queue IFINDEX RXQ TIME_NS BYTES: the packet's beats go in (the module keeps running earlier packets meanwhile);
    // true when the input queue kept it, false when it refused it (s_refused_o with the last beat).
    bool send(Words& w) {
        uint64_t ifindex = w.number("IFINDEX", 0xffffffff);
        uint64_t rxq = w.number("RXQ", 0xffffffff);
        uint64_t ts = w.number("TIME_NS");
        Bytes bytes = w.bytes("BYTES");
        w.end();
        // The input's beats: 32 bytes into the module, 64 into the warp top's engine (s_data_i's width).
        const size_t in_beat = capacity(top_->s_data_i);
        size_t beats = (bytes.size() + in_beat - 1) / in_beat;
        if (beats == 0) beats = 1;  // an empty packet is one beat with no byte kept (refused)
#ifdef HWXDP_WARP_TOP
        in_engine_.push_back(bytes);
#endif
        top_->s_user_i[0] = static_cast<uint32_t>(ifindex);
        top_->s_user_i[1] = static_cast<uint32_t>(rxq);
        top_->s_user_i[2] = static_cast<uint32_t>(ts);
        top_->s_user_i[3] = static_cast<uint32_t>(ts >> 32);
        uint64_t waited = 0;
        bool refused = false;
        for (size_t b = 0; b < beats; ++b) {
            Bytes chunk;
            for (size_t i = b * in_beat; i < bytes.size() && i < (b + 1) * in_beat; ++i) chunk.push_back(bytes[i]);
            put_bytes(top_->s_data_i, chunk);
            const uint64_t keep = chunk.size() >= 64 ? ~0ull : ((1ull << chunk.size()) - 1ull);
            top_->s_keep_i = static_cast<typename std::remove_reference<decltype(top_->s_keep_i)>::type>(keep);
            top_->s_last_i = b + 1 == beats;
            top_->s_valid_i = 1;
            for (;;) {
                top_->eval();
                bool ready = top_->s_ready_o;
#ifdef HWXDP_WARP_TOP
                refused = false;  // found later, among the results (tick)
                if (ready && top_->s_last_i) last_in_at_ = cycles_;
#else
                refused = ready && top_->s_last_i && top_->s_refused_o;
#endif
                tick();
                if (ready) break;
                if (++waited > budget_) {
                    top_->s_valid_i = 0;
                    throw BadLine{"timeout: the input queue never takes the packet"};
                }
            }
        }
        top_->s_valid_i = 0;
        top_->s_last_i = 0;
        if (refused) return false;
        ++pending_;
        return true;
    }

    // The oldest result of a kept packet whose result has not been read, as an "out" line.
    void result() {
        if (pending_ == 0) throw BadLine{"no queued packet without its result"};
        for (uint64_t waited = 0; results_.empty(); ++waited) {
            if (waited > budget_) {
                char buf[64];
                std::snprintf(buf, sizeof buf, "timeout: no result after %" PRIx64 " cycles", budget_);
                throw BadLine{buf};
            }
            tick();
        }
        const Result r = results_.front();
        results_.pop_front();
        --pending_;
        last_done_at_ = r.done_at;
        if (r.refused) {
            char why[128];
            std::snprintf(why, sizeof why, "refused: the input queue takes %zx to %zx bytes, when it has room", kMinPacket,
                          kMaxPacket);
            throw BadLine{why};
        }
        char buf[160];
        std::snprintf(buf, sizeof buf, "out %x %x %x %x %x %x %" PRIx64 " ", r.verdict, r.fault ? 1 : 0, r.cycles,
                      r.redirect_set ? 1 : 0, r.redirect_by_map ? 1 : 0, r.redirect_map, r.redirect_key);
        answer(buf + hex(r.bytes));
    }

    void refused(size_t len) {
        char buf[128];
        std::snprintf(buf, sizeof buf, "refused: %zx bytes (the input queue takes %zx to %zx, when it has room)", len,
                      kMinPacket, kMaxPacket);
        throw BadLine{buf};
    }

    // packet IFINDEX RXQ TIME_NS BYTES -> out VERDICT FAULT CYCLES REDIRECT_SET REDIRECT_BY_MAP REDIRECT_MAP
    // REDIRECT_KEY BYTES: queue, then its result.
    void packet(Words& w) {
        if (pending_ != 0) {
            char buf[96];
            std::snprintf(buf, sizeof buf, "%" PRIx64 " queued packets' results not read (\"result\")", pending_);
            throw BadLine{buf};
        }
        Words copy = w;
        if (!send(w)) refused(length_of(copy));
        result();
    }

    void queue(Words& w) {
        Words copy = w;
        if (!send(w)) refused(length_of(copy));
        answer("ok");
    }

    // The byte count of a packet command's BYTES (already validated by send).
    static size_t length_of(Words& w) {
        w.number("IFINDEX");
        w.number("RXQ");
        w.number("TIME_NS");
        return w.bytes("BYTES").size();
    }

    // ringbuf MAP -> records COUNT RECORD... : drains every record of the RINGBUF map the helper module serves.
    void ringbuf(Words& w) {
        uint64_t idx = w.number("MAP", 0xff);
        w.end();
        const MapDef& m = known_map(idx);
        if (m.type != kRingbufType) throw BadLine{"the map is not a RINGBUF"};
        top_->eval();
        if (top_->rb_cfg_error_o) throw BadLine{"more than one RINGBUF map: the helper module serves one"};
        if (!top_->rb_present_o || top_->rb_map_o != idx) throw BadLine{"the helper module does not serve this map"};
        if (top_->rb_overflow_o) throw BadLine{"records were dropped: the ring's storage (RB_BYTES) is too small"};
        std::vector<Bytes> records;
        for (;;) {
            // The ring reads the oldest record's header two cycles after it is written or the last one is popped.
            for (int i = 0; i < 3; ++i) tick();
            top_->eval();
            if (!top_->rb_avail_o) break;
            uint32_t len = top_->rb_len_o;
            Bytes rec;
            for (uint32_t word = 0; 8 * word < len; ++word) {
                top_->rb_rd_i = 1;
                top_->rb_word_i = word;
                tick();
                top_->rb_rd_i = 0;
                top_->eval();
                uint64_t data = top_->rb_rdata_o;
                for (uint32_t b = 0; b < 8 && 8 * word + b < len; ++b) rec.push_back(static_cast<uint8_t>(data >> (8 * b)));
            }
            top_->rb_pop_i = 1;
            tick();
            top_->rb_pop_i = 0;
            records.push_back(rec);
        }
        char buf[32];
        std::snprintf(buf, sizeof buf, "records %zx", records.size());
        std::string line = buf;
        for (const Bytes& r : records) line += " " + hex(r);
        answer(line);
    }

    // vcd UNIT HALF FILE: waves of every later cycle into FILE, from time 0 at the next cycle.
    void vcd(Words& w) {
        const std::string unit = w.word("UNIT");
        if (unit != "1ps" && unit != "1fs") throw BadLine{"UNIT \"" + unit + "\" is not 1ps or 1fs"};
        const uint64_t half = w.number("HALF");
        if (half == 0) throw BadLine{"HALF is 0: the clock needs a period"};
        const std::string file = w.rest("FILE");
#if VM_TRACE
        if (vcd_->isOpen()) vcd_->close();
        vcd_->set_time_unit(unit);
        vcd_->set_time_resolution(unit);
        vcd_->open(file.c_str());
        if (!vcd_->isOpen()) throw BadLine{"cannot open " + file};
        vcd_start_ = cycles_;
        vcd_half_ = half;
        answer("ok");
#else
        throw BadLine{"waves need a model built with verilator --trace (" + file + " not written)"};
#endif
    }

    void vcd_off() {
#if VM_TRACE
        if (vcd_->isOpen()) vcd_->close();
#endif
        answer("ok");
    }

    std::unique_ptr<Top> top_;
#if VM_TRACE
    std::unique_ptr<VerilatedVcdC> vcd_;
#endif
    uint64_t budget_;
    uint64_t cycles_ = 0;
    unsigned mready_ = 0xff;  // m_ready_i pattern over 8 cycles
    uint64_t vcd_start_ = 0;  // the cycle at time 0 of the waveform
    uint64_t vcd_half_ = 1;   // half a clock period in the waveform's unit
    std::map<unsigned, MapDef> maps_;
    bool out_open_ = false;
    Result cur_{};
    std::deque<Result> results_;
    uint64_t pending_ = 0;  // kept packets whose result has not been answered
    uint64_t last_done_at_ = 0;  // done_at of the last result answered
#ifdef HWXDP_WARP_TOP
    uint64_t last_in_at_ = 0;  // the cycle the last packet's last beat went in
    uint64_t started_at_ = 0;  // the cycle Sephirot last started a packet
    std::deque<Bytes> in_engine_;  // the packets sent that have not left the engine, oldest first
#endif
};

}  // namespace

int main(int argc, char** argv) {
    uint64_t budget = 1ull << 24;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--budget") == 0 && i + 1 < argc) {
            char* end = nullptr;
            budget = std::strtoull(argv[++i], &end, 0);
            if (end == argv[i] || *end != '\0' || budget == 0) {
                std::fprintf(stderr, "hxdp_sim: --budget wants a positive number of cycles, not %s\n", argv[i]);
                return 2;
            }
        } else {
            std::fprintf(stderr, "hxdp_sim: unknown argument %s (usage: hxdp_sim [--budget CYCLES])\n", argv[i]);
            return 2;
        }
    }
    auto context = std::make_unique<VerilatedContext>();
#if VM_TRACE
    context->traceEverOn(true);
#endif
    Harness harness(context.get(), budget);
    std::string line;
    char buf[1 << 16];
    while (std::fgets(buf, sizeof buf, stdin)) {
        line += buf;
        if (line.empty() || line.back() != '\n') {
            if (!std::feof(stdin)) continue;  // a line longer than the buffer: keep reading it
        }
        while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
        if (!harness.command(line)) break;
        line.clear();
    }
    return 0;
}
