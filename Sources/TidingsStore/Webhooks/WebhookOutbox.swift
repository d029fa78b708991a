/// Where one webhook stands in the change table: its durable outbox cursor (API.md "Changes as
/// code, on a schedule, and to webhooks"). Nothing is copied into an outbox: a hook's pending
/// deliveries are the change records after ``cursor`` that it covers, read from the change
/// table (the history) when they are sent, so a restart or SIGKILL loses none of them.
public struct WebhookCursor: Sendable, Hashable {
    /// Whether deliveries are made.
    public enum State: String, Sendable, Hashable {
        /// Delivering (or waiting for its next attempt).
        case active
        /// Retried for the whole retry window without success: no more automatic attempts until
        /// `POST /webhooks/{name}/retry`; the backlog is kept.
        case failing
        /// The receiver answered 410 Gone: nothing more is sent until a retry.
        case disabled
    }

    /// The hook's name (from `--webhooks FILE`).
    public var name: String
    /// Every change up to this revision is delivered or not covered by the hook.
    public var cursor: UInt64
    /// The revision of the last change delivered (nil: none yet).
    public var lastDelivered: UInt64?
    public var state: State
    /// Failed attempts at the change after ``cursor`` (0 when the last one succeeded).
    public var attempts: Int
    /// When the next attempt is due (milliseconds since 1970); nil: at once.
    public var nextAttempt: Int64?
    /// Why the last attempt failed (nil after a success).
    public var lastError: String?
    /// When the first of the current run of failed attempts was made (milliseconds since 1970).
    public var failingSince: Int64?

    public init(name: String, cursor: UInt64, lastDelivered: UInt64? = nil, state: State = .active, attempts: Int = 0,
                nextAttempt: Int64? = nil, lastError: String? = nil, failingSince: Int64? = nil) {
        self.name = name
        self.cursor = cursor
        self.lastDelivered = lastDelivered
        self.state = state
        self.attempts = attempts
        self.nextAttempt = nextAttempt
        self.lastError = lastError
        self.failingSince = failingSince
    }
}

/// Which change records a hook covers: the history's `topics` and `keys`, and the
/// environments they were made in.
public struct WebhookCoverage: Sendable, Hashable {
    public var preferences: Bool
    public var things: Bool
    /// Only these preference keys (nil: every key).
    public var keys: [String]?
    /// Only changes made in these environments (nil: every one).
    public var environments: [String]?

    public init(preferences: Bool = true, things: Bool = true, keys: [String]? = nil, environments: [String]? = nil) {
        self.preferences = preferences
        self.things = things
        self.keys = keys
        self.environments = environments
    }

    /// The history reader's selection of environments for this coverage.
    public var environmentSelection: HistoryQuery.EnvironmentSelection {
        environments.map { .named($0) } ?? .every
    }

    /// Whether `change` is one of the records the hook is sent (posts documents never are).
    public func covers(_ change: Change) -> Bool {
        if let environments, !environments.contains(change.environment) { return false }
        switch change.kind {
        case let .preference(key, _): return preferences && (keys?.contains(key) ?? true)
        case .things: return things
        case .posts, .environment: return false
        }
    }
}

/// A store that keeps webhook outboxes beside its change table.
public protocol WebhookOutboxProvider: Sendable {
    /// The outboxes, on a connection of their own where that keeps their small writes off the
    /// commit path; ``WebhookOutboxStore/closeOutbox()`` when done.
    func webhookOutbox() throws -> any WebhookOutboxStore
}

/// The webhook outboxes a store keeps beside its change table: one cursor row per hook.
/// Several instances share them; which instance delivers for a hook is decided by the store's
/// lease `webhook:<name>` (``ChangeStore/acquireLease(_:holder:duration:)``), and only the
/// lease holder saves the cursor.
public protocol WebhookOutboxStore: Sendable {
    /// Every hook's row (also of hooks no longer configured).
    func webhookCursors() async throws -> [WebhookCursor]

    /// The hook's row, created at the store's current revision when it has none: a new hook
    /// is sent the changes made from now on, not the whole history.
    func registerWebhook(_ name: String) async throws -> WebhookCursor

    /// Replaces the hook's row.
    func saveWebhookCursor(_ cursor: WebhookCursor) async throws

    /// How many change records after `revision` the coverage takes in (the hook's backlog).
    func countChanges(after revision: UInt64, covered coverage: WebhookCoverage) async throws -> Int

    /// Closes what ``WebhookOutboxProvider/webhookOutbox()`` opened for it (idempotent).
    func closeOutbox() async
}
