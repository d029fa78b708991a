import EventHTTP
import Foundation
import HTTPTypes
import Logging
import TidingsStore

/// Applies schedules when they fall due (API.md "Changes as code"), on every instance: it
/// claims due schedules in the store (one instance gets each), checks each again against the
/// declarations, applies it as one ordinary write through its environment's write pipeline —
/// actor its creator, reason its own or `scheduled <id>` — and that write records `applied`
/// with the revision in its own transaction (``StoreWrite/schedule``), so the schedule is
/// applied exactly once whichever instance dies when; or it records `failed` with why. It
/// wakes at the earliest pending `at` (and at least every second, for schedules another
/// instance made), so a schedule is applied within a second of its time.
///
/// A schedule that fell due before this instance started, or more than ``lateAfter`` ago, is
/// applied with `late: true`: it was due while no instance could apply it.
///
/// A claim is given back whenever a schedule is left pending (its write or its history could not
/// be stored or read); when the store cannot take that either — the outage that failed the write
/// fails the release too — it is given back at the next look, before anything is claimed. (Left
/// to its lease, it would keep every schedule claimed with it from every instance for a minute.)
/// A due schedule another instance holds is that instance's to apply: this one looks again a
/// second later, not at once over and over.
///
/// Main-actor bound (the event loop).
@MainActor
final class ScheduleRunner {
    private let environments: Environments
    private let store: any ChangeStore & ScheduleStore
    private let logger: Logger
    let limits: ScheduleLimits
    /// This instance, as the holder of its claims.
    private let holder = UUID().uuidString
    private let startedAt = ScheduleClock.now
    private var timer: Task<Void, Never>?
    private var running = false
    private var checkAgain = false
    private var stopped = false
    /// Schedules this instance claimed, left pending and could not give back yet.
    private var unreleased: Set<String> = []

    /// How long a claim lasts: an instance that dies holding one leaves it to the next after this.
    static let leaseMicroseconds: Int64 = 60_000_000
    /// Applied later than this after its time: late.
    static let lateAfter: Int64 = 5_000_000
    /// The longest wait between two looks at the store.
    static let pollMicroseconds: Int64 = 1_000_000

    init(environments: Environments, store: any ChangeStore & ScheduleStore,
         limits: ScheduleLimits = ScheduleLimits(), logger: Logger) {
        self.environments = environments
        self.store = store
        self.limits = limits
        self.logger = logger
    }

    /// Starts looking (at once: schedules due while every instance was down apply now).
    func start() { check() }

    /// Stops for good (shutdown). A claim this instance holds expires and is taken by another.
    func stop() {
        stopped = true
        timer?.cancel()
        timer = nil
    }

    /// Looks at the store now (a schedule was made or cancelled here).
    func check() {
        guard !stopped else { return }
        if running {
            checkAgain = true
            return
        }
        running = true
        timer?.cancel()
        timer = nil
        Task { @MainActor in
            var next: Int64?
            repeat {
                checkAgain = false
                next = await applyDue()
            } while checkAgain && !stopped
            running = false
            arm(next)
        }
    }

    private func arm(_ next: Int64?) {
        guard !stopped else { return }
        let now = ScheduleClock.now
        let wait = max(0, min(next.map { $0 - now } ?? Self.pollMicroseconds, Self.pollMicroseconds))
        timer = Task { @MainActor [weak self] in
            try? await Task.sleep(for: .microseconds(wait))
            guard !Task.isCancelled else { return }
            self?.check()
        }
    }

    /// Claims and applies what is due; returns when to look next (nil: after the longest wait).
    private func applyDue() async -> Int64? {
        do {
            for id in unreleased.sorted() {
                try await store.releaseSchedule(id: id, holder: holder)
                unreleased.remove(id)
            }
            var lookedAt = ScheduleClock.now
            while !stopped {
                lookedAt = ScheduleClock.now
                let due = try await store.claimDueSchedules(now: lookedAt, holder: holder, leaseMicroseconds: Self.leaseMicroseconds,
                                                            limit: 16)
                if due.isEmpty { break }
                var settled = true
                for schedule in due {
                    // Shutting down: what was not started goes back, for another instance to apply now.
                    if stopped { await release(schedule); continue }
                    settled = await apply(schedule) && settled
                }
                // One left pending (the store or history could not be reached): next look, not now.
                if !settled { return ScheduleClock.now + Self.pollMicroseconds }
            }
            guard let next = try await store.nextScheduleTime() else { return nil }
            // Due when this look claimed nothing more: another instance holds it (and applies it).
            return next <= lookedAt ? ScheduleClock.now + Self.pollMicroseconds : next
        } catch {
            logger.warning("cannot read the schedules; trying again", metadata: ["error": "\(error)"])
            return nil
        }
    }

