import Foundation
import Logging
import TidingsStore

/// What every hook's worker shares: the store (its change table, outbox cursors and leases),
/// how records are written, the sender, the clocks, this instance's lease holder name.
struct WebhookContext {
    let store: any ChangeStore
    let outbox: any WebhookOutboxStore
    let sender: WebhookSender
    let timing: WebhookTiming
    /// This instance, as a lease holder.
    let holder: String
    let logger: Logger
    /// The body of a change's delivery, nil for a change that has no record (posts).
    let body: @MainActor (Change) -> [UInt8]?
}

/// Delivers one hook's backlog, in revision order, one record at a time: the records after the
/// hook's durable cursor that it covers, read from the change table (nothing is copied), each
/// POSTed until a 2xx, then the cursor saved past it. Only while this instance holds the hook's
/// lease (`webhook:<name>`), renewed before an attempt whenever less than the attempt's deadline
/// and some slack is left of it, so two instances never deliver for one hook at once.
///
/// Runs on the main actor, which only decides: the sends run on libcurl's threads and the
/// store's calls off the loop, so a receiver that never answers never holds a write or a stream.
@MainActor
final class WebhookWorker {
    private(set) var definition: WebhookDefinition
    private let context: WebhookContext
    private var task: Task<Void, Never>?
    private var stopped = false
    /// Until when this instance holds the lease (by its own clock; the store's decides).
    private var leaseUntil: ContinuousClock.Instant?
    /// True while an attempt is on its way to the receiver.
    private var sending = false
    /// The cursor row as this worker last read or saved it.
    private var row: WebhookCursor?
    /// True while the row in hand is known current (this instance holds the lease and has not
    /// slept since it read or saved it); otherwise it is read again first.
    private var rowIsCurrent = false
    private var lastBacklogReport: ContinuousClock.Instant?
    private var wakeUp: CheckedContinuation<Void, Never>?
    private var wokenEarly = false
    private var sleepNumber = 0
    private var timer: Task<Void, Never>?
    private let pageSize = 256
    /// Records after the cursor read ahead (one page of the history), oldest first.
    private var buffered: ArraySlice<Change> = []
    /// Whether that page was full (more may follow it in the store).
    private var bufferedWholePage = false

    init(definition: WebhookDefinition, context: WebhookContext) {
        self.definition = definition
        self.context = context
    }

    private var name: String { definition.name }
    private var leaseName: String { "webhook:\(definition.name)" }

    func start() {
        guard task == nil else { return }
        task = Task { @MainActor [weak self] in await self?.run() }
    }

    /// A reloaded file changed this hook (its URL, secret or coverage): used from the next attempt.
    func update(_ definition: WebhookDefinition) {
        self.definition = definition
        buffered = []
        wake(reread: true)
    }

    /// Something may be due: a new change, or (`reread`) a retry asked for, whose row the
    /// store holds now.
    func wake(reread: Bool = false) {
        if reread { rowIsCurrent = false }
        timer?.cancel()
        timer = nil
        if let wakeUp {
            self.wakeUp = nil
            wakeUp.resume()
        } else {
            wokenEarly = true
        }
    }

    /// Ends the worker (an attempt under way is abandoned, to be made again by whoever holds
    /// the lease next) and gives up the lease, so another instance can take over at once.
    ///
    /// An attempt cut off by the stop may still be read by the receiver after this instance
    /// closed the connection (a receiver works on what it read; it need not notice the close).
    /// Then the lease is kept another second (``WebhookTiming/abandonedAttemptGrace``), so the
    /// next instance's delivery does not overlap it; otherwise it ends at once.
    func stop() async {
        guard !stopped else { return }
        stopped = true
        let abandonsAttempt = sending
        task?.cancel()
        wake(reread: true)
        await task?.value
        if leaseUntil != nil {
            let rest = abandonsAttempt ? context.timing.abandonedAttemptGrace : .milliseconds(1)
            _ = try? await context.store.acquireLease(leaseName, holder: context.holder, duration: rest)
            leaseUntil = nil
        }
    }

    private func run() async {
        while !stopped {
            let pause: Duration
            do {
                pause = try await step()
            } catch {
                context.logger.warning("webhook \(name): \(error)")
                rowIsCurrent = false
                pause = .seconds(1)
            }
            if pause > .zero {
                rowIsCurrent = false
                await sleep(pause)
            }
        }
    }

