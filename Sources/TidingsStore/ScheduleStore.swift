/// A change planned for a time (API.md "Changes as code": schedules), as the store keeps it.
public struct StoredSchedule: Sendable, Hashable {
    /// What became of it.
    public enum State: String, Sendable, Hashable, CaseIterable {
        case pending, applied, failed, cancelled
    }

    public var id: String
    public var environment: String
    /// When it falls due: microseconds since 1970 (UTC).
    public var at: Int64
    /// What to apply, as JSON text (`{"preferences"?, "things"?, "rollback"?, "reason"?}`).
    public var body: String
    /// The name of the credential that made it (the actor of its write).
    public var createdBy: String
    public var createdAt: Int64
    public var state: State
    /// The revision its write left the store at (applied).
    public var revision: UInt64?
    /// Why it failed (failed).
    public var detail: String?
    /// Applied after the time it was due by more than an instance running would have let pass.
    public var late: Bool
    /// When it was applied, failed or cancelled.
    public var finishedAt: Int64?

    public init(id: String, environment: String, at: Int64, body: String, createdBy: String, createdAt: Int64,
                state: State = .pending, revision: UInt64? = nil, detail: String? = nil, late: Bool = false,
                finishedAt: Int64? = nil) {
        self.id = id
        self.environment = environment
        self.at = at
        self.body = body
        self.createdBy = createdBy
        self.createdAt = createdAt
        self.state = state
        self.revision = revision
        self.detail = detail
        self.late = late
        self.finishedAt = finishedAt
    }
}

/// Bounds on what schedules may hold in the store.
public struct ScheduleLimits: Sendable, Hashable {
    /// Pending schedules at most (API.md: 10,000).
    public var maxPending: Int
    /// Bytes of pending schedules' bodies at most.
    public var maxPendingBytes: Int
    /// Finished (applied, failed, cancelled) schedules kept, newest first; older ones are dropped.
    public var keepFinished: Int

    public init(maxPending: Int = 10_000, maxPendingBytes: Int = 64 << 20, keepFinished: Int = 10_000) {
        self.maxPending = maxPending
        self.maxPendingBytes = maxPendingBytes
        self.keepFinished = keepFinished
    }
}

/// What a schedule's own write records about it (``StoreWrite/schedule``), in the same
/// transaction: the schedule `id` becomes `applied` with the revision the write left the store
/// at — only while `holder` holds its claim and it is pending.
public struct ScheduleCompletion: Sendable, Hashable {
    public var id: String
    /// The instance that claimed it (``ScheduleStore/claimDueSchedules(now:holder:leaseMicroseconds:limit:)``).
    public var holder: String
    public var late: Bool
    /// Finished schedules kept (``ScheduleLimits/keepFinished``); older ones are dropped.
    public var keepFinished: Int

    public init(id: String, holder: String, late: Bool, keepFinished: Int = ScheduleLimits().keepFinished) {
        self.id = id
        self.holder = holder
        self.late = late
        self.keepFinished = keepFinished
    }
}

/// Why a schedule operation was refused.
public enum ScheduleStoreError: Error, Sendable, Equatable {
    /// As many schedules (or bytes) are pending as the limits allow.
    case tooManyPending(limit: Int)
    case tooManyPendingBytes(limit: Int)
    /// The schedule's environment does not exist (deleted meanwhile): nothing was stored.
    case unknownEnvironment(String)
}

/// What cancelling a schedule found.
public enum ScheduleCancellation: Sendable, Hashable {
    case cancelled(StoredSchedule)
    /// It is not pending (applied, failed, cancelled) or an instance is applying it now.
    case notPending(StoredSchedule)
    case notFound
}

/// Durable schedules, shared by every instance on the store. Each schedule is applied exactly
/// once: an instance *claims* due schedules (an atomic update that only takes pending ones
/// whose claim is free or expired) and applies each as one ordinary write that records the
/// outcome itself (``StoreWrite/schedule``): the write and `applied` commit together, and only
/// while the claim is still the writer's. A crash before that commit leaves the claim to expire
/// and the next claimer applies it; a crash after it leaves nothing to do. A schedule that
/// fails (its values no longer allowed, its rollback past the history) is *finished* as failed
/// by the holder of its claim.
///
/// The table is created by the first call (idempotently: several instances may start at once),
/// beside the change store's own schema, which it does not touch.
public protocol ScheduleStore: Sendable {
    /// Stores a new pending schedule unless `limits` are reached or its environment does not
    /// exist — decided against a delete of the environment committing at the same moment, so no
    /// pending schedule outlives its environment (the delete cancels those it finds).
    func createSchedule(_ schedule: StoredSchedule, limits: ScheduleLimits) async throws
    func schedule(id: String) async throws -> StoredSchedule?
    /// The schedules of `environment` (in one state, or all), by `at` then id, after the
    /// schedule at `after` (the `at` and id of the last one of the previous page), at most `limit`.
    func schedules(environment: String, state: StoredSchedule.State?, after: ScheduleCursor?, limit: Int) async throws -> [StoredSchedule]
    /// Cancels a pending schedule that no instance is applying at `now`.
    func cancelSchedule(id: String, now: Int64) async throws -> ScheduleCancellation
    /// Claims up to `limit` pending schedules due at `now` for `holder` until `now + leaseMicroseconds`.
    func claimDueSchedules(now: Int64, holder: String, leaseMicroseconds: Int64, limit: Int) async throws -> [StoredSchedule]
    /// Ends a claimed schedule as applied or failed; false if `holder` no longer holds it.
    func finishSchedule(id: String, holder: String, state: StoredSchedule.State, revision: UInt64?, detail: String?,
                        late: Bool, now: Int64, limits: ScheduleLimits) async throws -> Bool
    /// Gives a claim up (a write that could not be stored: try again soon).
    func releaseSchedule(id: String, holder: String) async throws
    /// The earliest `at` of a pending schedule.
    func nextScheduleTime() async throws -> Int64?
}

extension ScheduleStore {
    /// The first page of `environment`'s schedules (see ``schedules(environment:state:after:limit:)``).
    public func schedules(environment: String, state: StoredSchedule.State?, limit: Int) async throws -> [StoredSchedule] {
        try await schedules(environment: environment, state: state, after: nil, limit: limit)
    }
}

/// Where a page of schedules ends: the `at` and id of its last schedule (they are listed by
/// `at`, then id).
public struct ScheduleCursor: Sendable, Hashable {
    public var at: Int64
    public var id: String

    public init(at: Int64, id: String) {
        self.at = at
        self.id = id
    }
}
