import Foundation
import Logging
import Observing
import TidingsStore

/// The hooks of `--webhooks FILE` and their workers (API.md "Changes as code, on a schedule, and
/// to webhooks"): loads the file (a bad one stops start-up), starts one ``WebhookWorker`` per
/// hook, wakes them when a change is applied, swaps the set on SIGHUP (a bad file keeps the
/// hooks in force and logs why), and answers what `GET /webhooks` shows and what
/// `POST /webhooks/{name}/retry` asks.
///
/// With no file, nothing runs.
@MainActor
final class Webhooks {
    /// `GET /webhooks`'s view of one hook.
    struct Status {
        let definition: WebhookDefinition
        let row: WebhookCursor?
        let backlog: Int
    }

    private let path: String?
    private let state: TidingsState
    private let feed: ChangeFeed
    private let context: WebhookContext?
    private(set) var definitions: [WebhookDefinition]
    private var workers: [String: WebhookWorker] = [:]
    private var watching = false
    private var stopped = false
    private let logger: Logger

    init(configuration: TidingsConfiguration, store: any ChangeStore, state: TidingsState, feed: ChangeFeed,
         logger: Logger, environment: [String: String] = ProcessInfo.processInfo.environment) throws(StartupError) {
        path = configuration.webhooksFile
        self.state = state
        self.feed = feed
        self.logger = logger
        guard let path else {
            definitions = []
            context = nil
            return
        }
        do {
            definitions = try WebhooksFile.load(path: path, declaredKeys: state.preferences.declarations.map(\.key))
        } catch {
            throw StartupError(description: error.description)
        }
        let outbox: any WebhookOutboxStore
        do {
            guard let provider = store as? any WebhookOutboxProvider else {
                throw StartupError(description: "--webhooks: this store keeps no webhook outboxes")
            }
            outbox = try provider.webhookOutbox()
        } catch {
            throw StartupError(description: "--webhooks: cannot open the hooks' outboxes in the store: \(error)")
        }
        // Every hook's cursor exists before the first request is served: a hook new to the store
        // starts at the revision the store is at now, so no write can slip in before it.
        let names = definitions.map(\.name)
        do {
            try blockingAwait { for name in names { _ = try await outbox.registerWebhook(name) } }
        } catch {
            throw StartupError(description: "--webhooks: cannot read or create the hooks' cursors in the store: \(error)")
        }
        let timing = WebhookTiming.fromEnvironment(environment)
        let preferences = state.preferences
        context = WebhookContext(
            store: store, outbox: outbox,
            sender: WebhookSender(allowsPrivateAddresses: configuration.webhookAllowPrivate, timing: timing),
            timing: timing, holder: UUID().uuidString, logger: logger,
            body: { change in WebhookBody.bytes(change, preferences: preferences) })
    }

    /// Starts a worker per hook and the watch that wakes them on every applied change.
    func start() {
        guard let context, !stopped else { return }
        for definition in definitions where workers[definition.name] == nil {
            let worker = WebhookWorker(definition: definition, context: context)
            workers[definition.name] = worker
            worker.start()
        }
        if !watching {
            watching = true
            Task { @MainActor [weak self] in await self?.watchChanges() }
        }
        logger.info("webhooks: delivering to \(definitions.count) hook(s)")
    }

    /// Each applied change (this instance's or another's) wakes every worker; they read what
    /// is new from the store.
    private func watchChanges() async {
        while !stopped {
            let seen = state.revision
            await feed.waitUntilApplied(seen + 1)
            for worker in workers.values { worker.wake() }
        }
    }

    /// SIGHUP: reads the file again. A bad file keeps the hooks in force (logged); otherwise
    /// hooks removed stop, new ones start (from the current revision), changed ones go on
    /// from their cursor with the new URL, secret and coverage. True when the new set is in force.
    @discardableResult
    func reload() -> Bool {
        guard let path, context != nil, !stopped else { return false }
        let loaded: [WebhookDefinition]
        do {
            loaded = try WebhooksFile.load(path: path, declaredKeys: state.preferences.declarations.map(\.key))
        } catch {
            logger.error("kept the previous webhooks: \(error.description)")
            return false
        }
        Task { @MainActor in await swap(to: loaded, path: path) }
        return true
    }

    /// Puts a reloaded set in force once the new hooks' cursors exist (made at the revision the
    /// store is at then, before `GET /webhooks` shows them).
    private func swap(to loaded: [WebhookDefinition], path: String) async {
        guard let context else { return }
        for definition in loaded where workers[definition.name] == nil {
            do {
                _ = try await context.outbox.registerWebhook(definition.name)
            } catch {
                logger.error("kept the previous webhooks: cannot create the cursor of \(definition.name): \(error)")
                return
            }
        }
        guard !stopped else { return }
        let names = Set(loaded.map(\.name))
        for (name, worker) in workers where !names.contains(name) {
            workers[name] = nil
            Task { @MainActor in await worker.stop() }
        }
        for definition in loaded {
            if let worker = workers[definition.name], worker.definition != definition { worker.update(definition) }
        }
        definitions = loaded
        start()
        logger.notice("reloaded --webhooks file", metadata: ["path": "\(path)", "webhooks": "\(loaded.count)"])
    }

    /// Every configured hook as the store has it now, with its backlog.
    func statuses() async throws -> [Status] {
        guard let context else { return [] }
        let rows = Dictionary(try await context.outbox.webhookCursors().map { ($0.name, $0) }, uniquingKeysWith: { $1 })
        var statuses: [Status] = []
        for definition in definitions {
            let row = rows[definition.name]
            var backlog = 0
            if let row { backlog = try await context.outbox.countChanges(after: row.cursor, covered: definition.coverage) }
            statuses.append(Status(definition: definition, row: row, backlog: backlog))
        }
        return statuses
    }

    /// `POST /webhooks/{name}/retry`: the hook is active again with no attempt pending, so its
    /// backlog is sent now (by whichever instance holds its lease). Nil for an unknown hook.
    func retry(_ name: String) async throws -> Status? {
        guard let context, let definition = definitions.first(where: { $0.name == name }) else { return nil }
        var row = try await context.outbox.registerWebhook(name)
        row.state = .active
        row.attempts = 0
        row.nextAttempt = nil
        row.failingSince = nil
        try await context.outbox.saveWebhookCursor(row)
        workers[name]?.wake(reread: true)
        let backlog = try await context.outbox.countChanges(after: row.cursor, covered: definition.coverage)
        return Status(definition: definition, row: row, backlog: backlog)
    }

    /// Shutdown: stops every worker (attempts under way are abandoned, to be made again) and
    /// gives up their leases.
    func stop() async {
        stopped = true
        let all = Array(workers.values)
        workers = [:]
        for worker in all { await worker.stop() }
        await context?.outbox.closeOutbox()
    }
}