    /// One decision: deliver the next record, or say how long there is nothing to do.
    private func step() async throws -> Duration {
        guard try await holdsLease() else {
            // Another instance delivers; keep what GET /webhooks and the metric show current.
            row = try await context.outbox.registerWebhook(name)
            await reportBacklog(force: false)
            return context.timing.standby
        }
        if !rowIsCurrent || row == nil {
            row = try await context.outbox.registerWebhook(name)
            rowIsCurrent = true
        }
        guard var row else { return .seconds(1) }
        await reportBacklog(force: false)
        guard row.state == .active else { return context.timing.standby }
        let now = Self.milliseconds(Date())
        if let next = row.nextAttempt, next > now {
            return min(.milliseconds(next - now), context.timing.standby)
        }

        // The next record the hook covers, from the page in hand or the next one read (the
        // history's own read, off the commit path, filtered by topics, keys and environments,
        // in one revision order across them); records the hook does not cover are passed over.
        while let first = buffered.first, first.revision <= row.cursor { buffered.removeFirst() }
        if buffered.isEmpty {
            let coverage = definition.coverage
            buffered = try await context.store.history(HistoryQuery(
                direction: .oldestFirst(after: row.cursor), limit: pageSize,
                preferences: coverage.preferences, things: coverage.things, keys: coverage.keys,
                environments: coverage.environmentSelection))[...]
            bufferedWholePage = buffered.count == pageSize
        }
        var next: (change: Change, body: [UInt8])?
        while let change = buffered.first {
            if definition.covers(change), let body = context.body(change) {
                next = (change, body)
                break
            }
            buffered.removeFirst()
            row.cursor = change.revision
        }
        guard let (change, body) = next else {
            if row.cursor != self.row?.cursor { try await save(row) }
            guard !bufferedWholePage else { return .zero }
            TidingsMetrics.shared.setWebhookBacklog(hook: name, count: 0)   // all caught up
            return context.timing.standby * 5
        }

        // The lease must outlast the attempt.
        guard try await holdsLease() else { return context.timing.standby }
        let id = "\(change.environment)-\(change.revision)"
        sending = true
        let attempt = await context.sender.send(body, id: id, to: definition)
        sending = false
        TidingsMetrics.shared.recordWebhookDelivery(hook: name, outcome: attempt.outcome)
        let finished = Self.milliseconds(Date())
        switch attempt {
        case .cancelled:
            return .zero
        case .delivered:
            row.cursor = change.revision
            row.lastDelivered = change.revision
            row.attempts = 0
            row.nextAttempt = nil
            row.failingSince = nil
            row.lastError = nil
            try await save(row)
            await reportBacklog(force: false)
            return .zero
        case .gone:
            row.state = .disabled
            row.nextAttempt = nil
            row.lastError = "the receiver answered 410 Gone: the hook is disabled until POST /webhooks/\(name)/retry"
            context.logger.warning("webhook \(name): \(row.lastError!)")
            try await save(row)
            return context.timing.standby
        case let .failed(reason), let .refused(reason):
            row.attempts += 1
            row.lastError = "revision \(change.revision): \(reason)"
            let since = row.failingSince ?? finished
            row.failingSince = since
            if Duration.milliseconds(finished - since) >= context.timing.giveUpAfter {
                row.state = .failing
                row.nextAttempt = nil
                context.logger.error("webhook \(name) is failing: retried for \(context.timing.giveUpAfter); its backlog is kept",
                                     metadata: ["lastError": "\(row.lastError!)"])
            } else {
                row.nextAttempt = finished + context.timing.delay(afterFailures: row.attempts).milliseconds
                context.logger.notice("webhook \(name): attempt \(row.attempts) failed; retrying",
                                      metadata: ["error": "\(row.lastError!)"])
            }
            try await save(row)
            return .zero
        }
    }

    private func save(_ row: WebhookCursor) async throws {
        try await context.outbox.saveWebhookCursor(row)
        self.row = row
    }

    /// Takes or renews the lease when less than ``WebhookTiming/leaseMargin`` of it is left.
    private func holdsLease() async throws -> Bool {
        let now = ContinuousClock.now
        if let leaseUntil, leaseUntil - now > context.timing.leaseMargin { return true }
        let granted = try await context.store.acquireLease(leaseName, holder: context.holder, duration: context.timing.lease)
        if granted {
            if leaseUntil == nil { rowIsCurrent = false }
            leaseUntil = now + context.timing.lease
        } else {
            leaseUntil = nil
            rowIsCurrent = false
        }
        return granted
    }

    /// Sets the backlog gauge, at most once a second.
    private func reportBacklog(force: Bool) async {
        let now = ContinuousClock.now
        if !force, let last = lastBacklogReport, now - last < .seconds(1) { return }
        lastBacklogReport = now
        guard let row else { return }
        if let count = try? await context.outbox.countChanges(after: row.cursor, covered: definition.coverage) {
            TidingsMetrics.shared.setWebhookBacklog(hook: name, count: count)
        }
    }

    /// Waits `duration`, or less when woken (a new change, a retry, a stop).
    private func sleep(_ duration: Duration) async {
        if wokenEarly || stopped {
            wokenEarly = false
            return
        }
        sleepNumber += 1
        let number = sleepNumber
        await withCheckedContinuation { continuation in
            wakeUp = continuation
            timer = Task { @MainActor [weak self] in
                try? await Task.sleep(for: duration)
                guard let self, self.sleepNumber == number, let wakeUp = self.wakeUp else { return }
                self.wakeUp = nil
                wakeUp.resume()
            }
        }
        wokenEarly = false
    }

    static func milliseconds(_ date: Date) -> Int64 { Int64(date.timeIntervalSince1970 * 1000) }
}
