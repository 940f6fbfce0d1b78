// Drives rtl/sephirot/sephirot.sv: loads images, runs packets against a C++ packet buffer and helper table, prints
// one result line per packet.
//
// Commands on stdin, one per line, numbers in hex:
//   imem BUNDLE LANE SLOT          write one instruction slot
//   entry BUNDLE                   the bundle the next packets start at
//   frame BYTES                    the next packet's bytes (two hex digits each, at least one byte)
//   md IFINDEX RXQ                 the next packet's ingress ifindex and rx queue
//   helper ID LATENCY RET FAULT    the helper table: helper ID answers after LATENCY cycles with RET (or a fault);
//                                  this forgets ID's tail and hmem lines
//   tail ID ENTRY                  helper ID answers as a successful bpf_tail_call into bundle ENTRY
//   hmem ID WE ADDR BYTES WDATA    helper ID makes this stack access (hmem_*, one a cycle from the cycle after its
//                                  call, in order) and answers no sooner than the cycle the last one's answer is in
//   stray WE ADDR BYTES WDATA      the next run makes this stack access in its third cycle, outside any helper call
//   arrival MODE                   1: the packet arrives 32 bytes a cycle as the APS stores it (frame k written in
//                                  the run's cycle k, start_i's being the first: pkt_ready_i = 256 + 32 * (k - 1) in
//                                  cycle k, 4096 once every frame is written); 0 (the default): every byte is there
//                                  from the start (pkt_ready_i = 4096)
//   run                            run one packet
// A run prints "hcall ID R1 R2 R3 R4 R5 CYCLES" for every helper call (CYCLES: run_cycles_o in the call's cycle),
// "hmem WE ADDR BYTES RDATA FAULT" for the answer to every stack access, then "result VERDICT FAULT CYCLES BYTES":
// the verdict, the fault flag, cycles_o and the packet bytes from data_meta to data_end after the run (hex), or
// "timeout" when done_o does not rise within a million cycles. With arrival 1, a read of bytes the packet has not
// brought yet returns zeros for them (unless the program wrote them), as the APS's packet buffer does.
// Unknown helpers fault. The packet buffer is the reference machine's frame (docs/memory-model.md): 256 bytes of
// headroom, data_meta = data at entry; tag-2 accesses must lie within data_meta..data_end, every other data-bus
// access (map values) faults. The data bus answers with latency 1, as the core expects.
//
// Built with -GLANES=N and -CFLAGS -DTB_LANES=N (N >= 2, so that the 64-bit-per-lane ports are arrays of words).

#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "Vsephirot.h"
#include "verilated.h"

namespace {

constexpr uint64_t kHeadroom = 256;
constexpr uint64_t kFrameBytes = 4096;
constexpr uint64_t kTagPacket = 2;
constexpr unsigned kMaxLanes = 8;
#ifndef TB_LANES
#error "build with -CFLAGS -DTB_LANES=<the core's LANES>"
#endif
constexpr unsigned kLanes = TB_LANES;
static_assert(kLanes >= 2 && kLanes <= kMaxLanes, "2 to 8 lanes");

struct Access {
    bool write;
    uint64_t addr;
    unsigned bytes;
    uint64_t wdata;
};

struct Helper {
    unsigned latency;
    uint64_t ret;
    bool fault;
    bool tail = false;
    uint32_t entry = 0;
    std::vector<Access> script = {};
};

constexpr uint32_t kPageEnd = 4096;

// Wide Verilator ports are arrays of 32-bit words.
template <typename Wide>
uint64_t get64(const Wide& words, unsigned index) {
    return static_cast<uint64_t>(words[2 * index]) | (static_cast<uint64_t>(words[2 * index + 1]) << 32);
}

template <typename Wide>
void put64(Wide& words, unsigned index, uint64_t value) {
    words[2 * index] = static_cast<uint32_t>(value);
    words[2 * index + 1] = static_cast<uint32_t>(value >> 32);
}

class Bench {
  public:
    explicit Bench(VerilatedContext* context) : core_(std::make_unique<Vsephirot>(context)) {
        frame_.assign(kFrameBytes, 0);
        core_->clk_i = 0;
        core_->rst_ni = 0;
        core_->eval();
        tick();
        core_->rst_ni = 1;
        core_->eval();
    }

    ~Bench() { core_->final(); }

