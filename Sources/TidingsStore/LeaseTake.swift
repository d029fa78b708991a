/// What one take of a cluster-wide lease found (``ChangeStore/takeLease(_:holder:duration:)``).
///
/// A take over another holder's *expired* row is told apart from one over a free lease: a
/// holder that ends its work gives the lease back (``ChangeStore/releaseLease(_:holder:)``
/// deletes its row), so an expired row of another holder means that holder stopped without
/// giving it back (killed mid-work: SIGKILL, OOM) — its work did not end, and the taker must
/// not take its outcome as stored.
public enum LeaseTake: Sendable, Equatable {
    /// `holder` has the lease now: it was free (no row: never taken, given back, or purged long
    /// after it expired), or `holder`'s own (renewed).
    case taken
    /// `holder` has the lease now, over another holder's row that had expired without being
    /// given back.
    case takenOver
    /// Another holder has it and it has not expired: `holder` does not have it.
    case refused

    /// True when `holder` has the lease now.
    public var isGranted: Bool { self != .refused }
}

/// How long an expired lease row is kept before the purge that runs with every take removes
/// it: long enough for an instance waiting on the lease (it retries every few tens of
/// milliseconds) to find it and report ``LeaseTake/takenOver``, short enough that single-use
/// names (stream tickets' `ticket:<nonce>`) never pile up.
enum LeasePurge {
    static let grace: Duration = .seconds(60)
    /// Expired rows removed per lease taken (more than one row is added per call).
    static let batch = 16
}

extension ChangeStore {
    /// Takes (or renews) the lease; true when `holder` has it now
    /// (``takeLease(_:holder:duration:)`` when the caller needs no more).
    public func acquireLease(_ name: String, holder: String, duration: Duration) async throws -> Bool {
        try await takeLease(name, holder: holder, duration: duration).isGranted
    }
}
