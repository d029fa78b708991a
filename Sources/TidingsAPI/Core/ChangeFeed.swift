import Foundation
import Logging
import TidingsStore

/// The one ordered sequence of committed changes, as this instance receives it.
///
/// Changes come out of the store by two doors — the changes a local commit made (handed over
/// by the write pipeline, which saves a read, already typed: their values were checked before
/// the commit) and ``ChangeStore/changes(after:limit:)`` when the store's doorbell says another
/// writer committed (outside input: typed and checked as they come in, ``deliver(_:)``) — but
/// they all go into one buffer and are applied by ``TidingsState/apply(_:)`` strictly in revision order,
/// never skipping one: a gap (another instance's commit not read yet) is filled by reading the
/// store before anything after it is applied. When the history no longer reaches back (pruned),
/// or the database is no longer the history this instance applied (``AppliedHistory``: a
/// restore, a failover that lost commits, a re-created database), memory is rebuilt from a
/// snapshot and streams get `reset`. Nothing a store or another instance sends can stop the
/// loop: every inconsistency ends in a read or a reload, logged.
///
/// Confined to the main actor (the event loop).
@MainActor
final class ChangeFeed {
    private let store: any ChangeStore
    private var state: any AppliesChanges
    private let logger: Logger
    /// Received but not yet applicable (an earlier revision is missing), by revision.
    private var pending: [UInt64: CommittedChange] = [:]
    private var history: AppliedHistory
    private var waiters: [(revision: UInt64, continuation: CheckedContinuation<Void, Never>)] = []
    private var reading = false
    private var readRequested = false
    /// Reads of the store started and finished, and who waits for one (``caughtUp()``).
    private var readsStarted = 0
    private var readsFinished = 0
    private var readWaiters: [(read: Int, continuation: CheckedContinuation<Void, Never>)] = []
    private var retryDelay: Duration = .milliseconds(50)
    private var stopped = false
    /// Changes read per store round trip.
    private let pageSize = 512
    /// What the latest reads applied (revision -> commit time and what changed), so a local
    /// commit whose answer comes after a read already applied it is recognised as that same
    /// commit without asking the store again (``deliverCommitted(_:)``). Bounded: the newest
    /// ``readMarksKept`` revisions or so.
    private var readMarks: [UInt64: ReadMark] = [:]
    private let readMarksKept: UInt64 = 4096
    /// Called after memory was rebuilt from a database that is no longer the history this
    /// instance applied (restored, re-created, replaced): what was read from the old one at
    /// start-up besides the snapshot (the stream ticket secret) is read again.
    var onReload: (@MainActor () async -> Void)?

    /// - Parameter identity: the identity of the database `state` was loaded from.
    init(store: any ChangeStore, state: any AppliesChanges, identity: String? = nil, logger: Logger) {
        history = AppliedHistory(identity: identity)
        self.store = store
        self.state = state
        self.logger = logger
    }

    /// Applies changes to `target` from now on (every environment, once they exist; before ``start()``).
    func apply(to target: any AppliesChanges) {
        state = target
    }

    /// Listens to the store's doorbell and catches up once (changes committed since the
    /// snapshot this instance started from).
    func start() {
        store.watch {
            DispatchQueue.main.async { MainActor.assumeIsolated { [weak self] in self?.ring() } }
        }
        ring()
    }

    func stop() {
        stopped = true
        // No read starts any more: whoever waits for one (``caughtUp()``) goes on with what it has.
        let waiting = readWaiters
        readWaiters = []
        for waiter in waiting { waiter.continuation.resume() }
    }

    /// Takes changes another writer committed (any order, duplicates allowed): each new one is
    /// typed where it comes in (``TidingsState/committed(_:)``: its value decoded and checked
    /// once), then every one that is next in line is applied.
    func deliver(_ changes: [Change]) {
        for change in changes where change.revision > state.revision && pending[change.revision] == nil {
            pending[change.revision] = state.committed(change)
        }
        applyPending()
    }

    /// Notes what a read of the store applied (see ``readMarks``).
    private func markRead(_ changes: [Change]) {
        guard !changes.isEmpty else { return }
        for change in changes { readMarks[change.revision] = ReadMark(change) }
        if readMarks.count > Int(2 * readMarksKept), let newest = changes.last?.revision, newest > readMarksKept {
            readMarks = readMarks.filter { $0.key > newest - readMarksKept }
        }
    }

    /// Takes typed committed changes (any order, duplicates allowed) and applies every one
    /// that is next in line.
    private func deliver(committed changes: [CommittedChange]) {
        for change in changes where change.revision > state.revision {
            pending[change.revision] = change
        }
        applyPending()
    }

    /// Takes the changes of a local commit. A fresh commit cannot have a revision this instance
    /// already applied unless the store's counter went back (a restore, a failover that lost
    /// commits): then memory is rebuilt from the store before this returns, so the write is
    /// answered with what the store now holds, and streams get `reset`.
    func deliverCommitted(_ changes: [CommittedChange]) async {
        guard let first = changes.first, first.revision <= state.revision else { return deliver(committed: changes) }
        // A read (after another writer's doorbell) applied this very commit first: the same
        // revisions, commit time and changes. Nothing went back; no need to ask the store.
        if changes.allSatisfy({ readMarks[$0.revision] == ReadMark($0.change) }) { return }
        // Usually a read (after the doorbell) applied this commit first; the store tells which.
        do {
            let after = state.revision
            let page = try await store.changePage(after: after, limit: 1)
            if let divergence = history.divergence(of: page, readAfter: after, current: state.revision) {
                await reload(because: "a commit took revision \(first.revision), at or below the applied one: \(divergence)")
            }
        } catch StoreError.changesPruned {
            await reload()
        } catch {
            // Unreachable right now: the feed's own reads retry; the commit itself is durable.
        }
        deliver(committed: changes)
    }

