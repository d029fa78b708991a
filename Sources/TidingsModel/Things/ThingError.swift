/// Why a thing was refused. Each rule has its own case (the server maps them: 422, or 409 for
/// ``duplicate(_:)``, 404 for ``notFound(_:)``).
public enum ThingError: Error, Sendable, Hashable, CustomStringConvertible {
    case empty
    case tooLong(length: Int, limit: Int)
    case controlCharacters
    /// More combining marks in a row than Unicode's stream-safe format allows (30).
    case tooManyCombiningMarks
    case duplicate(String)
    case tooMany(limit: Int)
    case notFound(String)

    public var description: String {
        switch self {
        case .empty: "a thing must not be empty"
        case let .tooLong(length, limit): "a thing must be at most \(limit) Unicode scalars long after NFC normalisation (this one has \(length))"
        case .controlCharacters: "a thing must not contain control characters"
        case .tooManyCombiningMarks: "a thing must not hold more than 30 combining marks in a row (Unicode's stream-safe format, UAX #15)"
        case let .duplicate(thing): "\"\(thing)\" already exists"
        case let .tooMany(limit): "at most \(limit) things are allowed"
        case let .notFound(thing): "\"\(thing)\" does not exist"
        }
    }
}
