`default_nettype none
// eHDL map block part: the LRU lists of an LRU_HASH (or LRU_PERCPU_HASH) map, which pick the node a program's update
// takes and the entries it evicts, exactly as the reference machine (crates/maps/src/lru, a port of the kernel's
// kernel/bpf/bpf_lru_list.c) does for the common LRU on CPU 0.
//
// ehdl_hash_map owns the table (keys and valid bits, node n = slot n) and instantiates this block with LRU = 1. The
// lists are those of crates/maps: global active, inactive and free lists and CPU 0's local free and pending lists,
// doubly linked over the ENTRIES nodes with the five list heads as sentinels (nodes ENTRIES .. ENTRIES + 4), node
// kinds, reference bits, the active/inactive counts and the inactive rotation cursor. Reset builds the populated
// state (every node on the free list, node 0 last). target_free = clamp(ENTRIES / CPUS / 2, 1, 128): the kernel sizes
// it by its possible CPUs although the program runs on CPU 0 only; the other CPUs' local lists stay empty, so a steal
// finds nothing and an update that gets no node fails with ENOMEM, as hwxdp_maps does.
//
// Operations, one at a time: start_i in the idle state begins an update (flags_i 0 any, 1 noexist, 2 exist) or, with
// del_i, a delete of the key the table matched (exact_i, exact_slot_i: the key's valid entry, if any, in the table's
// current state, which the steps change). Every step of the kernel's loops is one cycle, moving at most one node, as
// in the hXDP RTL (rtl/sephirot/maps.sv, which this follows). When the outcome is known the block waits in the done
// state (done_o) with ok_o (the value is to be written at slot_o), slot_o and err_o (positive errno), until commit_i.
// Table changes come out as they happen: tbl_clr_o removes slot tbl_clr_slot_o from the table (eviction, delete, the
// old element of a replaced key), tbl_set_o enters the operation's key at tbl_set_slot_o. ref_set_i marks nodes
// referenced (program lookups that hit, applied last in the cycle).
//
// Updates follow htab_lru_map_update_elem (PERCPU = 0): a node is taken first, so even a failing update or a
// replacement may evict; on success the key moves to the new node, which is marked referenced, and the old element's
// node is freed. With PERCPU = 1, __htab_lru_percpu_map_update_elem: BPF_EXIST takes no node, a present key is updated
// in place (marked referenced) and the unused node is given back, whatever the number of CPUs (the generator sets it
// for LRU_PERCPU_HASH maps).
module ehdl_lru #(
  parameter integer ENTRIES = 4,  // max_entries (the nodes)
  parameter integer SW      = 2,  // slot index width, at least 1 and $clog2(ENTRIES)
  parameter integer CPUS    = 1,  // the possible CPUs target_free is sized for
  parameter integer PERCPU  = 0   // 1: LRU_PERCPU_HASH update semantics
) (
  input  logic               clk_i,
  input  logic               rst_ni,
  input  logic               start_i,
  input  logic               del_i,
  input  logic [1:0]         flags_i,
  input  logic               commit_i,
  input  logic               exact_i,
  input  logic [SW-1:0]      exact_slot_i,
  input  logic [ENTRIES-1:0] valid_i,
  input  logic [ENTRIES-1:0] ref_set_i,
  output logic               idle_o,
  output logic               done_o,
  output logic               ok_o,
  output logic [SW-1:0]      slot_o,
  output logic [7:0]         err_o,
  output logic               tbl_clr_o,
  output logic [SW-1:0]      tbl_clr_slot_o,
  output logic               tbl_set_o,
  output logic [SW-1:0]      tbl_set_slot_o
);

  localparam integer LN   = ENTRIES + 5;
  localparam integer LW   = $clog2(LN);
  localparam integer CW   = SW + 1;
  localparam integer HALF = ENTRIES / CPUS / 2;
  localparam integer TARGET = (HALF < 1) ? 1 : (HALF > 128) ? 128 : HALF;

  localparam [7:0] EEXIST = 8'd17;
  localparam [7:0] ENOENT = 8'd2;
  localparam [7:0] ENOMEM = 8'd12;
  localparam [7:0] NrScans = 8'd128;  // LOCAL_NR_SCANS
  localparam [7:0] Target = TARGET[7:0];

  // node kinds, also the offsets of the list heads from ENTRIES
  localparam [2:0] KActive       = 3'd0;
  localparam [2:0] KInactive     = 3'd1;
  localparam [2:0] KFree         = 3'd2;
  localparam [2:0] KLocalFree    = 3'd3;
  localparam [2:0] KLocalPending = 3'd4;

  localparam [LW-1:0] HAct   = LW'(ENTRIES + 0);
  localparam [LW-1:0] HInact = LW'(ENTRIES + 1);
  localparam [LW-1:0] HFree  = LW'(ENTRIES + 2);
  localparam [LW-1:0] HLFree = LW'(ENTRIES + 3);
  localparam [LW-1:0] HLPend = LW'(ENTRIES + 4);

  // steps
  localparam [3:0] LStart      = 4'd0;   // bpf_lru_pop_free: __local_list_pop_free
  localparam [3:0] LFlush      = 4'd1;   // __local_list_flush
  localparam [3:0] LRot        = 4'd2;   // __bpf_lru_list_rotate
  localparam [3:0] LRotA       = 4'd3;   // __bpf_lru_list_rotate_active
  localparam [3:0] LRotIInit   = 4'd4;
  localparam [3:0] LRotI       = 4'd5;   // __bpf_lru_list_rotate_inactive
  localparam [3:0] LFill       = 4'd6;   // free list to the local free list
  localparam [3:0] LShrinkInit = 4'd7;
  localparam [3:0] LShrink     = 4'd8;   // __bpf_lru_list_shrink_inactive
  localparam [3:0] LShrinkDone = 4'd9;
  localparam [3:0] LForce      = 4'd10;  // __bpf_lru_list_shrink: evict the oldest regardless
  localparam [3:0] LPop        = 4'd11;  // __local_list_pop_free again (the steal finds nothing)
  localparam [3:0] LDecide     = 4'd12;  // the update's outcome once the node is taken
  localparam [3:0] LDelete     = 4'd13;  // htab_lru_map_delete_elem
  localparam [3:0] LIdle       = 4'd14;
  localparam [3:0] LDone       = 4'd15;

  // node moves, as the kernel's helpers
  localparam [2:0] ANone        = 3'd0;
  localparam [2:0] AMove        = 3'd1;  // __bpf_lru_node_move
  localparam [2:0] AToLocalFree = 3'd2;  // __bpf_lru_node_move_to_free(local free list)
  localparam [2:0] AMoveIn      = 3'd3;  // __bpf_lru_node_move_in
  localparam [2:0] APending     = 3'd4;  // __local_list_add_pending
  localparam [2:0] APushFree    = 3'd5;  // bpf_lru_push_free

  // Flat vectors (node i at [i*W +: W]): Verilator cannot reset a long unpacked array in a loop of delayed
  // assignments, and Yosys 0.23 reads no multi-dimensional packed arrays.
  logic [LN*LW-1:0]      lnext_q;
  logic [LN*LW-1:0]      lprev_q;
  logic [ENTRIES*3-1:0]  lkind_q;
  logic [ENTRIES-1:0] lref_q;
  logic [CW-1:0]      lact_q;
  logic [CW-1:0]      linact_q;
  logic [LW-1:0]      lcur_q;               // next_inactive_rotation
  logic [3:0]         lst_q;
  logic [LW-1:0]      lnode_q;
  logic [LW-1:0]      lfirst_q;
  logic [LW-1:0]      llast_q;
  logic [LW-1:0]      lnxt_q;
  logic [LW-1:0]      llist_q;
  logic [SW-1:0]      lgot_q;               // the node taken for the update
  logic               lgot_v_q;             // a node was taken (PERCPU BPF_EXIST takes none)
  logic [7:0]         li_q;
  logic [7:0]         lmoved_q;
  logic [7:0]         lshrunk_q;
  logic [1:0]         flags_q;
  logic               ok_q;
  logic [SW-1:0]      slot_q;
  logic [7:0]         err_q;

  // One step: which node moves how, and what the step settles.
  logic [2:0]    a_op;
  logic [SW-1:0] a_node;
  logic [2:0]    a_to;
  logic          l_done;
  logic          l_ok;
  logic [SW-1:0] l_slot;
  logic [7:0]    l_err;
  logic          l_ref;                      // set the reference bit of l_ref_node
  logic [SW-1:0] l_ref_node;
  logic          l_cur_set;
  logic [LW-1:0] l_cur;
  logic [3:0]    lst_d;
  logic [LW-1:0] lnode_d;
  logic [LW-1:0] lfirst_d;
  logic [LW-1:0] llast_d;
  logic [LW-1:0] lnxt_d;
  logic [LW-1:0] llist_d;
  logic [SW-1:0] lgot_d;
  logic          lgot_v_d;
  logic [7:0]    li_d;
  logic [7:0]    lmoved_d;
  logic [7:0]    lshrunk_d;
  logic [SW-1:0] e;
  logic [LW-1:0] n;
  logic [LW-1:0] n1;
  logic          bad;

  assign e = lnode_q[SW-1:0];

  always_comb begin : lru_step
    n              = '0;
    n1             = '0;
    bad            = 1'b0;
    a_op           = ANone;
    a_node         = e;
    a_to           = KActive;
    l_done         = 1'b0;
    l_ok           = 1'b0;
    l_slot         = lgot_q;
    l_err          = 8'd0;
    l_ref          = 1'b0;
    l_ref_node     = lgot_q;
    l_cur_set      = 1'b0;
    l_cur          = lnxt_q;
    lst_d          = lst_q;
    lnode_d        = lnode_q;
    lfirst_d       = lfirst_q;
    llast_d        = llast_q;
    lnxt_d         = lnxt_q;
    llist_d        = llist_q;
    lgot_d         = lgot_q;
    lgot_v_d       = lgot_v_q;
    li_d           = li_q;
    lmoved_d       = lmoved_q;
    lshrunk_d      = lshrunk_q;
    tbl_clr_o      = 1'b0;
    tbl_clr_slot_o = e;
    tbl_set_o      = 1'b0;
    tbl_set_slot_o = lgot_q;
    case (lst_q)
      LIdle: begin
        if (start_i) begin
          lgot_v_d = 1'b0;
          if (del_i) begin
            lst_d = LDelete;
          end else if (PERCPU == 1 && flags_i == 2'd2) begin
            lst_d = LDecide;
          end else begin
            lst_d = LStart;
          end
        end
      end
      LStart, LPop: begin
        n = lnext_q[(HLFree)*LW +: LW];
        if (n != HLFree) begin
          a_op     = APending;
          a_node   = n[SW-1:0];
          lgot_d   = n[SW-1:0];
          lgot_v_d = 1'b1;
          lst_d    = LDecide;
        end else if (lst_q == LStart) begin
          lmoved_d = 8'd0;
          lst_d    = LFlush;
        end else begin
          // The steal from the CPUs' local lists finds them empty: CPU 0's were just flushed, the others unused.
          l_done = 1'b1;
          l_err  = ENOMEM;
        end
      end
      LFlush: begin
        n = lprev_q[(HLPend)*LW +: LW];
        if (n != HLPend) begin
          a_op   = AMoveIn;
          a_node = n[SW-1:0];
          a_to   = lref_q[n[SW-1:0]] ? KActive : KInactive;
        end else begin
          lst_d = LRot;
        end
      end
      LRot: begin
        if (linact_q < lact_q) begin
          lfirst_d = lnext_q[(HAct)*LW +: LW];
          lnode_d  = lprev_q[(HAct)*LW +: LW];
          li_d     = 8'd0;
          lst_d    = LRotA;
        end else begin
          lst_d = LRotIInit;
        end
      end
      LRotA: begin
        if (lnode_q == HAct) begin
          lst_d = LRotIInit;
        end else begin
          a_op    = AMove;
          a_to    = lref_q[e] ? KActive : KInactive;
          li_d    = li_q + 8'd1;
          lnode_d = lprev_q[(lnode_q)*LW +: LW];
          if (li_q + 8'd1 == NrScans || lnode_q == lfirst_q) lst_d = LRotIInit;
        end
      end
      LRotIInit: begin
        if (lnext_q[(HInact)*LW +: LW] == HInact) begin
          lst_d = LFill;
        end else begin
          n1      = lnext_q[(lcur_q)*LW +: LW];
          llast_d = (n1 == HInact) ? lnext_q[(n1)*LW +: LW] : n1;
          lnode_d = lcur_q;
          lnxt_d  = HInact;
          li_d    = 8'd0;
          lst_d   = LRotI;
        end
      end
      LRotI: begin
        if (li_q >= NrScans) begin
          l_cur_set = 1'b1;
          l_cur     = lnxt_q;
          lst_d     = LFill;
        end else if (lnode_q == HInact) begin
          lnode_d = lprev_q[(lnode_q)*LW +: LW];
        end else begin
          lnxt_d = lprev_q[(lnode_q)*LW +: LW];
          if (lref_q[e]) begin
            a_op = AMove;
            a_to = KActive;
          end
          if (lnode_q == llast_q) begin
            l_cur_set = 1'b1;
            l_cur     = lprev_q[(lnode_q)*LW +: LW];
            lst_d     = LFill;
          end else begin
            lnode_d = lprev_q[(lnode_q)*LW +: LW];
            li_d    = li_q + 8'd1;
          end
        end
      end
      LFill: begin
        n = lnext_q[(HFree)*LW +: LW];
        if (n == HFree) begin
          lst_d = (lmoved_q < Target) ? LShrinkInit : LPop;
        end else begin
          a_op     = AToLocalFree;
          a_node   = n[SW-1:0];
          lmoved_d = lmoved_q + 8'd1;
          if (lmoved_q + 8'd1 == Target) lst_d = LPop;
        end
      end
      LShrinkInit: begin
        lnode_d   = lprev_q[(HInact)*LW +: LW];
        lshrunk_d = 8'd0;
        li_d      = 8'd0;
        lst_d     = LShrink;
      end
      LShrink: begin
        if (lnode_q == HInact) begin
          lst_d = LShrinkDone;
        end else begin
          lnode_d = lprev_q[(lnode_q)*LW +: LW];
          li_d    = li_q + 8'd1;
          if (li_q + 8'd1 == NrScans) lst_d = LShrinkDone;
          if (lref_q[e]) begin
            a_op = AMove;
            a_to = KActive;
          end else if (valid_i[e]) begin
            tbl_clr_o = 1'b1;
            a_op      = AToLocalFree;
            lshrunk_d = lshrunk_q + 8'd1;
            if (lshrunk_q + 8'd1 == Target - lmoved_q) lst_d = LPop;
          end
        end
      end
      LShrinkDone: begin
        if (lshrunk_q != 8'd0) begin
          lst_d = LPop;
        end else begin
          llist_d = (lnext_q[(HInact)*LW +: LW] == HInact) ? HAct : HInact;
          lnode_d = (lnext_q[(HInact)*LW +: LW] == HInact) ? lprev_q[(HAct)*LW +: LW] : lprev_q[(HInact)*LW +: LW];
          lst_d   = LForce;
        end
      end
      LForce: begin
        if (lnode_q == llist_q) begin
          lst_d = LPop;
        end else if (valid_i[e]) begin
          tbl_clr_o = 1'b1;
          a_op      = AToLocalFree;
          lst_d     = LPop;
        end else begin
          lnode_d = lprev_q[(lnode_q)*LW +: LW];
        end
      end
      LDecide: begin
        a_node = lgot_q;
        bad    = (exact_i && flags_q == 2'd1) || (!exact_i && flags_q == 2'd2);
        l_done = 1'b1;
        if (bad) begin
          l_err = exact_i ? EEXIST : ENOENT;
          if (lgot_v_q) a_op = APushFree;
        end else if (PERCPU == 1 && exact_i) begin
          // in place: the old element stays, marked referenced; the node taken goes back
          l_ok       = 1'b1;
          l_slot     = exact_slot_i;
          l_ref      = 1'b1;
          l_ref_node = exact_slot_i;
          if (lgot_v_q) a_op = APushFree;
        end else begin
          l_ok      = 1'b1;
          tbl_set_o = 1'b1;
          if (exact_i) begin
            // the key moves to the new node: the old element leaves the table and its node is freed
            tbl_clr_o      = 1'b1;
            tbl_clr_slot_o = exact_slot_i;
            a_op           = APushFree;
            a_node         = exact_slot_i;
            l_ref          = PERCPU == 0;
          end
        end
      end
      LDelete: begin
        l_done = 1'b1;
        l_slot = exact_slot_i;
        if (!exact_i) begin
          l_err = ENOENT;
        end else begin
          tbl_clr_o      = 1'b1;
          tbl_clr_slot_o = exact_slot_i;
          a_op           = APushFree;
          a_node         = exact_slot_i;
        end
      end
      default: begin
        // LDone: the outcome waits for the port's stage to move
        if (commit_i) lst_d = LIdle;
      end
    endcase
    if (l_done) lst_d = LDone;
  end

  assign idle_o = lst_q == LIdle;
  assign done_o = lst_q == LDone;
  assign ok_o   = ok_q;
  assign slot_o = slot_q;
  assign err_o  = err_q;

  // The move's effect on kinds, reference bits, counts and the cursor.
  logic          mv_en;
  logic [LW-1:0] mv_x;
  logic [LW-1:0] mv_h;
  logic [LW-1:0] mv_n;                       // the node that follows x once it is added after h
  logic [ENTRIES-1:0] lref_d;
  logic          k_en;
  logic [2:0]    k_val;
  logic          r_clr;
  logic          c_step;
  logic          inc_act;
  logic          inc_inact;
  logic          dec_act;
  logic          dec_inact;
  logic [2:0]    from;
  logic [2:0]    to;

  always_comb begin : lru_apply
    from      = lkind_q[(a_node)*3 +: 3];
    to        = (a_op == APushFree) ? KFree : a_to;
    mv_en     = 1'b0;
    mv_x      = LW'(a_node);
    mv_h      = HAct + LW'(to);
    k_en      = 1'b0;
    k_val     = to;
    r_clr     = 1'b0;
    c_step    = 1'b0;
    inc_act   = 1'b0;
    inc_inact = 1'b0;
    dec_act   = 1'b0;
    dec_inact = 1'b0;
    case (a_op)
      AMove, APushFree: begin
        if (a_op == APushFree && from == KLocalPending) begin
          k_en  = 1'b1;
          k_val = KLocalFree;
          r_clr = 1'b1;
          mv_en = 1'b1;
          mv_h  = HLFree;
        end else if ((a_op == AMove && from <= KFree) || (a_op == APushFree && from <= KInactive)) begin
          if (from != to) begin
            k_en      = 1'b1;
            dec_act   = from == KActive;
            dec_inact = from == KInactive;
            inc_act   = to == KActive;
            inc_inact = to == KInactive;
          end
          r_clr  = 1'b1;
          c_step = 1'b1;
          mv_en  = 1'b1;
        end
      end
      AToLocalFree: begin
        if (from <= KFree) begin
          c_step    = 1'b1;
          dec_act   = from == KActive;
          dec_inact = from == KInactive;
          k_en      = 1'b1;
          k_val     = KLocalFree;
          mv_en     = 1'b1;
          mv_h      = HLFree;
        end
      end
      AMoveIn: begin
        if (from >= KLocalFree) begin
          inc_act   = to == KActive;
          inc_inact = to == KInactive;
          k_en      = 1'b1;
          r_clr     = 1'b1;
          mv_en     = 1'b1;
        end
      end
      APending: begin
        k_en  = 1'b1;
        k_val = KLocalPending;
        r_clr = 1'b1;
        mv_en = 1'b1;
        mv_h  = HLPend;
      end
      default: begin
      end
    endcase
    // list_move(x, h): list_del then list_add right after h; when x already follows h it stays put.
    mv_n = (mv_h == lprev_q[(mv_x)*LW +: LW]) ? lnext_q[(mv_x)*LW +: LW] : lnext_q[(mv_h)*LW +: LW];
    lref_d = lref_q;
    if (r_clr) lref_d[a_node] = 1'b0;
    if (l_ref) lref_d[l_ref_node] = 1'b1;
    lref_d = lref_d | ref_set_i;
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      // bpf_lru_populate: every node added at the head of the free list in turn (node 0 ends up last)
      for (integer i = 0; i < LN; i = i + 1) begin
        lnext_q[(i)*LW +: LW] <= LW'(i);
        lprev_q[(i)*LW +: LW] <= LW'(i);
      end
      for (integer i = 0; i < ENTRIES; i = i + 1) begin
        lnext_q[(i)*LW +: LW]  <= (i == 0) ? HFree : LW'(i - 1);
        lprev_q[(i)*LW +: LW]  <= (i == ENTRIES - 1) ? HFree : LW'(i + 1);
        lkind_q[(i)*3 +: 3]  <= KFree;
      end
      lnext_q[(HFree)*LW +: LW] <= LW'(ENTRIES - 1);
      lprev_q[(HFree)*LW +: LW] <= LW'(0);
      lref_q    <= '0;
      lact_q    <= '0;
      linact_q  <= '0;
      lcur_q    <= HInact;
      lst_q     <= LIdle;
      lnode_q   <= '0;
      lfirst_q  <= '0;
      llast_q   <= '0;
      lnxt_q    <= '0;
      llist_q   <= '0;
      lgot_q    <= '0;
      lgot_v_q  <= 1'b0;
      li_q      <= '0;
      lmoved_q  <= '0;
      lshrunk_q <= '0;
      flags_q   <= '0;
      ok_q      <= 1'b0;
      slot_q    <= '0;
      err_q     <= '0;
    end else begin
      lst_q     <= lst_d;
      lnode_q   <= lnode_d;
      lfirst_q  <= lfirst_d;
      llast_q   <= llast_d;
      lnxt_q    <= lnxt_d;
      llist_q   <= llist_d;
      lgot_q    <= lgot_d;
      lgot_v_q  <= lgot_v_d;
      li_q      <= li_d;
      lmoved_q  <= lmoved_d;
      lshrunk_q <= lshrunk_d;
      if (lst_q == LIdle && start_i) begin
        flags_q <= flags_i;
      end
      if (l_done) begin
        ok_q   <= l_ok;
        slot_q <= l_slot;
        err_q  <= l_err;
      end
      if (mv_en) begin
        lnext_q[(lprev_q[(mv_x)*LW +: LW])*LW +: LW] <= lnext_q[(mv_x)*LW +: LW];
        lprev_q[(lnext_q[(mv_x)*LW +: LW])*LW +: LW] <= lprev_q[(mv_x)*LW +: LW];
        lprev_q[(mv_x)*LW +: LW]          <= mv_h;
        lnext_q[(mv_x)*LW +: LW]          <= mv_n;
        lprev_q[(mv_n)*LW +: LW]          <= mv_x;
        lnext_q[(mv_h)*LW +: LW]          <= mv_x;
      end
      if (k_en) lkind_q[(a_node)*3 +: 3] <= k_val;
      lref_q <= lref_d;
      if (inc_act) lact_q <= lact_q + CW'(1);
      if (dec_act && lact_q != '0) lact_q <= lact_q - CW'(1);
      if (inc_inact) linact_q <= linact_q + CW'(1);
      if (dec_inact && linact_q != '0) linact_q <= linact_q - CW'(1);
      if (c_step && lcur_q == mv_x) lcur_q <= lprev_q[(mv_x)*LW +: LW];
      if (l_cur_set) lcur_q <= l_cur;
    end
  end

endmodule
