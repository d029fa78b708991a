public import Foundation

/// The one configured JSON encoder/decoder pair the HTTP layer uses (created once; Foundation's
/// coders are thread-safe to use concurrently once configured).
public enum JSONCoding {
    /// Compact output, `/` not escaped, object keys sorted (so the same value is always the
    /// same bytes: cached bodies, ETags and replayed events agree).
    public static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes, .sortedKeys]
        return encoder
    }()
    /// The decoder for request bodies (Foundation defaults).
    public static let decoder = JSONDecoder()
}