    void write_slot(uint32_t bundle, unsigned lane, uint64_t slot) {
        core_->imem_we_i = 1;
        core_->imem_addr_i = bundle;
        core_->imem_lane_i = lane;
        core_->imem_slot_i = slot;
        tick();
        core_->imem_we_i = 0;
    }

    void set_entry(uint32_t entry) { entry_ = entry; }
    void set_md(uint32_t ifindex, uint32_t rxq) {
        ifindex_ = ifindex;
        rxq_ = rxq;
    }
    void set_packet(const std::vector<uint8_t>& bytes) { packet_ = bytes; }
    void set_helper(uint32_t id, const Helper& helper) { helpers_[id] = helper; }
    void set_tail(uint32_t id, uint32_t entry) {
        helpers_[id].tail = true;
        helpers_[id].entry = entry;
    }
    void add_access(uint32_t id, const Access& access) { helpers_[id].script.push_back(access); }
    void set_stray(const Access& access) {
        stray_ = access;
        has_stray_ = true;
    }
    void set_arrival(bool arrival) { arrival_ = arrival; }

    void run() {
        std::fill(frame_.begin(), frame_.end(), 0);
        std::fill(written_.begin(), written_.end(), false);
        std::memcpy(&frame_[kHeadroom], packet_.data(), packet_.size());
        frames_ = (packet_.size() + 31) / 32;
        meta_ = kHeadroom;
        data_ = kHeadroom;
        end_ = kHeadroom + packet_.size();
        core_->entry_i = entry_;
        core_->ctx_data_i = tagged(data_);
        core_->ctx_data_end_i = tagged(end_);
        core_->ctx_data_meta_i = tagged(meta_);
        core_->ctx_ifindex_i = ifindex_;
        core_->ctx_rxq_i = rxq_;
        clear_answers();
        core_->pkt_ready_i = ready(1);
        core_->start_i = 1;
        tick();
        core_->start_i = 0;
        core_->pkt_ready_i = ready(2);
        int helper_countdown = -1;
        Helper pending{};
        size_t script_pos = 0;
        bool in_flight = false;  // a stack access is driven in this cycle ...
        Access flying{};
        bool answer_due = false;  // ... and its answer is there in the next
        Access answered{};
        bool stray = has_stray_;
        has_stray_ = false;
        // Iteration `cycle` is the run's cycle `cycle + 2` (start_i's is the first).
        for (unsigned cycle = 0; cycle < 1000000; ++cycle) {
            core_->eval();
            ready_now_ = ready(cycle + 2);
            if (answer_due) {
                std::printf("hmem %x %" PRIx64 " %x %" PRIx64 " %x\n", answered.write ? 1u : 0u, answered.addr,
                            answered.bytes, static_cast<uint64_t>(core_->hmem_rdata_o),
                            static_cast<unsigned>(core_->hmem_fault_o));
                answer_due = false;
            }
            if (in_flight) {
                answered = flying;
                answer_due = true;
                in_flight = false;
            }
            if (core_->done_o) {
                std::printf("result %x %x %x ", static_cast<unsigned>(core_->verdict_o),
                            static_cast<unsigned>(core_->fault_o), static_cast<unsigned>(core_->cycles_o));
                for (uint64_t i = meta_; i < end_; ++i) {
                    std::printf("%02x", frame_[i]);
                }
                std::printf("\n");
                return;
            }
            // Sample this cycle's requests, prepare the answers seen after the edge.
            uint64_t rdata[kMaxLanes] = {};
            uint32_t fault = 0;
            for (unsigned lane = 0; lane < lanes(); ++lane) {
                if (!((core_->dbus_req_o >> lane) & 1)) {
                    continue;
                }
                bool write = (core_->dbus_we_o >> lane) & 1;
                uint64_t addr = get64(core_->dbus_addr_o, lane);
                unsigned bytes = (core_->dbus_bytes_o >> (4 * lane)) & 0xf;
                uint64_t wdata = get64(core_->dbus_wdata_o, lane);
                if (!access(addr, bytes, write, wdata, &rdata[lane])) {
                    fault |= 1u << lane;
                }
            }
            bool hret_valid = false;
            uint64_t hret = 0;
            bool hret_fault = false;
            if (core_->hcall_o) {
                std::printf("hcall %x", static_cast<unsigned>(core_->hcall_id_o));
                for (unsigned arg = 0; arg < 5; ++arg) {
                    std::printf(" %" PRIx64, get64(core_->hcall_args_o, arg));
                }
                std::printf(" %x\n", static_cast<unsigned>(core_->run_cycles_o));
                auto found = helpers_.find(core_->hcall_id_o);
                pending = found == helpers_.end() ? Helper{1, 0, true} : found->second;
                unsigned latency = pending.latency < 1 ? 1 : pending.latency;
                if (latency < pending.script.size() + 1) {
                    latency = static_cast<unsigned>(pending.script.size() + 1);
                }
                helper_countdown = static_cast<int>(latency);
                script_pos = 0;
            }
            if (helper_countdown > 0 && --helper_countdown == 0) {
                hret_valid = true;
                hret = pending.ret;
                hret_fault = pending.fault;
                helper_countdown = -1;
            }
            // The stack access of the next cycle: the running helper's next one, or the stray one.
            bool drive = false;
            Access next{};
            if (helper_countdown > 0 && script_pos < pending.script.size()) {
                next = pending.script[script_pos++];
                drive = true;
            } else if (stray && cycle == 0) {
                next = stray_;
                drive = true;
            }
            tick_high();
            core_->pkt_ready_i = ready(cycle + 3);
            core_->hmem_req_i = drive;
            core_->hmem_we_i = next.write;
            core_->hmem_addr_i = next.addr;
            core_->hmem_bytes_i = next.bytes;
            core_->hmem_wdata_i = next.wdata;
            in_flight = drive;
            flying = next;
            for (unsigned lane = 0; lane < lanes(); ++lane) {
                put64(core_->dbus_rdata_i, lane, rdata[lane]);
            }
            core_->dbus_fault_i = fault;
            core_->hret_valid_i = hret_valid;
            core_->hret_i = hret;
            core_->hret_fault_i = hret_fault;
            core_->hret_tail_i = hret_valid && pending.tail;
            core_->hret_entry_i = pending.entry;
            tick_low();
        }
        std::printf("timeout\n");
    }

