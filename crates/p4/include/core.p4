/* hwxdp bundled core library: the declarations every P4-16 program builds on. */
#ifndef HWXDP_CORE_P4
#define HWXDP_CORE_P4

/* Errors a parser can signal; programs may add their own with another error declaration. */
error {
    NoError,
    PacketTooShort,
    NoMatch,
    StackOutOfBounds,
    HeaderTooShort,
    ParserTimeout,
    ParserInvalidArgument
}

/* The packet being parsed, read front to back. */
extern packet_in {
    /* Reads a fixed-size header and marks it valid. */
    void extract<T>(out T hdr);
    /* Reads a header whose last field is a varbit of the given size. */
    void extract<T>(out T variableSizeHeader, in bit<32> variableFieldSizeInBits);
    /* Returns the next bits of the packet without consuming them. */
    T lookahead<T>();
    /* Skips bits of the packet. */
    void advance(in bit<32> sizeInBits);
    /* Packet length in bytes. */
    bit<32> length();
}

/* The packet being built by a deparser. */
extern packet_out {
    /* Appends a header if it is valid. */
    void emit<T>(in T hdr);
}

/* Rejects the packet with toSignal unless check holds. */
extern void verify(in bool check, in error toSignal);

/* The action that does nothing; the usual default of tables. */
action NoAction() {}

/* The match kinds tables may use. */
match_kind {
    exact,
    ternary,
    lpm
}

#endif
