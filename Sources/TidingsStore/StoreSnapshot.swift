/// Everything the store holds, read once at start-up by ``SQLiteStore/loadSnapshot()``.
public struct StoreSnapshot: Sendable, Hashable {
    /// The global revision: the highest revision any change has taken (0 for a new store).
    public var revision: UInt64
    /// Every preference that was ever set or reset, by key.
    public var preferences: [String: StoredPreference]
    /// The things, in list order.
    public var things: [String]
    /// The revision of the last change to the things list (0 when never changed).
    public var thingsRevision: UInt64
    /// The posts document last stored with ``WriteOperation/setPosts(_:)`` and its revision.
    public var posts: StoredPosts?
    /// The database's identity (see ``ChangePage/identity``); nil when the store has none.
    public var identity: String?
    /// Every environment, `default` included (whose state is also ``preferences``, ``things``
    /// and ``thingsRevision``), by name.
    public var environments: [String: StoredEnvironment]

    public init(
        revision: UInt64, preferences: [String: StoredPreference],
        things: [String], thingsRevision: UInt64, posts: StoredPosts? = nil, identity: String? = nil
    ) {
        self.identity = identity
        self.revision = revision
        self.preferences = preferences
        self.things = things
        self.thingsRevision = thingsRevision
        self.posts = posts
        self.environments = [EnvironmentName.default: StoredEnvironment(
            name: EnvironmentName.default, preferences: preferences, things: things, thingsRevision: thingsRevision)]
    }
}

/// One environment as the store holds it.
public struct StoredEnvironment: Sendable, Hashable {
    public var name: String
    /// When it was created (microseconds since 1970; for `default`, when the store first had environments).
    public var createdAt: Int64
    public var copiedFrom: String?
    /// The revision of its latest change (0: none).
    public var revision: UInt64
    public var preferences: [String: StoredPreference]
    public var things: [String]
    public var thingsRevision: UInt64

    public init(name: String, createdAt: Int64 = 0, copiedFrom: String? = nil, revision: UInt64 = 0,
                preferences: [String: StoredPreference] = [:], things: [String] = [], thingsRevision: UInt64 = 0) {
        self.name = name
        self.createdAt = createdAt
        self.copiedFrom = copiedFrom
        self.revision = revision
        self.preferences = preferences
        self.things = things
        self.thingsRevision = thingsRevision
    }
}

/// A stored preference value and the revision that set it.
public struct StoredPreference: Sendable, Hashable {
    /// The value as JSON text, or `nil` when the key was reset to its default.
    public var json: String?
    /// The revision of the set or reset that produced this state.
    public var revision: UInt64

    public init(json: String?, revision: UInt64) {
        self.json = json
        self.revision = revision
    }
}

/// The stored posts document (one line of JSON) and the revision that stored it.
public struct StoredPosts: Sendable, Hashable {
    public var document: String
    public var revision: UInt64

    public init(document: String, revision: UInt64) {
        self.document = document
        self.revision = revision
    }
}
