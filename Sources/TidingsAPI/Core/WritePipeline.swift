import EventHTTP
import Foundation
import Observing
import TidingsModel
import TidingsStore

/// A change a client asked for, before it is checked.
enum WriteRequest: Sendable {
    /// PUT (one key), DELETE (one key reset) and PATCH (a merge patch). `ifMatch` holds the
    /// revisions a key may still have (`If-Match`; an empty set never matches).
    case preferences(PreferencePatch, ifMatch: [String: Set<UInt64>] = [:])
    case addThing(String)
    case removeThing(String)
    /// The whole list; `normalized`: already checked with ``ThingRules/validateList`` under
    /// this server's text case (off the loop, for a large body), so it is not checked again.
    case replaceThings([String], normalized: Bool = false)
    /// Stores the posts feed's document (what `GET /posts` and `posts` events show);
    /// `ifRevision`: the global revision the store must still be at (the one the document was
    /// decided on), nil: none.
    case setPosts(String, ifRevision: UInt64? = nil)
    /// A rollback (History/): operations already made from the history, each setting a key or
    /// the list to its past value (the store skips what is already there); `ifRevision`: the
    /// global revisions `If-Match` accepts.
    case rollback([RollbackOperation], ifRevision: Set<UInt64>?)
    /// Operations made elsewhere (Environments/: creating, deleting, promoting), each with the
    /// value it sets, written into `environment` (nil: this pipeline's); answered like a rollback.
    case operations([RollbackOperation], environment: String?, ifRevision: Set<UInt64>?)
}

/// One operation of a rollback, with the preference value it sets, already checked (nil for
/// the thing list).
typealias RollbackOperation = (operation: WriteOperation, value: PreferenceValue?)

/// What a committed write did. Records are read from ``TidingsState`` afterwards.
enum WriteOutcome: Sendable, Equatable {
    /// The keys whose value changed, with the value and revision this write gave them (empty:
    /// the write changed nothing, no revision taken).
    case preferences(changed: [PreferenceRevision])
    case thingAdded(String, revision: UInt64)
    case thingRemoved(String, revision: UInt64)
    case thingsReplaced(revision: UInt64)
    /// The posts document's revision (nil: it was already stored, nothing announced).
    case postsStored(revision: UInt64?)
    /// What a rollback changed (empty: nothing differed).
    case rolledBack([Change])
}

/// A write as planned: what the store is asked to do, and the checked value each operation
/// sets (nil: none to type, or one the store's change must be read for), so the changes the
/// commit makes come back typed.
private struct PlannedWrite {
    var write: StoreWrite
    var values: [PreferenceValue?]
}

/// A preference's value as one write left it, and the revision that write took.
struct PreferenceRevision: Sendable, Equatable {
    let key: String
    let value: PreferenceValue
    let revision: UInt64
}

/// Why a write was refused or not made durable.
enum WriteFailure: Error, Sendable {
    case invalidPreferences(PreferenceValidationError)
    case thing(ThingError)
    /// A thing whose path would be another resource's (`/things/events` is the stream).
    case reservedThing(String)
    /// `If-Match` named another revision than the key has in the store.
    case preconditionFailed(key: String, current: UInt64)
    /// The store cannot be reached or could not commit; nothing was changed.
    case storeFailed(String)
    /// `Tidings-Reason` is too long or not plain text.
    case invalidReason(String)
    /// The store refused what the write holds (text with U+0000, a value that is not JSON): the
    /// routes' own checks refuse such writes first, so this is the store's guard showing through.
    case unstorable(String)
    /// The store refused an environment's write (Environments/).
    case environment(EnvironmentRefusal)
}

/// Why the store refused a write for its environment.
enum EnvironmentRefusal: Error, Sendable, Equatable {
    /// It does not exist (never created, or deleted meanwhile).
    case unknown(String)
    /// Creating: it exists already.
    case exists(String)
    /// Creating: `limit` environments exist already (`--max-environments`).
    case tooMany(limit: Int)
    /// `default` cannot be deleted.
    case isDefault
}

/// The write path: validate once on the loop, commit off the loop (the store decides the
/// write's conditions against durable state; the commit hands back each change with the value
/// checked here, so nothing is decoded or checked again), then wait until the write's own changes came
/// through the one ordered change path (``ChangeFeed``) before answering — so the answer,
/// memory and every stream on this instance agree.
///
/// Concurrent writes are not batched here: the store groups concurrent commits into one
/// transaction itself (group commit). Confined to the main actor (the event loop).
@MainActor
final class WritePipeline {
    typealias Completion = @MainActor (Result<WriteOutcome, WriteFailure>) -> Void

