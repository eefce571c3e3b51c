/* lgkit: the P4_16 core library (core.p4), written from the P4_16 language specification. */

#ifndef _CORE_P4_
#define _CORE_P4_

/// Standard error codes; architectures and programs may add more.
error {
    NoError,               /// no error
    PacketTooShort,        /// not enough bits in the packet for extract or lookahead
    NoMatch,               /// select expression had no matching case
    StackOutOfBounds,      /// reference to an invalid header stack element
    HeaderTooShort,        /// extracting too many bits into a varbit field
    ParserTimeout,         /// parser execution time exceeded
    ParserInvalidArgument  /// parser operation called with an unsupported value
}

extern packet_in {
    /// Read a fixed-size header from the packet and advance the cursor.
    void extract<T>(out T hdr);
    /// Read a header with one varbit field of the given size in bits.
    void extract<T>(out T variableSizeHeader, in bit<32> variableFieldSizeInBits);
    /// Read bits from the packet without advancing the cursor.
    T lookahead<T>();
    /// Move the cursor by the given number of bits.
    void advance(in bit<32> sizeInBits);
    /// Length of the packet in bytes.
    bit<32> length();
}

extern packet_out {
    /// Append a header (if valid) or every valid header of a struct, union or stack.
    void emit<T>(in T hdr);
}

/// Stop the parser with the given error if the check is false.
extern void verify(in bool check, in error toSignal);

/// The action that does nothing.
@corelib
@noWarn("unused")
action NoAction() {}

/// Standard match kinds; architectures may add more.
match_kind {
    exact,
    ternary,
    lpm
}

#endif  /* _CORE_P4_ */
