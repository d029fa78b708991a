import EventHTTP
import HTTPTypes

/// `Tidings-Revision` on every answer: router-wide middleware. The text is formatted once per
/// revision, not once per response. Loop-thread confined, like all middleware.
final class RevisionHeader: Middleware {
    private let revision: () -> UInt64
    private var cached: (revision: UInt64, text: String) = (0, "0")

    init(revision: @escaping () -> UInt64) { self.revision = revision }

    func finish(_ request: Request, _ response: inout Response) {
        let current = revision()
        if current != cached.revision { cached = (current, String(current)) }
        response.headers[.tidingsRevision] = cached.text
    }
}
