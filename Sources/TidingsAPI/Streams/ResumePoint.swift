import HTTPTypes
import EventHTTP
import Foundation

// Where a stream resumes, parsed from what the client sent. In a file of its own so the fuzz
// target (Fuzz/) compiles it without the rest of the hub.
extension StreamHub {
    enum ResumePoint: Equatable {
        case none
        case after(UInt64)
        /// Decimal digits, but more than any revision can be: it cannot be ours, so reset.
        case beyondRange
    }

    /// `Last-Event-ID` (what `EventSource` sends on reconnect; it wins) or `?lastEventId=`:
    /// 1 to 20 decimal digits, else 400.
    static func resumePoint(_ request: Request) throws(ProblemDetails) -> ResumePoint {
        try resumePoint(header: request.headers[.lastEventID], query: request.query("lastEventId"))
    }

    /// The same from the raw header and the decoded query value (either may be absent).
    static func resumePoint(header: String?, query: String?) throws(ProblemDetails) -> ResumePoint {
        // Both are checked when both are sent (a malformed one is a 400 either way); the header wins.
        let header = try header.map(parse)
        let query = try query.map(parse)
        return header ?? query ?? .none
    }

    private static func parse(_ raw: String) throws(ProblemDetails) -> ResumePoint {
        let digits = raw.trimmingCharacters(in: .whitespaces)
        guard (1...20).contains(digits.utf8.count), digits.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) else {
            throw Problems.badQuery("Last-Event-ID / lastEventId must be a revision: 1 to 20 decimal digits.")
        }
        return UInt64(digits).map(ResumePoint.after) ?? .beyondRange
    }
}