    private let state: TidingsState
    private let store: any ChangeStore
    private let feed: ChangeFeed
    private var inFlight = 0
    private var drainWaiters: [CheckedContinuation<Void, Never>] = []
    /// Names the author of a request's write (set by the resources).
    var credentials: Credentials?
    /// Called after every commit with how long the store took (for metrics).
    var onCommit: (@MainActor (_ seconds: Double, _ operations: Int) -> Void)?

    /// Things that would shadow a route under `/things/`.
    static let reservedThings: Set<String> = ["events", "history", "rollback"]

    init(state: TidingsState, store: any ChangeStore, feed: ChangeFeed) {
        self.state = state
        self.store = store
        self.feed = feed
    }

    /// Checks `request`, commits it, and calls `completion` on the loop once its changes are
    /// applied (or it was refused).
    func submit(_ request: WriteRequest, from http: Request, completion: @escaping Completion) {
        let author: WriteAuthor
        do throws(WriteFailure) { author = try WriteAuthor(http, credentials: credentials) } catch { return completion(.failure(error)) }
        submit(request, author: author, completion: completion)
    }

    /// As above, recorded as made by `author` (the server's own writes: no actor); a write that
    /// applies a schedule records its outcome in its own transaction (``StoreWrite/schedule``).
    func submit(_ request: WriteRequest, author: WriteAuthor = WriteAuthor(), applying schedule: ScheduleCompletion? = nil,
                completion: @escaping Completion) {
        var planned: PlannedWrite
        switch plan(request) {
        case let .failure(failure): return completion(.failure(failure))
        case let .success(plan): planned = plan
        }
        planned.write.actor = author.actor
        planned.write.reason = author.reason
        planned.write.schedule = schedule
        if case let .operations(_, environment?, _) = request {
            planned.write.environment = environment
        } else {
            planned.write.environment = state.environment
        }
        inFlight += 1
        Task { @MainActor [planned] in
            let result = await commit(planned, for: request)
            completion(result)
            inFlight -= 1
            if inFlight == 0 {
                let waiters = drainWaiters
                drainWaiters = []
                waiters.forEach { $0.resume() }
            }
        }
    }

    /// Returns once this instance has applied `revision` (asking the store for what it has not
    /// seen yet): a write refused because another one changed its basis is made again after it.
    func applied(_ revision: UInt64) async {
        feed.ring()
        await feed.waitUntilApplied(revision)
    }

    /// Returns once every write submitted so far is committed and answered (graceful shutdown).
    func drain() async {
        if inFlight == 0 { return }
        await withCheckedContinuation { drainWaiters.append($0) }
    }

    private func commit(_ planned: PlannedWrite, for request: WriteRequest) async -> Result<WriteOutcome, WriteFailure> {
        let started = ContinuousClock.now
        let changes: [CommittedChange]
        do {
            let state = self.state
            changes = try await store.commit(planned.write, meanings: planned.values) { (change: Change) -> PreferenceValue? in
                state.committed(change).meaning
            }
        } catch {
            return .failure(Self.failure(error))
        }
        report(since: started, operations: changes.count)
        await feed.deliverCommitted(changes)
        if let last = changes.last { await feed.waitUntilApplied(last.revision) }
        return .success(outcome(of: request, changes: changes))
    }

    // MARK: Checking (once, before the commit)

