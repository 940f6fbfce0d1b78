# hwxdp: `make demo` runs the main job on the bundled examples, `make test` runs every test.
CARGO ?= cargo
HWXDP := target/release/hwxdp
DEMO_PROGRAM ?= firewall
DEMO := build/demo

.PHONY: all deps build examples demo test clean

all: build examples

deps:
	@scripts/install-deps.sh

build: deps
	$(CARGO) build --release --workspace

examples: deps
	$(MAKE) -C examples/xdp
	$(MAKE) -C examples/dpi
	$(MAKE) -C examples/ebpflow

# What `hwxdp run` and `verify` need besides the program, as scripts/workload.sh gives them: the trace `hwxdp gen`
# wrote, its map preloads (maps.json) and route table (routes.json, for bpf_fib_lookup) when it wrote them, and the
# arrival interface and receive queues rxq_counter counts by. Sets the shell variable `args`.
DEMO_OBJ = build/examples/xdp/$(DEMO_PROGRAM).o
DEMO_DIR = $(DEMO)/$(DEMO_PROGRAM)
demo_args = args="--pcap $(DEMO_DIR)/trace.pcap"; \
	if [ -f $(DEMO_DIR)/maps.json ]; then args="$$args --maps $(DEMO_DIR)/maps.json"; fi; \
	if [ -f $(DEMO_DIR)/routes.json ]; then args="$$args --routes $(DEMO_DIR)/routes.json"; fi; \
	if [ "$(DEMO_PROGRAM)" = rxq_counter ]; then args="$$args --ifindex 5 --rx-queues 128"; fi

demo: build examples
	@test -f $(DEMO_OBJ) || { echo "no example $(DEMO_PROGRAM): pick one of $(notdir $(basename $(wildcard build/examples/xdp/*.o)))" >&2; exit 1; }
	@echo "== hwxdp disasm $(DEMO_OBJ) (first lines)"
	@$(HWXDP) disasm $(DEMO_OBJ) | head -n 12
	@echo "== hwxdp gen: a trace that reaches every path of $(DEMO_PROGRAM)"
	rm -rf $(DEMO_DIR)
	$(HWXDP) gen $(DEMO_OBJ) -o $(DEMO_DIR)
	@echo "== hwxdp run: the reference machine"
	@$(demo_args); cmd="$(HWXDP) run $(DEMO_OBJ) $$args -o $(DEMO_DIR)/run --dump-maps"; echo "$$cmd"; $$cmd
	@echo "== hwxdp verify: the same trace through the Linux kernel and the reference machine"
	@$(demo_args); cmd="$(HWXDP) verify $(DEMO_OBJ) $$args"; echo "$$cmd"; $$cmd
	@echo "== written: one pcap per verdict, stats.json (verdicts, instructions per packet, paths, coverage), packets.jsonl (one line a packet), maps.json"
	@ls $(DEMO_DIR)/run
	@echo "== hwxdp p4c + stf: a P4 LPM router compiled to XDP, its STF test on the reference machine and the kernel"
	$(HWXDP) p4c examples/p4/xdp_lpm_router.p4 -o $(DEMO)/xdp_lpm_router.o --emit-c $(DEMO)/xdp_lpm_router.c
	$(HWXDP) stf examples/p4/xdp_lpm_router.p4 examples/p4/xdp_lpm_router.stf
	$(HWXDP) stf examples/p4/xdp_lpm_router.p4 examples/p4/xdp_lpm_router.stf --backend kernel

test: deps examples
	$(CARGO) test --workspace

clean:
	$(CARGO) clean
	rm -rf build
