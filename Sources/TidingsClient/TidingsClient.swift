public import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Observing
public import OpenCombine

/// A connection to one Tidings server: its preferences as a ``KeyValueStore`` for the
/// library's containers and wrappers, its things and posts as observable objects, all kept
/// live by one multiplexed event stream (`GET /events`).
///
/// ```swift
/// let client = TidingsClient(url: URL(string: "http://127.0.0.1:8080")!)
/// let settings = AppSettings(store: client.preferences)   // @UserDefault/@CloudStorage properties
/// client.connect()
/// settings.preferences.publisher(forKey: "age")!.sink { print("age is", $0) }
/// settings.age = 6                                        // PUT /preferences/age, If-Match
/// ```
///
/// The stream reconnects by itself (``ReconnectPolicy``, the server's `retry:`), resumes with
/// `Last-Event-ID` so that no change is missed or repeated, and takes a `reset` and the fresh
/// snapshot after it in its stride. Confined to the main actor.
@MainActor
public final class TidingsClient {
    /// What the client's stream covers and how it reconnects.
    public struct Configuration: Sendable {
        public var url: URL
        public var credentials: TidingsCredentials
        /// The preference keys to observe (nil: every key the server declares).
        public var preferenceKeys: [String]?
        public var observesThings: Bool
        public var observesPosts: Bool
        public var reconnect: ReconnectPolicy
        /// Seconds without a byte (not even a heartbeat) after which the stream is reopened.
        public var streamIdleTimeout: TimeInterval
        /// The largest event (and line) the stream accepts; a larger one drops the connection.
        /// Big enough for a posts feed at the server's 8 MiB upstream limit, re-encoded.
        public var maxEventBytes: Int
        /// The environment every read, write and stream addresses (nil: `default`, through the
        /// unprefixed paths); `staging` talks to `<url>/environments/staging/...`.
        public var environment: String?

        public init(url: URL, credentials: TidingsCredentials = .none, preferenceKeys: [String]? = nil,
                    observesThings: Bool = true, observesPosts: Bool = true,
                    reconnect: ReconnectPolicy = ReconnectPolicy(), streamIdleTimeout: TimeInterval = 60,
                    maxEventBytes: Int = 32 << 20, environment: String? = nil) {
            self.environment = environment
            self.url = url
            self.credentials = credentials
            self.preferenceKeys = preferenceKeys
            self.observesThings = observesThings
            self.observesPosts = observesPosts
            self.reconnect = reconnect
            self.streamIdleTimeout = streamIdleTimeout
            self.maxEventBytes = maxEventBytes
        }
    }

    public let configuration: Configuration
    /// The server's preferences: hand it to a ``Preferences`` container as its store.
    public let preferences: RemotePreferenceStore
    public let things: RemoteThings
    public let posts: RemotePosts

    let transport: Transport
    private let connection: EventStreamConnection
    private let eventSubject = PassthroughSubject<ServerSentEvent, Never>()
    private let resetSubject = PassthroughSubject<String, Never>()
    private var tracker = ResumeTracker()
    /// The server's keys as last listed, so that a snapshot can be known complete.
    private var serverKeys: [String]?

    public init(configuration: Configuration) {
        self.configuration = configuration
        var base = configuration.url
        if let environment = configuration.environment {
            base = base.appendingPathComponent("environments").appendingPathComponent(environment)
        }
        let transport = Transport(baseURL: base, credentials: configuration.credentials,
                                  maxBodyBytes: max(16 << 20, configuration.maxEventBytes),
                                  streamIdleTimeout: configuration.streamIdleTimeout)
        self.transport = transport
        preferences = RemotePreferenceStore(transport: transport)
        things = RemoteThings(transport: transport)
        posts = RemotePosts(transport: transport)
        connection = EventStreamConnection(transport: transport, policy: configuration.reconnect,
                                           maxEventBytes: configuration.maxEventBytes)
        connection.makeRequest = { [weak self] lastEventID throws(TidingsClientError) in
            guard let self else { throw .transport("the client is gone") }
            return try await self.streamRequest(lastEventID: lastEventID)
        }
        connection.onOpen = { [weak self] in self?.streamOpened() }
        connection.onEvent = { [weak self] in self?.handle($0) }
        connection.resumeID = { [weak self] in self?.tracker.resumeID.map(String.init) }
    }

    deinit { connection.cancel() }

    public convenience init(url: URL, credentials: TidingsCredentials = .none) {
        self.init(configuration: Configuration(url: url, credentials: credentials))
    }

    /// Opens the event stream (and keeps it open until ``disconnect()``).
    public func connect() { connection.start() }

    /// Closes the event stream for good.
    public func disconnect() { connection.stop() }

    /// The stream's state: the current one on subscription, then each change.
    public var connectionState: AnyPublisher<ConnectionState, Never> { connection.state.eraseToAnyPublisher() }

    /// Every event the stream delivered, as parsed (for logging and tools).
    public var events: AnyPublisher<ServerSentEvent, Never> { eventSubject.eraseToAnyPublisher() }

    /// The reason of each `reset` the server sent (a fresh snapshot follows it).
    public var resets: AnyPublisher<String, Never> { resetSubject.eraseToAnyPublisher() }

