internal import CZlib

/// gzip over the system zlib (never a hand-written deflate): whole answers, and the pieces a
/// compressed event stream is made of.
///
/// A gzip member is a 10-byte header, a deflate stream, then CRC-32 and length of the
/// uncompressed bytes. A compressed event stream is assembled from independent pieces: each
/// event is deflated on its own from an empty window and ended with `Z_SYNC_FLUSH` (a
/// byte-aligned, non-final block boundary), so its bytes can follow any earlier piece and be
/// shared by every stream it goes to; a stream only keeps the running CRC and length
/// (`crc32_combine`) and ends with `trailer`.
public enum Gzip {
    /// The fixed member header: no name, no time stamp, OS "Unix".
    public static let header: [UInt8] = [0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3]

    /// A complete gzip member of `bytes` (level 6), or nil if zlib fails (out of memory).
    public static func compress(_ bytes: [UInt8], level: Int32 = 6) -> [UInt8]? {
        var stream = z_stream()
        // windowBits 15 + 16: zlib writes the gzip wrapper itself.
        guard tidings_deflate_init2(&stream, level, 15 + 16, 8) == Z_OK else { return nil }
        defer { deflateEnd(&stream) }
        let capacity = Int(deflateBound(&stream, uLong(bytes.count))) + 32
        var out = [UInt8](repeating: 0, count: capacity)
        let status: Int32 = bytes.withUnsafeBufferPointer { input in
            out.withUnsafeMutableBufferPointer { output in
                stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress)
                stream.avail_in = uInt(input.count)
                stream.next_out = output.baseAddress
                stream.avail_out = uInt(output.count)
                return deflate(&stream, Z_FINISH)
            }
        }
        guard status == Z_STREAM_END else { return nil }
        out.removeLast(capacity - Int(stream.total_out))
        return out
    }

    /// The CRC-32 of `bytes` (gzip's), continuing `crc`.
    public static func crc32(_ bytes: [UInt8], continuing crc: UInt32 = 0) -> UInt32 {
        bytes.withUnsafeBufferPointer { UInt32(CZlib.crc32(uLong(crc), $0.baseAddress, uInt($0.count))) }
    }

    /// The CRC-32 of A followed by B, from A's and B's CRCs and B's length.
    public static func combine(_ first: UInt32, _ second: UInt32, secondLength: Int) -> UInt32 {
        UInt32(crc32_combine(uLong(first), uLong(second), off_t(secondLength)))
    }

    /// What ends a member assembled from flush-ended pieces: an empty final block (fixed
    /// Huffman, `03 00`), then CRC-32 and length (mod 2^32), little-endian.
    public static func trailer(crc: UInt32, length: UInt64) -> [UInt8] {
        let size = UInt32(truncatingIfNeeded: length)
        return [0x03, 0x00,
                UInt8(crc & 0xff), UInt8((crc >> 8) & 0xff), UInt8((crc >> 16) & 0xff), UInt8(crc >> 24),
                UInt8(size & 0xff), UInt8((size >> 8) & 0xff), UInt8((size >> 16) & 0xff), UInt8(size >> 24)]
    }
}

/// One event's deflated bytes: a raw deflate block sequence started from an empty window and
/// ended on a `Z_SYNC_FLUSH` boundary, with the CRC-32 and length of what it holds.
public struct DeflatedPiece: Sendable {
    public let bytes: [UInt8]
    public let crc: UInt32
    public let length: Int
    /// zlib's `crc32_combine_gen(length)`: appending this piece's CRC to a running one is then
    /// one `crc32_combine_op`, whatever the length (per stream, per event).
    let combineOperator: UInt

    init(bytes: [UInt8], crc: UInt32, length: Int) {
        self.bytes = bytes
        self.crc = crc
        self.length = length
        combineOperator = UInt(crc32_combine_gen(off_t(length)))
    }

    /// The CRC-32 of what `running` covered followed by this piece's bytes.
    func appended(to running: UInt32) -> UInt32 {
        UInt32(crc32_combine_op(uLong(running), uLong(crc), uLong(combineOperator)))
    }
}

/// A reusable raw-deflate compressor that makes `DeflatedPiece`s. Not thread-safe: one per
/// thread (the loop, each stream worker). Resetting keeps zlib's buffers, so a small event costs
/// a reset and one `deflate` call, not an allocation of zlib's state.
public final class PieceDeflater {
    private var stream = z_stream()
    private let ready: Bool
    /// Pieces made by this deflater (for metrics and tests).
    public private(set) var made = 0

    public init(level: Int32 = 6) {
        // Negative windowBits: raw deflate, no wrapper (the stream writes its own gzip header).
        ready = tidings_deflate_init2(&stream, level, -15, 8) == Z_OK
    }

    deinit { if ready { deflateEnd(&stream) } }

    /// `bytes` deflated from an empty window, ended with a sync flush; nil if zlib failed.
    public func piece(_ bytes: [UInt8]) -> DeflatedPiece? {
        guard ready, deflateReset(&stream) == Z_OK else { return nil }
        // deflateBound covers the blocks; a sync flush adds an empty stored block (5 bytes) and
        // up to a byte of alignment.
        var capacity = Int(deflateBound(&stream, uLong(bytes.count))) + 16
        var out = [UInt8](repeating: 0, count: capacity)
        var produced = 0
        let ok: Bool = bytes.withUnsafeBufferPointer { input in
            stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress)
            stream.avail_in = uInt(input.count)
            while true {
                let status: Int32 = out.withUnsafeMutableBufferPointer { output in
                    stream.next_out = output.baseAddress! + produced
                    stream.avail_out = uInt(output.count - produced)
                    let status = deflate(&stream, Z_SYNC_FLUSH)
                    produced = output.count - Int(stream.avail_out)
                    return status
                }
                guard status == Z_OK || status == Z_BUF_ERROR else { return false }
                // Done when zlib left output room: everything, flush marker included, was written.
                if stream.avail_out > 0 && stream.avail_in == 0 { return true }
                capacity *= 2
                out += [UInt8](repeating: 0, count: capacity - out.count)
            }
        }
        guard ok else { return nil }
        // A right-sized copy: `out` has room for incompressible input (and every byte of it was
        // written), which a queued piece would otherwise hold for as long as it waits — a 2 MB
        // snapshot's piece kept 2 MB per gzip stream however small it deflated.
        out = produced * 2 < out.count ? Array(out[..<produced]) : Array(out.prefix(produced))
        made += 1
        return DeflatedPiece(bytes: out, crc: Gzip.crc32(bytes), length: bytes.count)
    }
}