  private:
    static uint64_t tagged(uint64_t offset) { return (kTagPacket << 60) | offset; }

    static unsigned lanes() { return kLanes; }

    // pkt_ready_i in the run's cycle `k` (start_i's is 1): the frames written before it.
    uint32_t ready(uint64_t k) const {
        if (!arrival_ || k > frames_) {
            return kPageEnd;
        }
        return static_cast<uint32_t>(kHeadroom + 32 * (k - 1));
    }

    // One data-bus access; false when it lies outside its region (a faulting write changes nothing).
    bool access(uint64_t addr, unsigned bytes, bool write, uint64_t wdata, uint64_t* rdata) {
        if ((addr >> 60) != kTagPacket) {
            return false;
        }
        uint64_t off = addr & ((uint64_t{1} << 60) - 1);
        if (off < meta_ || off + bytes > end_ || bytes > 8) {
            return false;
        }
        if (write) {
            for (unsigned i = 0; i < bytes; ++i) {
                frame_[off + i] = static_cast<uint8_t>(wdata >> (8 * i));
                written_[off + i] = true;
            }
        } else {
            uint64_t v = 0;
            for (unsigned i = 0; i < bytes; ++i) {
                bool there = off + i < ready_now_ || written_[off + i];
                v |= static_cast<uint64_t>(there ? frame_[off + i] : 0) << (8 * i);
            }
            *rdata = v;
        }
        return true;
    }

    void clear_answers() {
        for (unsigned lane = 0; lane < lanes(); ++lane) {
            put64(core_->dbus_rdata_i, lane, 0);
        }
        core_->dbus_fault_i = 0;
        core_->hret_valid_i = 0;
        core_->hret_i = 0;
        core_->hret_fault_i = 0;
        core_->hret_tail_i = 0;
        core_->hret_entry_i = 0;
        core_->hmem_req_i = 0;
        core_->hmem_we_i = 0;
        core_->hmem_addr_i = 0;
        core_->hmem_bytes_i = 0;
        core_->hmem_wdata_i = 0;
    }

    void tick_high() {
        core_->clk_i = 1;
        core_->eval();
    }

    void tick_low() {
        core_->clk_i = 0;
        core_->eval();
    }

    void tick() {
        tick_high();
        tick_low();
    }

