public import Foundation

/// The one configured JSON encoder/decoder pair the HTTP layer uses (created once; Foundation's
/// coders are thread-safe to use concurrently once configured).
public enum JSONCoding {
    /// Compact output, `/` not escaped, keys in declaration order.
    public static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes, .sortedKeys]
        return encoder
    }()
    public static let decoder = JSONDecoder()
}
