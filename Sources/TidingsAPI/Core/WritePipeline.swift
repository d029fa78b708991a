import Foundation
import Observing
import TidingsStore

/// A change a client asked for, before it is checked.
enum WriteRequest: Sendable {
    /// PUT (one key), DELETE (one key reset) and PATCH (a merge patch). `ifMatch` holds the
    /// revisions a key may still have (`If-Match`; an empty set never matches).
    case preferences(PreferencePatch, ifMatch: [String: Set<UInt64>] = [:])
    case addThing(String)
    case removeThing(String)
    case replaceThings([String])
    /// Takes a revision for an event about something that is not stored (the posts feed).
    case announce(topic: String)
}

/// What a committed write did. Records are read from ``TidingsState`` afterwards.
enum WriteOutcome: Sendable, Equatable {
    /// The keys whose value changed (empty: the write changed nothing, no revision taken).
    case preferences(changed: [String])
    case thingAdded(String, revision: UInt64)
    case thingRemoved(String, revision: UInt64)
    case thingsReplaced(revision: UInt64)
    /// For ``WriteRequest/announce(topic:)``: the revision taken (the event is already recorded).
    case announced(revision: UInt64)
}

/// Why a write was refused or not made durable.
enum WriteFailure: Error, Sendable {
    case invalidPreferences(PreferenceValidationError)
    case thing(ThingError)
    /// A thing whose path would be another resource's (`/things/events` is the stream).
    case reservedThing(String)
    /// `If-Match` named another revision than the key has (or will have once queued writes land).
    case preconditionFailed(key: String, current: UInt64)
    /// The store could not commit; nothing was applied.
    case storeFailed(String)
}

/// Where committed operations go (the SQLite store in the server).
protocol DurableLog: Sendable {
    func commit(_ operations: [StoreOperation]) async throws -> [UInt64]
}

extension SQLiteStore: DurableLog {}

/// The write path: check on the loop, commit durably off the loop, then apply in memory,
/// record the events, announce on the per-key subjects, and answer — in that order.
///
/// Writes that arrive while a commit runs queue up and go to the store together as the next
/// batch (group commit). Each queued write is checked against a *shadow* of the state as it
/// will be after the writes before it, so two clients adding the same thing in one batch get
/// 201 and 409, never two rows. Confined to the main actor (the event loop).
@MainActor
final class WritePipeline {
    typealias Completion = @MainActor (Result<WriteOutcome, WriteFailure>) -> Void

    private struct Queued {
        let request: WriteRequest
        let completion: Completion
    }

    /// A checked write, ready to commit.
    private struct Planned {
        let operations: [StoreOperation]
        let changedPreferences: [ValidatedChanges.Entry]
        let completion: Completion
        let request: WriteRequest
    }

    private let state: TidingsState
    private let log: any DurableLog
    private var queue: [Queued] = []
    private var committing = false
    private var drainWaiters: [CheckedContinuation<Void, Never>] = []
    /// Called after every commit with how long the store took (for metrics).
    var onCommit: (@MainActor (_ seconds: Double, _ operations: Int) -> Void)?

    init(state: TidingsState, log: any DurableLog) {
        self.state = state
        self.log = log
    }

    /// Queues `request`; `completion` runs on the loop once it is durable and applied, or refused.
    func submit(_ request: WriteRequest, completion: @escaping Completion) {
        queue.append(Queued(request: request, completion: completion))
        if !committing { flush() }
    }

    /// True while nothing is queued or committing.
    var isIdle: Bool { queue.isEmpty && !committing }

    /// Returns once every write submitted so far is committed and answered (graceful shutdown).
    func drain() async {
        if isIdle { return }
        await withCheckedContinuation { drainWaiters.append($0) }
    }

    // MARK: Batching

    private func flush() {
        guard !committing else { return }
        guard !queue.isEmpty else {
            let waiters = drainWaiters
            drainWaiters = []
            waiters.forEach { $0.resume() }
            return
        }
        let batch = queue
        queue = []
        var shadow = Shadow(state)
        var planned: [Planned] = []
        for item in batch {
            switch plan(item.request, against: &shadow) {
            case let .failure(failure):
                item.completion(.failure(failure))
            case let .success((operations, entries)):
                planned.append(Planned(operations: operations, changedPreferences: entries,
                                       completion: item.completion, request: item.request))
            }
        }
        guard !planned.isEmpty else { return flush() }
        committing = true
        Task { await commit(planned) }
    }

    private func commit(_ planned: [Planned]) async {
        let operations = planned.flatMap(\.operations)
        let started = ContinuousClock.now
        if operations.isEmpty {
            planned.forEach { apply($0, revisions: []) }
        } else {
            do {
                let revisions = try await log.commit(operations)
                report(since: started, operations: operations.count)
                var offset = 0
                for item in planned {
                    apply(item, revisions: Array(revisions[offset..<offset + item.operations.count]))
                    offset += item.operations.count
                }
            } catch {
                // One batch, one transaction: find out whose write failed by committing each
                // on its own, so one bad write never costs the others theirs.
                for item in planned {
                    guard !item.operations.isEmpty else { apply(item, revisions: []); continue }
                    do {
                        let revisions = try await log.commit(item.operations)
                        apply(item, revisions: revisions)
                    } catch {
                        item.completion(.failure(.storeFailed(String(describing: error))))
                    }
                }
            }
        }
        committing = false
        flush()
    }

