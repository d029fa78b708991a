/// What a request's `Accept-Encoding` allows (RFC 9110 §12.5.3), for the codings the server
/// makes (gzip, br) and identity.
///
/// - No field: identity only (the server compresses only when asked, as browsers, curl
///   `--compressed` and caches do ask).
/// - `gzip` / `x-gzip` with a q-value above 0, or `*` above 0 when gzip is not listed: gzip is
///   acceptable. `gzip;q=0` (or `*;q=0` without gzip) excludes it.
/// - Identity is acceptable unless `identity;q=0`, or `*;q=0` without identity listed.
/// - Preference: the acceptable coding with the highest q-value (br on a tie: it is smaller),
///   unless identity's is higher (an unlisted identity is the least preferred acceptable coding).
///   `br` is chosen only where the server offers it (whole answers; streams are gzip).
public struct AcceptEncoding: Equatable, Sendable {
    /// A content coding the server makes.
    public enum Coding: String, Sendable {
        case gzip, br
    }

    public var gzipQuality: Double
    public var identityQuality: Double
    public var brQuality: Double = 0

    /// The coding to answer with when the answer is worth compressing, among `offered`; nil:
    /// identity.
    public func preferred(offering offered: [Coding] = [.br, .gzip]) -> Coding? {
        var best: (coding: Coding, quality: Double)?
        for coding in offered {
            let quality = coding == .br ? brQuality : gzipQuality
            if quality > 0, quality > (best?.quality ?? 0) { best = (coding, quality) }
        }
        guard let best, best.quality >= identityQuality else { return nil }
        return best.coding
    }

    public var acceptsGzip: Bool { gzipQuality > 0 }
    public var acceptsIdentity: Bool { identityQuality > 0 }
    /// Whether gzip is the coding to answer with (when the answer is worth compressing).
    public var prefersGzip: Bool { acceptsGzip && gzipQuality >= identityQuality }

    /// No field at all.
    public static let absent = AcceptEncoding(gzipQuality: 0, identityQuality: 1)

    public init(gzipQuality: Double, identityQuality: Double) {
        self.gzipQuality = gzipQuality
        self.identityQuality = identityQuality
    }

    /// Parses the field's value (several fields joined with commas). Malformed members are
    /// ignored, as a lenient server does.
    public init(_ value: String?) {
        guard let value else { self = .absent; return }
        var gzip: Double?
        var br: Double?
        var identity: Double?
        var star: Double?
        for member in value.split(separator: ",") {
            let parts = member.split(separator: ";")
            guard let first = parts.first else { continue }
            let coding = first.trimmingSpaces().lowercased()
            var quality = 1.0
            for parameter in parts.dropFirst() {
                let pair = parameter.split(separator: "=", maxSplits: 1)
                guard pair.count == 2, pair[0].trimmingSpaces().lowercased() == "q" else { continue }
                quality = Self.quality(pair[1].trimmingSpaces()) ?? quality
            }
            switch coding {
            case "gzip", "x-gzip": gzip = max(gzip ?? 0, quality)
            case "br": br = quality
            case "identity": identity = quality
            case "*": star = quality
            default: continue
            }
        }
        gzipQuality = gzip ?? star ?? 0
        brQuality = br ?? star ?? 0
        // Unlisted identity: acceptable (unless `*;q=0`), least preferred.
        identityQuality = identity ?? (star == 0 ? 0 : 0.000_1)
    }

    /// A qvalue: `0`, `1`, `0.x` up to three decimals (anything else: ignored).
    private static func quality(_ text: Substring) -> Double? {
        guard let number = Double(text), number >= 0, number <= 1, text.count <= 5 else { return nil }
        return number
    }
}

extension Substring {
    func trimmingSpaces() -> Substring {
        var text = self
        while let first = text.first, first == " " || first == "\t" { text.removeFirst() }
        while let last = text.last, last == " " || last == "\t" { text.removeLast() }
        return text
    }
}
