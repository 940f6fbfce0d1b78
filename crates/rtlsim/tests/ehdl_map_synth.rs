//! The eHDL map blocks synthesize as banks: however many rows or slots a map has, Yosys works on one bank module
//! of each shape (a full bank and the last, partial one) and instantiates it, instead of one flat block whose
//! logic grows with the map (which took ABC hours for the examples' 1-16 KB maps). The FIB block's route table
//! elaborates without run-time shifters (with them Yosys' front end never finished on fib_forward).

mod common;

use hwxdp_rtlsim::{rtl_files, run_synthesis, sources_of, SynthJob};
use std::path::PathBuf;
use std::process::Command;

/// The `design hierarchy` section of a Yosys log: (module, instances) for every module whose name holds `name`.
fn instances(log: &str, name: &str) -> Vec<(String, u64)> {
    let section = log
        .rsplit_once("=== design hierarchy ===")
        .map(|(_, rest)| rest)
        .unwrap_or_else(|| panic!("no design hierarchy in the log"));
    section
        .lines()
        .take_while(|line| !line.contains("Number of wires"))
        .filter(|line| line.contains(name))
        .filter_map(|line| {
            let mut words = line.split_whitespace();
            let module = words.next()?.to_string();
            let count = words.next()?.parse().ok()?;
            Some((module, count))
        })
        .collect()
}

