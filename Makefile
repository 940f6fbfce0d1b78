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

demo: build examples
	@echo "== hwxdp disasm build/examples/xdp/$(DEMO_PROGRAM).o (first lines)"
	@$(HWXDP) disasm build/examples/xdp/$(DEMO_PROGRAM).o | head -n 12
	@echo "== hwxdp gen: a trace that reaches every path of $(DEMO_PROGRAM)"
	$(HWXDP) gen build/examples/xdp/$(DEMO_PROGRAM).o -o $(DEMO)/$(DEMO_PROGRAM)
	@echo "== hwxdp run: the reference machine"
	$(HWXDP) run build/examples/xdp/$(DEMO_PROGRAM).o --pcap $(DEMO)/$(DEMO_PROGRAM)/trace.pcap \
		$$(test -f $(DEMO)/$(DEMO_PROGRAM)/maps.json && echo --maps $(DEMO)/$(DEMO_PROGRAM)/maps.json) \
		-o $(DEMO)/$(DEMO_PROGRAM)/run --dump-maps
	@echo "== hwxdp verify: the same trace through the Linux kernel and the reference machine"
	$(HWXDP) verify build/examples/xdp/$(DEMO_PROGRAM).o --pcap $(DEMO)/$(DEMO_PROGRAM)/trace.pcap \
		$$(test -f $(DEMO)/$(DEMO_PROGRAM)/maps.json && echo --maps $(DEMO)/$(DEMO_PROGRAM)/maps.json)
	@echo "== written: one pcap per verdict, stats.json (verdicts, instructions per packet, paths, coverage), maps.json"
	@ls $(DEMO)/$(DEMO_PROGRAM)/run
	@echo "== hwxdp p4c + stf: a P4 LPM router compiled to XDP, its STF test on the reference machine and the kernel"
	$(HWXDP) p4c examples/p4/xdp_lpm_router.p4 -o $(DEMO)/xdp_lpm_router.o --emit-c $(DEMO)/xdp_lpm_router.c
	$(HWXDP) stf examples/p4/xdp_lpm_router.p4 examples/p4/xdp_lpm_router.stf
	$(HWXDP) stf examples/p4/xdp_lpm_router.p4 examples/p4/xdp_lpm_router.stf --backend kernel

test: deps examples
	$(CARGO) test --workspace

clean:
	$(CARGO) clean
	rm -rf build
