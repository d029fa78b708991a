import EventHTTP
import HTTPTypes

/// `Tidings-Revision` on every answer: router-wide middleware. The field is built once per
/// revision, not once per response, and reads the state directly.
///
/// The conformance is main-actor isolated: middleware runs on the loop thread, which is the
/// main thread, so the state (`@MainActor`) is read without `MainActor.assumeIsolated`'s
/// executor check on every answer (about 1K instructions per request).
@MainActor
final class RevisionHeader: @MainActor Middleware {
    private let state: TidingsState
    private var cached: (revision: UInt64, field: HTTPField)

    init(state: TidingsState) {
        self.state = state
        cached = (state.revision, Self.field(state.revision))
    }

    func finish(_ request: Request, _ response: inout Response) {
        let current = state.revision
        if current != cached.revision { cached = (current, Self.field(current)) }
        // No route sets it itself; if one did, its value is replaced (as the setter did).
        if response.headers.contains(.tidingsRevision) {
            response.headers[.tidingsRevision] = cached.field.value
        } else {
            response.headers.append(cached.field)
        }
    }

    private static func field(_ revision: UInt64) -> HTTPField {
        HTTPField(name: .tidingsRevision, value: String(revision))
    }
}