    private func plan(_ request: WriteRequest) -> Result<PlannedWrite, WriteFailure> {
        switch request {
        case let .preferences(patch, ifMatch):
            let validated: ValidatedChanges
            do { validated = try state.preferences.validate(patch) } catch {
                return .failure(.invalidPreferences(error))
            }
            let operations = validated.entries.map { entry -> WriteOperation in
                let defaultJSON = EventFrame.json(state.preferences.declaration(forKey: entry.key)!.defaultValue)
                return .setPreference(key: entry.key, json: entry.storedValue.map { EventFrame.json($0) }, defaultJSON: defaultJSON)
            }
            return .success(PlannedWrite(write: StoreWrite(operations, expectedRevisions: ifMatch),
                                         values: validated.entries.map(\.newValue)))
        case let .addThing(raw):
            do throws(ThingError) {
                // Whether it is already there is decided by the store against durable state;
                // here only the text and the list's size (memory never runs ahead of the store).
                // Bounded first: Unicode work on unbounded client text is quadratic.
                let thing = try ThingRules.normalizeBounded(raw, textCase: state.textCase)
                try ThingRules.validateText(thing)
                // At the limit, a thing already there is still a conflict (the store says so).
                if state.things.things.count >= ThingRules.maxCount && !state.things.contains(thing) {
                    throw .tooMany(limit: ThingRules.maxCount)
                }
                if Self.reservedThings.contains(thing) { return .failure(.reservedThing(thing)) }
                return .success(PlannedWrite(write: StoreWrite([.addThing(thing)]), values: [nil]))
            } catch {
                return .failure(.thing(error))
            }
        case let .removeThing(raw):
            // Text too long to be a thing names none (and is not normalised: that is quadratic).
            guard let thing = try? ThingRules.normalizeBounded(raw, textCase: state.textCase) else {
                return .failure(.thing(.notFound(String(raw.unicodeScalars.prefix(64)))))
            }
            return .success(PlannedWrite(write: StoreWrite([.removeThing(thing)]), values: [nil]))
        case let .replaceThings(raws, normalized):
            do {
                let list = normalized ? raws : try ThingRules.validateList(raws, textCase: state.textCase)
                if let reserved = list.first(where: Self.reservedThings.contains) { return .failure(.reservedThing(reserved)) }
                return .success(PlannedWrite(write: StoreWrite([.replaceThings(list)]), values: [nil]))
            } catch {
                return .failure(.thing(error))
            }
        case let .setPosts(document, ifRevision):
            var write = StoreWrite([.setPosts(document)])
            write.expectedGlobalRevisions = ifRevision.map { [$0] }
            return .success(PlannedWrite(write: write, values: [nil]))
        case let .rollback(operations, ifRevision), let .operations(operations, _, ifRevision):
            var write = StoreWrite(operations.map(\.operation))
            write.expectedGlobalRevisions = ifRevision
            return .success(PlannedWrite(write: write, values: operations.map(\.value)))
        }
    }

    private func outcome(of request: WriteRequest, changes: [CommittedChange]) -> WriteOutcome {
        switch request {
        case .preferences:
            return .preferences(changed: changes.compactMap { committed in
                guard case let .preference(key, _) = committed.change.kind, let value = committed.meaning else { return nil }
                return PreferenceRevision(key: key, value: value, revision: committed.revision)
            })
        case let .addThing(raw):
            let thing = (try? ThingRules.normalizeBounded(raw, textCase: state.textCase)) ?? raw
            return .thingAdded(thing, revision: changes.first?.revision ?? state.thingsRevision)
        case let .removeThing(raw):
            let thing = (try? ThingRules.normalizeBounded(raw, textCase: state.textCase)) ?? raw
            return .thingRemoved(thing, revision: changes.first?.revision ?? state.thingsRevision)
        case .replaceThings:
            return .thingsReplaced(revision: changes.first?.revision ?? state.thingsRevision)
        case .setPosts:
            return .postsStored(revision: changes.first?.revision)
        case .rollback, .operations:
            return .rolledBack(changes.map(\.change))
        }
    }

    /// What a store error means for the client (internal for tests).
    static func failure(_ error: any Error) -> WriteFailure {
        switch error as? StoreError {
        case let .preconditionFailed(key, current)?: return .preconditionFailed(key: key, current: current)
        case let .duplicateThing(thing)?: return .thing(.duplicate(thing))
        case let .thingNotFound(thing)?: return .thing(.notFound(thing))
        case let .unavailable(reason)?: return .storeFailed("the database is unreachable: \(reason)")
        case .closed?: return .storeFailed("the store is closed (shutting down)")
        case let .invalidJSON(key)?: return .unstorable("The value of '\(key)' is not one JSON value.")
        case let .unstorableText(what)?: return .unstorable("The text of \(what) holds U+0000, which cannot be stored.")
        case let .unknownEnvironment(name)?: return .environment(.unknown(name))
        case let .environmentExists(name)?: return .environment(.exists(name))
        case let .tooManyEnvironments(limit)?: return .environment(.tooMany(limit: limit))
        case .defaultEnvironment?: return .environment(.isDefault)
        case let .scheduleNotHeld(id)?: return .storeFailed("schedule \(id) is no longer this instance's to apply")
        default: return .storeFailed(String(describing: error))
        }
    }

    private func report(since started: ContinuousClock.Instant, operations: Int) {
        guard let onCommit else { return }
        let elapsed = ContinuousClock.now - started
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
        onCommit(seconds, operations)
    }
}
