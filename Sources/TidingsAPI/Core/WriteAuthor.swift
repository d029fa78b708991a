import EventHTTP
import HTTPTypes

/// Who made a write and why, recorded with each of its changes (API.md "History"): the name of
/// the credential the request presented (``AccessPolicy/actor(for:)``) and its
/// `Tidings-Reason` header.
struct WriteAuthor: Sendable, Equatable {
    var actor: String
    var reason: String?

    init(actor: String = "", reason: String? = nil) {
        self.actor = actor
        self.reason = reason
    }

    /// Most characters a reason may have.
    static let maxReasonCharacters = 256
    /// Most UTF-8 bytes a reason may have (4 per character).
    static let maxReasonBytes = 1_024

    /// The author of `request`; a reason that is too long or not plain text is refused.
    @MainActor
    init(_ request: Request, credentials: Credentials?) throws(WriteFailure) {
        actor = credentials?.policy.actor(for: request) ?? "anonymous"
        reason = try Self.reason(request.headers[.tidingsReason])
    }

    /// `Tidings-Reason`: at most 256 characters (and 1 KiB) of UTF-8 text without control
    /// characters; an empty one is no reason.
    static func reason(_ raw: String?) throws(WriteFailure) -> String? {
        guard let raw else { return nil }
        let text = raw.trimmingCharactersInPlace()
        if text.isEmpty { return nil }
        guard text.utf8.count <= maxReasonBytes, text.count <= maxReasonCharacters else {
            throw .invalidReason("Tidings-Reason holds at most \(maxReasonCharacters) characters.")
        }
        guard !text.unicodeScalars.contains(where: { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) || $0 == "\u{FFFD}" }) else {
            throw .invalidReason("Tidings-Reason must be UTF-8 text without control characters.")
        }
        guard !text.unicodeScalars.contains(where: isInvisibleOrReordering) else {
            throw .invalidReason("Tidings-Reason may not contain format characters (bidirectional controls, zero-width characters) or line and paragraph separators.")
        }
        return text
    }

    /// Characters an audit viewer would not show as they are: format characters (Unicode's Cf:
    /// the bidirectional overrides and isolates, zero-width spaces and joiners, the byte-order
    /// mark, ...) reorder or hide text, and the line and paragraph separators (Zl, Zp) break a
    /// one-line reason into several.
    static func isInvisibleOrReordering(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .format, .lineSeparator, .paragraphSeparator: true
        default: false
        }
    }
}

extension HTTPField.Name {
    /// Why a write was made, recorded in the history.
    static let tidingsReason = HTTPField.Name("Tidings-Reason")!
}

private extension String {
    /// Without leading and trailing spaces and tabs (header whitespace).
    func trimmingCharactersInPlace() -> String {
        var scalars = Substring(self)
        while let first = scalars.first, first == " " || first == "\t" { scalars = scalars.dropFirst() }
        while let last = scalars.last, last == " " || last == "\t" { scalars = scalars.dropLast() }
        return String(scalars)
    }
}
