import Foundation
import Logging
import TidingsStore

/// Every environment in memory, and the one place committed changes reach them: the
/// ``ChangeFeed`` applies each change here, strictly in global revision order, and it goes to
/// the state of the environment it happened in. Creating and deleting environments are changes
/// too, so every instance sharing the store follows them from the same ordered sequence.
///
/// Posts are one feed: their changes go to `default`'s state (which holds the document) and
/// their events into every environment's journal, so a resume in any environment replays them.
///
/// Main-actor bound (the event loop).
@MainActor
final class Environments: AppliesChanges {
    /// Builds an environment's context from the store's record of it and the snapshot it is
    /// part of (the global revision it starts at).
    typealias Factory = @MainActor (_ stored: StoredEnvironment, _ snapshot: StoreSnapshot) -> EnvironmentContext

    let clock: RevisionClock
    /// `default`: always there, never replaced (a reload rebuilds it in place).
    let main: EnvironmentContext
    private(set) var contexts: [String: EnvironmentContext]
    private let factory: Factory
    private let logger: Logger
    /// Called with each environment made after start-up (its routes are installed here).
    var onCreate: [@MainActor (EnvironmentContext) -> Void] = []
    /// `--max-environments`.
    let limit: Int
    /// Reads what other instances committed and applies it (``ChangeFeed/caughtUp()``); set once
    /// the feed runs.
    var catchUp: (@MainActor () async -> Void)?
    /// Requests waiting in ``knowing(_:then:)``, and how many may.
    private var waiting = 0
    static let maxWaiting = 1024
    /// How long a request waits for the store before its environment counts as unknown.
    static let catchUpDeadline: Duration = .seconds(1)

    init(main: EnvironmentContext, snapshot: StoreSnapshot, limit: Int, logger: Logger, factory: @escaping Factory) {
        self.main = main
        self.clock = main.state.clock
        self.contexts = [main.name: main]
        self.factory = factory
        self.logger = logger
        self.limit = limit
        for (name, stored) in snapshot.environments where name != main.name {
            contexts[name] = factory(stored, snapshot)
        }
    }

    /// The environment `name`, or nil when there is none.
    func context(_ name: String) -> EnvironmentContext? { contexts[name] }

    /// Runs `then` now when every one of `names` is an environment here (or cannot be one), else
    /// once this instance has read what other instances committed (``afterCatchingUp(then:)``):
    /// an environment created through another instance is in the store before its change
    /// reaches this one (up to about 100 ms), and must not be a 404 meanwhile.
    func knowing(_ names: [String], then: @escaping @MainActor () -> Void) {
        let unknown = names.contains { contexts[$0] == nil && EnvironmentName.isValid($0) }
        guard unknown else { return then() }
        afterCatchingUp(then: then)
    }

    /// Runs `then` once this instance has read what other instances committed before the call
    /// (``ChangeFeed/caughtUp()``), so what it answers is what the store knows — an environment
    /// created or deleted through another instance a moment ago included (`GET /environments`,
    /// an unknown name). Cheap: waiting requests share the change feed's one read at a time (an
    /// empty page when nothing is new), at most ``maxWaiting`` wait (beyond, and after
    /// ``catchUpDeadline``, `then` runs as things stand).
    func afterCatchingUp(then: @escaping @MainActor () -> Void) {
        guard let catchUp, waiting < Self.maxWaiting else { return then() }
        waiting += 1
        var answered = false
        let answer: @MainActor () -> Void = { [weak self] in
            guard !answered else { return }
            answered = true
            self?.waiting -= 1
            then()
        }
        let deadline = Task { @MainActor in
            try? await Task.sleep(for: Self.catchUpDeadline)
            answer()
        }
        Task { @MainActor in
            await catchUp()
            deadline.cancel()   // no sleeper outlives its request (a flood of names would pile them up)
            answer()
        }
    }

    /// Every environment, `default` first, then by name.
    var all: [EnvironmentContext] {
        [main] + contexts.values.filter { $0.name != main.name }.sorted { $0.name < $1.name }
    }

    // MARK: AppliesChanges

    var revision: UInt64 { clock.revision }

    func committed(_ change: Change) -> CommittedChange { main.state.committed(change) }

    func apply(_ committed: CommittedChange) -> Bool {
        let change = committed.change
        guard change.revision == clock.revision + 1 else { return false }
        switch change.kind {
        case .posts:
            _ = main.state.apply(committed)
            if let entry = TidingsState.entry(for: committed) {
                for context in contexts.values where context !== main { context.state.journal.append(entry) }
            }
        case let .environment(.created, copiedFrom):
            clock.revision = change.revision
            if contexts[change.environment] == nil {
                let stored = StoredEnvironment(name: change.environment, createdAt: change.at, copiedFrom: copiedFrom,
                                               revision: change.revision)
                var empty = StoreSnapshot(revision: change.revision, preferences: [:], things: [], thingsRevision: 0)
                empty.environments = [change.environment: stored]
                add(factory(stored, empty))
            }
        case .environment(.deleted, _):
            clock.revision = change.revision
            remove(change.environment, reason: "the environment \(change.environment) was deleted")
        case .environment(.erased, _):
            clock.revision = change.revision
        case .preference, .things:
            if let context = contexts[change.environment] {
                _ = context.state.apply(committed)
                context.revision = change.revision
            } else {
                clock.revision = change.revision
            }
        }
        return true
    }

    func reload(_ snapshot: StoreSnapshot) {
        for (name, context) in contexts where snapshot.environments[name] == nil && context !== main {
            remove(name, reason: "this server caught up from a snapshot; the environment \(name) is gone")
        }
        for (name, stored) in snapshot.environments {
            if let context = contexts[name] {
                context.state.reload(snapshot)
                context.revision = stored.revision
            } else {
                add(factory(stored, snapshot))
            }
        }
        if snapshot.environments[main.name] == nil { main.state.reload(snapshot) }
        clock.revision = snapshot.revision
    }

    private func add(_ context: EnvironmentContext) {
        contexts[context.name] = context
        for hook in onCreate { hook(context) }
        logger.info("environment created", metadata: ["environment": "\(context.name)"])
    }

    private func remove(_ name: String, reason: String) {
        guard name != main.name, let context = contexts.removeValue(forKey: name) else { return }
        context.streams.endAll(reason: reason)
        logger.info("environment deleted", metadata: ["environment": "\(name)"])
    }

    /// Returns once every environment's writes submitted so far are answered (shutdown).
    func drain() async {
        for context in all { await context.writes.drain() }
    }
}
