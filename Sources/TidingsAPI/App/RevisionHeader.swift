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
        if Self.setsRevision(response.headers), let own = response.headers[.tidingsRevision] {
            // An as-of read (History/AsOfReads) reports the revision it shows, not the current
            // one; moved with the other added fields, which every later answer (a 304, a 412)
            // keeps.
            response.headers[fields: .tidingsRevision] = []
            response.addedFields.removeAll { $0.name == .tidingsRevision }
            response.addedFields.append(HTTPField(name: .tidingsRevision, value: own))
            return
        }
        if response.addedFields.isEmpty {
            // The usual answer: the prepared one-field list goes out after the route's fields,
            // which stay untouched (a cached response's are shared; editing them copies).
            response.addedFields = cached.fields
        } else {
            // A route's own field is replaced, like the string setter would, without
            // validating the value again.
            response.headers[fields: .tidingsRevision] = []
            response.addedFields.removeAll { $0.name == .tidingsRevision }
            response.addedFields += cached.fields
        }
    }

    /// Whether `headers` has a `Tidings-Revision` field; names of another length are passed
    /// over without a string comparison.
    private static func setsRevision(_ headers: HTTPFields) -> Bool {
        let length = HTTPField.Name.tidingsRevision.canonicalName.utf8.count
        for field in headers where field.name.canonicalName.utf8.count == length {
            if field.name == .tidingsRevision { return true }
        }
        return false
    }

    private static func fields(_ revision: UInt64) -> [HTTPField] {
        [HTTPField(name: .tidingsRevision, value: String(revision))]
    }
}