#[test]
fn map_blocks_synthesize_one_bank_module_per_shape() {
    // A 300-byte array (38 rows: banks of 16, 16 and 6) with one port, and a 37-entry hash map's keys (slots in
    // banks of 16, 16 and 5) with one port; more ports only make each bank larger.
    let top = "\
module map_blocks (
  input  logic         clk_i,
  input  logic         rst_ni,
  input  logic         we_i,
  input  logic [2:0]   op_i,
  input  logic [8:0]   addr_i,
  input  logic [63:0]  wdata_i,
  input  logic [7:0]   wmask_i,
  output logic [63:0]  rdata_o,
  input  logic         kind_i,
  input  logic         en_i,
  input  logic [47:0]  key_i,
  output logic         hit_o,
  output logic [5:0]   slot_o,
  output logic [7:0]   err_o,
  output logic [63:0]  host_rdata_o
);
  logic [63:0] mem_host;
  logic [63:0] cam_host;
  logic        busy;
  logic        phit;
  logic [5:0]  pslot;
  ehdl_map_mem #(.BYTES(300), .NP(1), .AW(9)) u_mem (
    .clk_i(clk_i), .rst_ni(rst_ni), .we_i(we_i), .op_i(op_i), .addr_i(addr_i), .wdata_i(wdata_i),
    .wmask_i(wmask_i), .rdata_o(rdata_o), .host_we_i(1'b0), .host_addr_i(9'd0), .host_wdata_i(64'd0),
    .host_wmask_i(8'd0), .host_rdata_o(mem_host));
  ehdl_hash_map #(.ENTRIES(37), .KEY_BYTES(6), .NP(1), .SW(6), .AW(10)) u_cam (
    .clk_i(clk_i), .rst_ni(rst_ni), .kind_i(kind_i), .del_i(1'b0), .en_i(en_i), .req_i(1'b0), .key_i(key_i),
    .flags_i(2'd0), .hit_o(hit_o), .slot_o(slot_o), .err_o(err_o), .busy_o(busy), .probe_key_i(key_i),
    .probe_hit_o(phit), .probe_slot_o(pslot), .host_we_i(1'b0), .host_valid_i(1'b0), .host_addr_i(10'd0),
    .host_wdata_i(64'd0), .host_wmask_i(8'd0), .host_rdata_o(cam_host));
  assign host_rdata_o = mem_host ^ cam_host ^ {56'd0, busy, phit, pslot};
endmodule
";
    // The wrapper and, from the embedded RTL, the files of the modules it instantiates.
    let mut files: Vec<(&str, &str)> = vec![("map_blocks.sv", top)];
    files.extend(rtl_files().iter().map(|f| (f.path, f.text)));
    let sources = sources_of(&files, "map_blocks")
        .expect("map_blocks is defined")
        .into_iter()
        .map(|(path, text)| {
            let path = if path == "map_blocks.sv" {
                path.to_string()
            } else {
                format!("rtl/{path}")
            };
            (path, text.to_string())
        })
        .collect();
    let log = std::env::temp_dir().join(format!("hwxdp-map-blocks-{}.log", std::process::id()));
    let job = SynthJob {
        top: "map_blocks".into(),
        sources,
        params: Vec::new(),
        log: log.clone(),
        yosys: PathBuf::from("yosys"),
    };
    let report = run_synthesis(&job, &mut |_| {}).unwrap_or_else(|e| panic!("{e}"));
    let text = std::fs::read_to_string(&log).expect("yosys log");
    let _ = std::fs::remove_file(&log);
    for (bank, what) in [
        ("ehdl_map_bank", "array rows"),
        ("ehdl_cam_bank", "CAM slots"),
    ] {
        let found = instances(&text, bank);
        let mut counts: Vec<u64> = found.iter().map(|(_, n)| *n).collect();
        counts.sort_unstable();
        assert_eq!(
            counts,
            vec![1, 2],
            "{what}: two full banks of one module and a partial one of another, got {found:?}"
        );
    }
    // The array's rows are flip-flops (38 * 64, of which the 4 bytes past the map are never written but kept by a
    // bank that does not know), the keys another 37 * 48 plus 37 valid bits.
    assert!(
        report.resources.ff >= 38 * 64 + 37 * 49,
        "{} flip-flops",
        report.resources.ff
    );
}

/// Runs a Yosys script on `files` of `rtl/ehdl/`; panics with `why` and Yosys' output when it fails.
fn yosys_asserts(files: &[&str], passes: &str, why: &str) {
    let dir = common::workspace_root().join("rtl/ehdl");
    let paths: Vec<String> = files
        .iter()
        .map(|f| dir.join(f).display().to_string())
        .collect();
    let script = format!("read_verilog -sv {}; {passes}", paths.join(" "));
    let out = Command::new("yosys")
        .args(["-q", "-p", &script])
        .output()
        .unwrap_or_else(|e| panic!("yosys (Debian package yosys): {e}"));
    assert!(
        out.status.success(),
        "{why}:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn fib_table_host_writes_elaborate_without_shifters() {
    // A byte written at a run-time position of a table entry (`r_q[i][64 * word + 8 * b +: 8]`) elaborates to a
    // shifter per byte and entry: minutes of Yosys' front end even for this small table, and no end for
    // fib_forward's. Writes at constant positions, selected by comparing the host word address, need none.
    yosys_asserts(
        &["ehdl_fib.sv"],
        "chparam -set ROUTES 4 -set DEVICES 2 -set NEIGHBORS 4 ehdl_fib; hierarchy -top ehdl_fib; proc; \
         select -assert-none t:$shift t:$shiftx",
        "ehdl_fib has run-time shifters after proc",
    );
}

#[test]
fn ring_words_elaborate_one_process_each_without_shifters() {
    // One process computing the whole ring's next state gave Yosys' proc a decision tree over every word, record
    // word and byte: 34 s of CPU at 512 bytes, more than an hour at firewall's 4 KB. A process per word (16 here,
    // plus the ports' and the host's) keeps each tree to one word, and records are placed by comparing each word's
    // distance from the record's start with constants, not by a run-time index.
    yosys_asserts(
        &["ehdl_ringbuf.sv"],
        "chparam -set SIZE 128 -set MAXW 2 -set AW 10 ehdl_ringbuf; hierarchy -top ehdl_ringbuf; \
         select -assert-min 16 p:*; proc; select -assert-none t:$shift t:$shiftx",
        "ehdl_ringbuf needs a process per ring word and no run-time shifters",
    );
}

#[test]
fn hash_map_port_chain_elaborates_whole_vectors_not_a_statement_per_slot() {
    // Each port sees the slots the writers before it wrote, and each port's lowest-slot choice encodes a one-hot
    // vector. Written as a loop over the slots per writer and port, and per index bit inside lowest(), Yosys' front
    // end unrolled NP * NP * ENTRIES comparisons and SW * ENTRIES ORs per call: 1082 $eq and 1495 $or cells here,
    // and more than an hour for nat's five-port 1024-entry map. One-hot vectors and constant index-bit masks leave
    // 326 and 16.
    yosys_asserts(
        &["ehdl_cam_bank.sv", "ehdl_lru.sv", "ehdl_hash_map.sv"],
        "chparam -set ENTRIES 64 -set NP 3 -set KEY_BYTES 8 -set SW 6 -set AW 12 ehdl_hash_map; \
         hierarchy -top ehdl_hash_map; proc; cd ehdl_hash_map; select -assert-max 400 t:$eq; \
         select -assert-max 100 t:$or",
        "ehdl_hash_map unrolls a statement per slot for each writer, port or index bit",
    );
}

#[test]
fn hash_map_decodes_slots_without_shifters_for_share_to_weigh() {
    // Yosys' share pass tries to merge every pair of variable shifts, weighing the conditions their results are
    // used under; behind the banks' per-slot, per-byte key writes those ran to 166k patterns and 351 s of CPU for
    // a 64-entry five-port map, and hours for nat's 1024-entry ones. Slot decoders built from index-bit masks and
    // host byte shifts in constant steps leave share nothing to weigh (13 s). The LRU lists are left as they are.
    for lpm in [0, 1] {
        yosys_asserts(
            &["ehdl_cam_bank.sv", "ehdl_lru.sv", "ehdl_hash_map.sv"],
            &format!(
                "chparam -set ENTRIES 40 -set NP 3 -set KEY_BYTES 6 -set SW 6 -set AW 10 -set LPM {lpm} \
                 ehdl_hash_map; hierarchy -top ehdl_hash_map; proc; flatten; opt_expr; \
                 select -assert-none t:$shl t:$shr t:$sshl t:$sshr t:$shift t:$shiftx t:$mul t:$div t:$mod"
            ),
            &format!("ehdl_hash_map (LPM {lpm}) has cells Yosys' share pass would weigh"),
        );
    }
}

/// Synthesizes `ehdl_map_ram` alone at `params`; returns the report.
fn map_ram_synthesis(params: &[(&str, u64)], tag: &str) -> hwxdp_rtlsim::SynthReport {
    let files: Vec<(&str, &str)> = rtl_files().iter().map(|f| (f.path, f.text)).collect();
    let sources = sources_of(&files, "ehdl_map_ram")
        .expect("ehdl_map_ram is defined")
        .into_iter()
        .map(|(path, text)| (format!("rtl/{path}"), text.to_string()))
        .collect();
    let job = SynthJob {
        top: "ehdl_map_ram".into(),
        sources,
        params: params.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
        log: common::target_dir().join(format!("ehdl-map-ram-{tag}-synth.log")),
        yosys: PathBuf::from("yosys"),
    };
    run_synthesis(&job, &mut |_| {}).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn a_ram_map_block_becomes_block_ram_not_flip_flops() {
    // firewall's flow counters: 8 KB (1024 rows: 512 even, 512 odd), one writing and two reading ports. Three
    // copies (two ports and the host) of both halves, 512 x 64 bits each: six RAMB36E2 (or twelve RAMB18E2).
    // Flip-flops are the delay register, the host's address and the RAMs' output registers if Yosys keeps them
    // outside: far below the 65,536 of a register block.
    let report = map_ram_synthesis(
        &[
            ("BYTES", 8192),
            ("NP", 2),
            ("AW", 14),
            ("WRITES", 0b01),
            ("READS", 0b11),
        ],
        "8k",
    );
    let r = &report.resources;
    assert!(
        2 * r.ramb36 + r.ramb18 >= 12,
        "RAMB36 {} RAMB18 {}: {:?}",
        r.ramb36,
        r.ramb18,
        report.cells
    );
    assert!(r.ff < 2000, "{} flip-flops: {:?}", r.ff, report.cells);
}