    /// Applies one claimed schedule; false if it was left pending to be tried again.
    private func apply(_ schedule: StoredSchedule) async -> Bool {
        let late = schedule.at < startedAt || ScheduleClock.now - schedule.at > Self.lateAfter
        guard let work = ScheduleWork.stored(schedule.body) else {
            await finish(schedule, .failed, detail: "The stored schedule cannot be read.", late: late)
            return true
        }
        guard let environment = environments.context(schedule.environment) else {
            await finish(schedule, .failed, detail: "The environment \"\(schedule.environment)\" does not exist any more.", late: late)
            return true
        }
        // An environment deleted and made again since is another one: not the schedule's
        // (`default` is never deleted; its creation time may be a later upgrade's).
        guard environment === environments.main || environment.createdAt <= schedule.createdAt else {
            await finish(schedule, .failed, detail: "The environment \"\(schedule.environment)\" was deleted and created again "
                         + "after the schedule was made.", late: late)
            return true
        }
        let operations: [RollbackOperation]
        switch await SchedulePlanner.operations(work, state: environment.state, store: store) {
        case let .success(planned): operations = planned
        case let .failure(problem) where problem.status == .serviceUnavailable:
            // The history could not be read now: leave it pending for the next look.
            await release(schedule)
            return false
        case let .failure(problem):
            await finish(schedule, .failed, detail: ScheduleProblems.detail(problem), late: late)
            return true
        }
        let author = WriteAuthor(actor: schedule.createdBy, reason: work.reason ?? "scheduled \(schedule.id)")
        // The write marks the schedule applied itself, in its own transaction.
        let completion = ScheduleCompletion(id: schedule.id, holder: holder, late: late, keepFinished: limits.keepFinished)
        let result = await withCheckedContinuation { continuation in
            environment.writes.submit(.rollback(operations, ifRevision: nil), author: author, applying: completion) {
                continuation.resume(returning: $0)
            }
        }
        switch result {
        case let .success(.rolledBack(changes)):
            logger.info("schedule applied", metadata: ["id": "\(schedule.id)", "environment": "\(schedule.environment)",
                                                       "changes": "\(changes.count)", "late": "\(late)"])
        case .success:
            logger.info("schedule applied", metadata: ["id": "\(schedule.id)", "late": "\(late)"])
        case let .failure(.storeFailed(reason)):
            // Not stored (the store could not be reached, or the claim is another instance's
            // now): leave it pending; whoever holds it applies it.
            logger.notice("schedule not applied now; trying again", metadata: ["id": "\(schedule.id)", "reason": "\(reason)"])
            await release(schedule)
            return false
        case let .failure(failure):
            await finish(schedule, .failed, detail: ScheduleProblems.detail(Problems.forWrite(failure)), late: late)
        }
        return true
    }

    /// Gives a claim back (the schedule stays pending), now or, if the store cannot take it now,
    /// at the next look.
    private func release(_ schedule: StoredSchedule) async {
        do {
            try await store.releaseSchedule(id: schedule.id, holder: holder)
        } catch {
            unreleased.insert(schedule.id)
            logger.notice("cannot give a schedule's claim back now; at the next look", metadata: ["id": "\(schedule.id)", "error": "\(error)"])
        }
    }

    /// Records a schedule that was not applied (`failed`, with why).
    private func finish(_ schedule: StoredSchedule, _ outcome: StoredSchedule.State, detail: String?, late: Bool) async {
        do {
            let finished = try await store.finishSchedule(id: schedule.id, holder: holder, state: outcome, revision: nil, detail: detail,
                                                          late: late, now: ScheduleClock.now, limits: limits)
            if !finished { logger.warning("schedule was taken by another instance before it was finished", metadata: ["id": "\(schedule.id)"]) }
            if outcome == .failed { logger.warning("schedule failed", metadata: ["id": "\(schedule.id)", "detail": "\(detail ?? "")"]) }
        } catch {
            // Still claimed and pending: given back at the next look, and decided again.
            unreleased.insert(schedule.id)
            logger.error("cannot record a schedule's outcome; deciding again at the next look", metadata: ["id": "\(schedule.id)", "error": "\(error)"])
        }
    }
}

/// Wall-clock microseconds since 1970 (schedules are for a time of day, not a duration).
enum ScheduleClock {
    static var now: Int64 { Int64((Date().timeIntervalSince1970 * 1_000_000).rounded(.down)) }
}
