internal import CBrotli

/// `br` (RFC 7932) over Google's Brotli library (Debian's libbrotli1), for whole answers. Event
/// streams stay gzip: their shared, flush-ended pieces are a deflate property.
public enum Brotli {
    /// Quality 5 of 0–11: about gzip-6's speed with smaller output; 11 would spend a second on
    /// the contract, and tagged answers that change with a revision are compressed on the loop.
    public static let defaultQuality: Int32 = 5

    /// `bytes` as one Brotli stream, or nil if the library fails.
    public static func compress(_ bytes: [UInt8], quality: Int32 = defaultQuality) -> [UInt8]? {
        var capacity = BrotliEncoderMaxCompressedSize(bytes.count)
        if capacity == 0 { capacity = bytes.count + 1_024 }
        var out = [UInt8](repeating: 0, count: capacity)
        var written = capacity
        let ok = bytes.withUnsafeBufferPointer { input in
            out.withUnsafeMutableBufferPointer { output in
                BrotliEncoderCompress(quality, BROTLI_DEFAULT_WINDOW, BROTLI_MODE_TEXT, input.count, input.baseAddress,
                                      &written, output.baseAddress)
            }
        }
        guard ok == BROTLI_TRUE else { return nil }
        out.removeLast(capacity - written)
        return out
    }
}
