import TidingsTesting
/// A gzip member whose deflate stream is one fixed-Huffman block: `[`, a space, then
/// back-references of 258 bytes at distance 1 (13 bits each), then `]`. So `inflated` bytes of
/// valid JSON cost about `inflated / 160` bytes on the wire. The CRC is not computed (zero): a
/// client that inflates it all fails at the very end, which is too late for its memory.
enum GzipBomb {
    static func make(inflated: Int) -> [UInt8] {
        var writer = BitWriter()
        writer.bits(1, count: 1)          // BFINAL
        writer.bits(1, count: 2)          // BTYPE = 01, fixed Huffman
        writer.literal(UInt8(ascii: "["))
        writer.literal(UInt8(ascii: " "))
        var produced = 2
        while produced + 258 < inflated {
            writer.code(0b1100_0101, count: 8)   // length symbol 285: 258 bytes, no extra bits
            writer.code(0, count: 5)             // distance symbol 0: distance 1
            produced += 258
        }
        writer.literal(UInt8(ascii: "]"))
        writer.code(0, count: 7)                 // end of block (256)
        writer.flush()
        let header: [UInt8] = [0x1F, 0x8B, 8, 0, 0, 0, 0, 0, 0, 0xFF]
        let size = UInt32(truncatingIfNeeded: produced + 1)
        let trailer: [UInt8] = [0, 0, 0, 0] + (0..<4).map { UInt8(truncatingIfNeeded: size >> (8 * $0)) }
        return header + writer.bytes + trailer
    }

    private struct BitWriter {
        var bytes: [UInt8] = []
        private var accumulator: UInt64 = 0
        private var filled = 0

        /// A value LSB-first (header fields, extra bits).
        mutating func bits(_ value: UInt64, count: Int) {
            accumulator |= value << UInt64(filled)
            filled += count
            while filled >= 8 {
                bytes.append(UInt8(truncatingIfNeeded: accumulator))
                accumulator >>= 8
                filled -= 8
            }
        }

        /// A Huffman code, most significant bit first.
        mutating func code(_ value: UInt64, count: Int) {
            var reversed: UInt64 = 0
            for index in 0..<count where value & (1 << UInt64(index)) != 0 { reversed |= 1 << UInt64(count - 1 - index) }
            bits(reversed, count: count)
        }

        /// A literal byte 0...143 (fixed code 0x30 + byte, 8 bits).
        mutating func literal(_ byte: UInt8) { code(0x30 + UInt64(byte), count: 8) }

        mutating func flush() { if filled > 0 { bits(0, count: 8 - filled) } }
    }
}
