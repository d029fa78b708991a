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