    private func report(since started: ContinuousClock.Instant, operations: Int) {
        guard let onCommit else { return }
        let elapsed = ContinuousClock.now - started
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
        onCommit(seconds, operations)
    }

    // MARK: Checking against the shadow

    /// Things that would shadow a route under `/things/`.
    private static let reservedThings: Set<String> = ["events"]

    private func plan(_ request: WriteRequest, against shadow: inout Shadow)
        -> Result<([StoreOperation], [ValidatedChanges.Entry]), WriteFailure>
    {
        switch request {
        case let .preferences(patch, ifMatch):
            let validated: ValidatedChanges
            do { validated = try state.preferences.validate(patch) } catch {
                return .failure(.invalidPreferences(error))
            }
            for (key, accepted) in ifMatch.sorted(by: { $0.key < $1.key })
            where !(shadow.revision(of: key).map(accepted.contains) ?? false) {
                return .failure(.preconditionFailed(key: key, current: state.revision(ofPreference: key)))
            }
            var operations: [StoreOperation] = []
            var changed: [ValidatedChanges.Entry] = []
            for entry in validated.entries where shadow.values[entry.key] != entry.newValue {
                shadow.values[entry.key] = entry.newValue
                shadow.pendingKeys.insert(entry.key)
                changed.append(entry)
                if let stored = entry.storedValue {
                    operations.append(.setPreference(key: entry.key, json: EventFrame.json(stored)))
                } else {
                    operations.append(.resetPreference(key: entry.key))
                }
            }
            return .success((operations, changed))
        case let .addThing(raw):
            do {
                let thing = try ThingRules.validateAdd(raw, to: shadow.thingSet, textCase: state.textCase)
                if Self.reservedThings.contains(thing) { return .failure(.reservedThing(thing)) }
                shadow.thingSet.insert(thing)
                shadow.thingList.append(thing)
                return .success(([.addThing(thing)], []))
            } catch {
                return .failure(.thing(error))
            }
        case let .removeThing(raw):
            let thing = ThingRules.normalize(raw, textCase: state.textCase)
            guard shadow.thingSet.remove(thing) != nil else { return .failure(.thing(.notFound(thing))) }
            shadow.thingList.removeAll { $0 == thing }
            return .success(([.removeThing(thing)], []))
        case let .replaceThings(raws):
            do {
                let list = try ThingRules.validateList(raws, textCase: state.textCase)
                if let reserved = list.first(where: Self.reservedThings.contains) { return .failure(.reservedThing(reserved)) }
                // The same list in the same order changes nothing: no revision, no event.
                guard list != shadow.thingList else { return .success(([], [])) }
                shadow.thingSet = Set(list)
                shadow.thingList = list
                return .success(([.replaceThings(list)], []))
            } catch {
                return .failure(.thing(error))
            }
        case let .announce(topic):
            return .success(([.announce(topic: topic)], []))
        }
    }

    // MARK: Applying what is durable

    /// Memory, then journal, then subjects, then the answer. `revisions` pair with the operations.
    private func apply(_ item: Planned, revisions: [UInt64]) {
        switch item.request {
        case .preferences:
            var patch: [String: PreferenceInput] = [:]
            for (entry, revision) in zip(item.changedPreferences, revisions) {
                patch[entry.key] = .value(entry.newValue)
                state.recordPreference(entry.key, value: entry.newValue, revision: revision)
            }
            if !patch.isEmpty, let validated = try? state.preferences.validate(PreferencePatch(patch)) {
                state.preferences.apply(validated)
            }
            item.completion(.success(.preferences(changed: item.changedPreferences.map(\.key))))
        case .addThing:
            guard case let .addThing(thing)? = item.operations.first else { return }
            state.recordThings(state.things.things + [thing], revision: revisions[0], op: "add", thing: thing)
            state.things.apply(.add(thing))
            item.completion(.success(.thingAdded(thing, revision: revisions[0])))
        case .removeThing:
            guard case let .removeThing(thing)? = item.operations.first else { return }
            state.recordThings(state.things.things.filter { $0 != thing }, revision: revisions[0], op: "remove", thing: thing)
            state.things.apply(.remove(thing))
            item.completion(.success(.thingRemoved(thing, revision: revisions[0])))
        case .replaceThings:
            guard case let .replaceThings(list)? = item.operations.first else {
                // The list was already this one: nothing stored, the revision stays.
                item.completion(.success(.thingsReplaced(revision: state.thingsRevision)))
                return
            }
            state.recordThings(list, revision: revisions[0], op: "replace", thing: nil)
            state.things.apply(.replaceAll(list))
            item.completion(.success(.thingsReplaced(revision: revisions[0])))
        case .announce:
            item.completion(.success(.announced(revision: revisions[0])))
        }
    }
}

/// The state as it will be once every queued write before the current one is applied.
@MainActor
private struct Shadow {
    var values: [String: PreferenceValue]
    var thingSet: Set<String>
    /// The list in order, so replacing it with an identical list is recognised as no change.
    var thingList: [String]
    /// Keys changed by a queued write: their future revision is unknown, so `If-Match` fails.
    var pendingKeys: Set<String> = []
    private let revisions: [String: UInt64]

    init(_ state: TidingsState) {
        values = state.preferences.values
        thingList = state.things.things
        thingSet = Set(thingList)
        revisions = state.preferenceRevisions
    }

    func revision(of key: String) -> UInt64? {
        pendingKeys.contains(key) ? nil : (revisions[key] ?? 0)
    }
}