    /// The id the stream would resume after if it reconnected now (nil: it would ask for a
    /// snapshot).
    public var resumeRevision: UInt64? { tracker.resumeID }

    /// `POST /stream-tickets`: a one-use ticket for opening one event stream within its lifetime.
    public func issueStreamTicket() async throws(TidingsClientError) -> String {
        struct Answer: Decodable { let ticket: String }
        return try await transport.expectSuccess("POST", ["stream-tickets"]).decode(Answer.self).ticket
    }

    // MARK: The stream

    private func streamRequest(lastEventID: String?) async throws(TidingsClientError) -> URLRequest {
        let wantsPreferences = configuration.preferenceKeys.map { !$0.isEmpty } ?? true
        if lastEventID == nil, wantsPreferences, configuration.preferenceKeys == nil {
            // A snapshot is coming: learn which keys it will hold, to know when it is complete.
            serverKeys = Array(try await preferences.fetchAll().keys)
        }
        var topics: [String] = []
        if wantsPreferences { topics.append("preferences") }
        if configuration.observesThings { topics.append("things") }
        if configuration.observesPosts { topics.append("posts") }
        var query = [("topics", topics.joined(separator: ","))]
        if let keys = configuration.preferenceKeys, !keys.isEmpty { query.append(("keys", keys.joined(separator: ","))) }
        if case .bearerWithStreamTickets = configuration.credentials {
            query.append(("ticket", try await issueStreamTicket()))
        }
        var request = transport.request(transport.url(["events"], query: query), timeout: configuration.streamIdleTimeout)
        if case .bearerWithStreamTickets = configuration.credentials {
            request.setValue(nil, forHTTPHeaderField: "Authorization")
        }
        request.setValue("text/event-stream", forHTTPHeaderField: "Accept")
        if let lastEventID { request.setValue(lastEventID, forHTTPHeaderField: "Last-Event-ID") }
        return request
    }

    /// What a snapshot of this stream holds: one item per key, `things`, `posts`.
    private var snapshotItems: Set<String>? {
        var items: Set<String> = []
        if let keys = configuration.preferenceKeys ?? serverKeys {
            items.formUnion(keys.map { "preference:" + $0 })
        } else if configuration.preferenceKeys == nil {
            return nil
        }
        if configuration.observesThings { items.insert("things") }
        if configuration.observesPosts { items.insert("posts") }
        return items
    }

    private func streamOpened() {
        if tracker.resumeID == nil { tracker.expectSnapshot(of: snapshotItems, afterReset: tracker.inSnapshotAfterReset) }
    }

    private func handle(_ event: ServerSentEvent) {
        eventSubject.send(event)
        let id = UInt64(event.lastEventID)
        let data = Data(event.data.utf8)
        var item: String?
        switch event.type {
        case "preference":
            guard let change = try? JSONDecoder().decode(PreferenceRecord.self, from: data) else { return }
            preferences.receive(change, afterReset: tracker.inSnapshotAfterReset)
            item = "preference:" + change.key
        case "things":
            guard let snapshot = try? JSONDecoder().decode(ThingsSnapshot.self, from: data) else { return }
            things.receive(snapshot, afterReset: tracker.inSnapshotAfterReset)
            item = "things"
        case "posts":
            guard let state = try? JSONDecoder().decode(PostsFeedState.self, from: data) else { return }
            posts.receive(state, revision: id, isEvent: true)
            item = "posts"
        case "reset":
            struct Reset: Decodable { let reason: String }
            let reason = (try? JSONDecoder().decode(Reset.self, from: data))?.reason ?? event.data
            tracker.expectSnapshot(of: snapshotItems, afterReset: true)
            posts.forgetRevision()
            resetSubject.send(reason)
            return
        default:
            return
        }
        if let id, let item { tracker.applied(item, id: id) }
    }
}

/// Decides the `Last-Event-ID` of the next connection. Events of a snapshot all carry the
/// same id, so that id counts as seen only once the whole snapshot was applied (else a
/// connection cut mid-snapshot would resume after it and never get the rest); until then a
/// reconnect asks for a fresh snapshot.
struct ResumeTracker {
    private(set) var resumeID: UInt64?
    private var snapshot: (id: UInt64?, missing: Set<String>?, afterReset: Bool)?

    var inSnapshotAfterReset: Bool { snapshot?.afterReset ?? false }

    /// A snapshot of `items` comes next (nil: its size is unknown; it then ends with the first
    /// newer event).
    mutating func expectSnapshot(of items: Set<String>?, afterReset: Bool) {
        snapshot = (nil, items, afterReset)
        resumeID = nil
    }

    mutating func applied(_ item: String, id: UInt64) {
        guard var current = snapshot else {
            resumeID = id
            return
        }
        if let snapshotID = current.id, id != snapshotID {
            // A newer event: the snapshot is over.
            snapshot = nil
            resumeID = id
            return
        }
        current.id = id
        current.missing?.remove(item)
        if let missing = current.missing, missing.isEmpty {
            snapshot = nil
            resumeID = id
        } else {
            snapshot = current
        }
    }
}
