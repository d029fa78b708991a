internal import CBrotli

/// A real Brotli decoder (Google's libbrotlidec) for `br` answers.
public enum BrotliDecoder {
    public enum Failure: Error { case corrupt, truncated }

    /// A whole `br` body, decoded; throws unless it is exactly one complete Brotli stream.
    public static func decode(_ bytes: [UInt8]) throws -> [UInt8] {
        guard let state = BrotliDecoderCreateInstance(nil, nil, nil) else { throw Failure.corrupt }
        defer { BrotliDecoderDestroyInstance(state) }
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        return try bytes.withUnsafeBufferPointer { input in
            var nextIn = input.baseAddress
            var availableIn = input.count
            while true {
                var availableOut = chunk.count
                let result = chunk.withUnsafeMutableBufferPointer { out -> BrotliDecoderResult in
                    var nextOut = out.baseAddress
                    return BrotliDecoderDecompressStream(state, &availableIn, &nextIn, &availableOut, &nextOut, nil)
                }
                output += chunk[0..<(chunk.count - availableOut)]
                switch result {
                case BROTLI_DECODER_RESULT_SUCCESS:
                    guard availableIn == 0 else { throw Failure.corrupt }
                    return output
                case BROTLI_DECODER_RESULT_NEEDS_MORE_OUTPUT: continue
                case BROTLI_DECODER_RESULT_NEEDS_MORE_INPUT: throw Failure.truncated
                default: throw Failure.corrupt
                }
            }
        }
    }
}