    std::unique_ptr<Vsephirot> core_;
    std::vector<uint8_t> frame_;
    std::vector<bool> written_ = std::vector<bool>(kFrameBytes, false);
    uint64_t frames_ = 0;
    uint64_t ready_now_ = kPageEnd;
    bool arrival_ = false;
    Access stray_{};
    bool has_stray_ = false;
    std::vector<uint8_t> packet_ = std::vector<uint8_t>(64, 0);
    std::map<uint32_t, Helper> helpers_;
    uint64_t meta_ = 0, data_ = 0, end_ = 0;
    uint32_t entry_ = 0, ifindex_ = 0, rxq_ = 0;
};

bool parse_bytes(const char* text, std::vector<uint8_t>* out) {
    out->clear();
    size_t n = std::strlen(text);
    if (n == 0 || n % 2 != 0) {
        return false;
    }
    for (size_t i = 0; i < n; i += 2) {
        unsigned byte = 0;
        if (std::sscanf(text + i, "%2x", &byte) != 1) {
            return false;
        }
        out->push_back(static_cast<uint8_t>(byte));
    }
    return true;
}

}  // namespace

int main(int argc, char** argv) {
    auto context = std::make_unique<VerilatedContext>();
    context->commandArgs(argc, argv);
    Bench bench(context.get());

    static char line[1 << 16];
    unsigned long line_number = 0;
    while (std::fgets(line, sizeof line, stdin) != nullptr) {
        ++line_number;
        char command[16] = {};
        if (std::sscanf(line, "%15s", command) != 1) {
            continue;
        }
        const char* rest = line + std::strspn(line, " \t");
        rest += std::strlen(command);
        bool ok = true;
        if (std::strcmp(command, "imem") == 0) {
            unsigned bundle = 0, lane = 0;
            uint64_t slot = 0;
            ok = std::sscanf(rest, "%x %x %" SCNx64, &bundle, &lane, &slot) == 3 && lane < kMaxLanes;
            if (ok) {
                bench.write_slot(bundle, lane, slot);
            }
        } else if (std::strcmp(command, "entry") == 0) {
            unsigned entry = 0;
            ok = std::sscanf(rest, "%x", &entry) == 1;
            bench.set_entry(entry);
        } else if (std::strcmp(command, "md") == 0) {
            unsigned ifindex = 0, rxq = 0;
            ok = std::sscanf(rest, "%x %x", &ifindex, &rxq) == 2;
            bench.set_md(ifindex, rxq);
        } else if (std::strcmp(command, "frame") == 0) {
            char hex[1 << 15];
            std::vector<uint8_t> bytes;
            ok = std::sscanf(rest, "%32767s", hex) == 1 && parse_bytes(hex, &bytes) && bytes.size() <= 3520;
            if (ok) {
                bench.set_packet(bytes);
            }
        } else if (std::strcmp(command, "helper") == 0) {
            unsigned id = 0, latency = 0, fault = 0;
            uint64_t ret = 0;
            ok = std::sscanf(rest, "%x %x %" SCNx64 " %x", &id, &latency, &ret, &fault) == 4;
            bench.set_helper(id, Helper{latency, ret, fault != 0});
        } else if (std::strcmp(command, "tail") == 0) {
            unsigned id = 0, entry = 0;
            ok = std::sscanf(rest, "%x %x", &id, &entry) == 2;
            bench.set_tail(id, entry);
        } else if (std::strcmp(command, "hmem") == 0 || std::strcmp(command, "stray") == 0) {
            bool stray = command[0] == 's';
            unsigned id = 0, we = 0, bytes = 0;
            uint64_t addr = 0, wdata = 0;
            if (stray) {
                ok = std::sscanf(rest, "%x %" SCNx64 " %x %" SCNx64, &we, &addr, &bytes, &wdata) == 4;
            } else {
                ok = std::sscanf(rest, "%x %x %" SCNx64 " %x %" SCNx64, &id, &we, &addr, &bytes, &wdata) == 5;
            }
            ok = ok && bytes < 16;
            Access access{we != 0, addr, bytes, wdata};
            if (ok && stray) {
                bench.set_stray(access);
            } else if (ok) {
                bench.add_access(id, access);
            }
        } else if (std::strcmp(command, "arrival") == 0) {
            unsigned mode = 0;
            ok = std::sscanf(rest, "%x", &mode) == 1 && mode <= 1;
            bench.set_arrival(mode == 1);
        } else if (std::strcmp(command, "run") == 0) {
            bench.run();
        } else {
            ok = false;
        }
        if (!ok) {
            std::fprintf(stderr, "sephirot_tb: line %lu: cannot read \"%s\"\n", line_number, command);
            return 2;
        }
        std::fflush(stdout);
    }
    return 0;
}
