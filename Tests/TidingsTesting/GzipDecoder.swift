internal import CZlib

/// A real gzip decoder (the system zlib's inflate), fed bytes as they arrive: what a browser or
/// `curl --compressed` does with a gzip answer or event stream. `feed` returns what the bytes
/// so far decode to; `finished` is true once the member's trailer was read and checked (zlib
/// verifies CRC-32 and length).
public final class GzipDecoder {
    private var stream = z_stream()
    public private(set) var finished = false
    public private(set) var failed = false

    public init() {
        // 15 + 16: a gzip wrapper, not zlib's.
        precondition(inflateInit2_(&stream, 15 + 16, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK)
    }

    deinit { inflateEnd(&stream) }

    /// Decodes `bytes`; throws once the input is not gzip.
    public func feed(_ bytes: [UInt8]) throws -> [UInt8] {
        guard !bytes.isEmpty, !finished else { return [] }
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        var input = bytes
        try input.withUnsafeMutableBufferPointer { inputBuffer in
            stream.next_in = inputBuffer.baseAddress
            stream.avail_in = uInt(inputBuffer.count)
            repeat {
                let status: Int32 = chunk.withUnsafeMutableBufferPointer { out in
                    stream.next_out = out.baseAddress
                    stream.avail_out = uInt(out.count)
                    return inflate(&stream, Z_SYNC_FLUSH)
                }
                output += chunk[0..<(chunk.count - Int(stream.avail_out))]
                if status == Z_STREAM_END { finished = true; return }
                if status == Z_BUF_ERROR { return }   // needs more input
                guard status == Z_OK else {
                    failed = true
                    throw GzipDecoderError.corrupt(status)
                }
            } while stream.avail_in > 0 || stream.avail_out == 0
        }
        return output
    }

    /// A whole gzip body, decoded; throws unless it is exactly one complete member.
    public static func decode(_ bytes: [UInt8]) throws -> [UInt8] {
        let decoder = GzipDecoder()
        let output = try decoder.feed(bytes)
        guard decoder.finished else { throw GzipDecoderError.truncated }
        return output
    }
}

public enum GzipDecoderError: Error { case corrupt(Int32), truncated }
