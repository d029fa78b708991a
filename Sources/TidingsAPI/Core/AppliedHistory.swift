import TidingsStore

/// Which history this instance applied: the database's identity and the commit time of the
/// last change it applied. Every read of the change table (``ChangePage``) is checked against
/// it, so a database that is no longer that history is noticed at the next read — after a
/// doorbell, the slow poll, or the reconnection after an outage:
///
/// - another identity: the database was re-created, or another one was put in its place;
/// - a counter below the applied revision: restored from an older backup, or a standby that
///   missed commits was promoted;
/// - another commit time at the applied revision: the same, but new commits have since taken
///   the counter past the applied revision again.
///
/// Then memory must be rebuilt from the database (``ChangeFeed`` reloads and streams get
/// `reset`). Unknowns (a store without identity, a row no longer retained, a change without a
/// commit time) are never taken as a difference, so the check cannot make an instance reload
/// over and over.
struct AppliedHistory {
    /// The identity of the database the applied history came from (nil: not known yet).
    private(set) var identity: String?
    /// ``Change/at`` of the change at the applied revision (nil: not known, e.g. after a reload).
    private(set) var lastAppliedAt: Int64?

    init(identity: String?) {
        self.identity = identity
    }

    /// Notes the change just applied.
    mutating func applied(_ change: Change) {
        lastAppliedAt = change.at > 0 ? change.at : nil
    }

    /// Starts over from a snapshot of the database.
    mutating func reloaded(from snapshot: StoreSnapshot) {
        identity = snapshot.identity ?? identity
        lastAppliedAt = nil
    }

    /// Why `page` (read after `revision`) is not of the applied history, or nil when it is.
    /// `current` is the revision applied now: reads are asynchronous, and when other changes
    /// were applied meanwhile, the commit time read for `revision` is no longer comparable with
    /// ``lastAppliedAt``. A page that names an identity for the first time teaches it.
    mutating func divergence(of page: ChangePage, readAfter revision: UInt64, current: UInt64) -> String? {
        if let known = identity, let found = page.identity, known != found {
            return "the database's identity changed from \(known) to \(found)"
        }
        if identity == nil { identity = page.identity }
        if page.counter < revision {
            return "the database's revision \(page.counter) (identity \(identity ?? "none")) is below the applied revision \(revision)"
        }
        if revision == current, let mine = lastAppliedAt, let theirs = page.committedAtReaderRevision, mine != theirs {
            return "the database's change at the applied revision \(revision) (identity \(identity ?? "none")) was committed at \(theirs), not at \(mine)"
        }
        return nil
    }
}
