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
    /// The revision and its one-field list, ready to set.
    private var cached: (revision: UInt64, fields: [HTTPField])

    init(state: TidingsState) {
        self.state = state
        cached = (state.revision, Self.fields(state.revision))
    }

    func finish(_ request: Request, _ response: inout Response) {
        let current = state.revision
        if current != cached.revision { cached = (current, Self.fields(current)) }
        // Set by field list: it replaces a field a route set itself, like the string setter,
        // without validating the value again per response or going through the generic
        // `append` of `RangeReplaceableCollection` (about 1K instructions together).
        response.headers[fields: .tidingsRevision] = cached.fields
    }

    private static func fields(_ revision: UInt64) -> [HTTPField] {
        [HTTPField(name: .tidingsRevision, value: String(revision))]
    }
}