    /// Something may have been committed elsewhere: read the store after the last applied revision.
    func ring() {
        readRequested = true
        readIfRequested()
    }

    /// Returns once `revision` has been applied (a local write answers after its own change
    /// came through the one path, so answer, memory and streams agree).
    func waitUntilApplied(_ revision: UInt64) async {
        if state.revision >= revision { return }
        await withCheckedContinuation { waiters.append((revision, $0)) }
    }

    /// Returns once a read of the store that started after this call has finished, so what
    /// another writer committed before the call is applied (unless the store could not be read).
    /// Callers meanwhile share that one read: the store sees one read at a time however many ask.
    func caughtUp() async {
        guard !stopped else { return }
        let target = readsStarted + 1
        ring()
        if readsFinished >= target { return }
        await withCheckedContinuation { readWaiters.append((target, $0)) }
    }

    private func applyPending() {
        while let next = pending.removeValue(forKey: state.revision + 1) {
            if state.apply(next) { history.applied(next.change) }
        }
        if !pending.isEmpty {
            pending = pending.filter { $0.key > state.revision }
            // Something earlier is missing (another writer's commit): read it from the store.
            if !pending.isEmpty { ring() }
        }
        resumeWaiters()
    }

    private func resumeWaiters() {
        guard !waiters.isEmpty else { return }
        let current = state.revision
        var remaining: [(revision: UInt64, continuation: CheckedContinuation<Void, Never>)] = []
        for waiter in waiters {
            if waiter.revision <= current { waiter.continuation.resume() } else { remaining.append(waiter) }
        }
        waiters = remaining
    }

    private func readIfRequested() {
        guard readRequested, !reading, !stopped else { return }
        readRequested = false
        reading = true
        readsStarted += 1
        let number = readsStarted
        Task { @MainActor in
            await read()
            reading = false
            readsFinished = number
            let finished = readWaiters.filter { $0.read <= number }
            readWaiters.removeAll { $0.read <= number }
            for waiter in finished { waiter.continuation.resume() }
            readIfRequested()
        }
    }

    private func read() async {
        do {
            while true {
                let after = state.revision
                // This instance's own commits already here (waiting for an earlier revision another
                // writer committed) are not read again: the read stops before the first of them.
                let firstWaiting = pending.keys.min() ?? .max
                let limit = firstWaiting > after + 1 ? Int(clamping: min(UInt64(pageSize), firstWaiting - after - 1)) : pageSize
                let page = try await store.changePage(after: after, limit: limit)
                retryDelay = .milliseconds(50)
                if let divergence = history.divergence(of: page, readAfter: after, current: state.revision) {
                    return await reload(because: divergence)
                }
                markRead(page.changes)
                deliver(page.changes)
                // A short page: nothing more yet. A read that stopped before this instance's own
                // commits goes on only if the store held more than those (another writer's, after them).
                if page.changes.count < limit { return }
                if limit < pageSize && state.revision >= page.counter { return }
            }
        } catch StoreError.changesPruned {
            await reload()
        } catch {
            // Unreachable database or a failing read: try again with back-off (the doorbell
            // also rings when the store reconnects).
            logger.warning("cannot read the change history; retrying", metadata: [
                "after": "\(state.revision)", "error": "\(error)", "retryIn": "\(retryDelay)",
            ])
            scheduleRetry()
        }
    }

    /// Rebuilds memory from the database, which no longer holds the history this instance
    /// applied (`reason`, logged at warning with both identities or revisions).
    private func reload(because reason: String) async {
        logger.warning("the database is not the history this instance applied; reloading from it", metadata: [
            "reason": "\(reason)", "applied": "\(state.revision)",
        ])
        await reload()
    }

    private func reload() async {
        do {
            let snapshot = try await store.loadSnapshot()
            // What waits was read from the history memory is leaving; read again after the snapshot.
            pending = [:]
            state.reload(snapshot)
            history.reloaded(from: snapshot)
            resumeWaiters()
            ring()
            await onReload?()
        } catch {
            logger.warning("cannot reload from the store; retrying", metadata: ["error": "\(error)"])
            scheduleRetry()
        }
    }

    private func scheduleRetry() {
        let delay = retryDelay
        retryDelay = min(retryDelay * 2, .seconds(2))
        Task { @MainActor [weak self] in
            try? await Task.sleep(for: delay)
            self?.ring()
        }
    }
}

/// A change as a read applied it: enough to tell the same commit when its answer comes later.
private struct ReadMark: Equatable {
    var at: Int64
    var environment: String
    var kind: Int

    init(_ change: Change) {
        at = change.at
        environment = change.environment
        kind = change.kind.hashValue
    }
}
