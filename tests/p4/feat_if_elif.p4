/* #if and #elif with C expressions: macros, defined(), arithmetic, nesting; inactive branches are not evaluated. */
#include <xdp_model.p4>

#define MODE 2
#define SHIFTED (MODE << 1)

#if MODE == 1
#define NEW_TYPE 0x1111
#elif MODE == 2 && SHIFTED == 4 && defined(HWXDP_XDP_MODEL_P4) && !defined NOT_DEFINED
#  if 0
#    if 1 / 0
#    endif
#  elif MODE > 1 ? UNDEFINED_IS_ZERO == 0 : 0
#define NEW_TYPE 0x2222
#  endif
#else
#error this branch is not taken
#endif

header eth_h { bit<48> dst; bit<48> src; bit<16> type_; }
struct hdrs_t { eth_h eth; }

parser prs(packet_in p, out hdrs_t h) {
    state start { p.extract(h.eth); transition accept; }
}

control sw(inout hdrs_t h, in xdp_input xin, out xdp_output xout) {
    apply {
        h.eth.type_ = NEW_TYPE;
        xout.output_port = 0;
        xout.output_action = xdp_action.XDP_TX;
    }
}

control dep(in hdrs_t h, packet_out p) {
    apply { p.emit(h.eth); }
}

xdp(prs(), sw(), dep()) main;
