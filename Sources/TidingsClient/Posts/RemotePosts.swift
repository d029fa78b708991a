import Foundation
public import Observing
public import OpenCombine

/// One post of the feed: `{"id": int or string, "title", "body", "userId"?}`.
public struct Post: Sendable, Hashable, Decodable {
    /// A post's `id`, a number or a string as the upstream sent it.
    public enum ID: Sendable, Hashable, Decodable, CustomStringConvertible {
        case number(Int)
        case text(String)

        public init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let n = try? container.decode(Int.self) { self = .number(n) } else { self = .text(try container.decode(String.self)) }
        }

        public var description: String {
            switch self {
            case let .number(n): String(n)
            case let .text(s): s
            }
        }
    }

    public let id: ID
    public let title: String
    public let body: String
    public let userId: Int?
}

/// The feed as the server holds it: the loader's state (``LoadPhase``: idle, loading,
/// loaded, failed), the last good posts (kept through loading and failure) and, when the last
/// load failed, the server's message.
public struct PostsFeedState: Sendable, Hashable, Decodable {
    /// Why the last load failed.
    public struct Failure: Sendable, Hashable, Decodable {
        public let message: String
        public let upstreamStatus: Int?
    }

    public let phase: LoadPhase
    public let posts: [Post]
    /// When the posts were fetched (RFC 3339 from the server), nil before the first load.
    public let fetchedAt: String?
    public let error: Failure?
    /// The feed URL the server loads from.
    public let source: String?

    /// Nothing loaded, nothing running: the state before anyone asked.
    public static let idle = PostsFeedState(phase: .idle, posts: [], fetchedAt: nil, error: nil, source: nil)

    init(phase: LoadPhase, posts: [Post], fetchedAt: String?, error: Failure?, source: String?) {
        self.phase = phase
        self.posts = posts
        self.fetchedAt = fetchedAt
        self.error = error
        self.source = source
    }

    private enum CodingKeys: String, CodingKey { case state, posts, fetchedAt, error, source }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let name = try container.decode(String.self, forKey: .state)
        guard let phase = LoadPhase(rawValue: name) else {
            throw DecodingError.dataCorruptedError(forKey: .state, in: container, debugDescription: "unknown state '\(name)'")
        }
        self.phase = phase
        posts = try container.decodeIfPresent([Post].self, forKey: .posts) ?? []
        fetchedAt = try container.decodeIfPresent(String.self, forKey: .fetchedAt)
        error = try container.decodeIfPresent(Failure.self, forKey: .error)
        source = try container.decodeIfPresent(String.self, forKey: .source)
    }
}

/// The server's posts feed as remote data: ``state`` follows the server's loader, announced
/// on the event stream; ``load()`` asks for the first load (the server starts one only when
/// idle), ``refresh()`` for another, ``cancel()`` abandons a running one.
@MainActor
public final class RemotePosts: @preconcurrency ObservableObject {
    @Published public private(set) var state: PostsFeedState = .idle
    public let objectWillChange = ObservableObjectPublisher()

    private let transport: Transport
    /// The revision the current state reflects: an event or answer older than it (an answer
    /// and the stream race on two connections) is not allowed to take the state back.
    private var revision: UInt64 = 0

    init(transport: Transport) {
        self.transport = transport
    }

    /// `GET /posts?wait=N`: starts the load when the server's feed is idle; with `wait` the
    /// answer is held until the load ends (at most 30 s).
    public func load(wait seconds: Int? = nil) async throws(TidingsClientError) {
        let query = seconds.map { [("wait", String(min(max($0, 0), 30)))] } ?? []
        let response = try await transport.expectSuccess("GET", ["posts"], query: query)
        receive(try response.decode(PostsFeedState.self), revision: response.revision)
    }

    /// `POST /posts/refresh`: starts a load unless one is running.
    public func refresh() async throws(TidingsClientError) {
        let response = try await transport.expectSuccess("POST", ["posts", "refresh"])
        receive(try response.decode(PostsFeedState.self), revision: response.revision)
    }

    /// `POST /posts/cancel`: returns whether a running load was abandoned.
    @discardableResult
    public func cancel() async throws(TidingsClientError) -> Bool {
        struct Answer: Decodable { let cancelled: Bool }
        return try await transport.expectSuccess("POST", ["posts", "cancel"]).decode(Answer.self).cancelled
    }

    /// After a `reset` revisions may start over (a new data set): nothing seen counts.
    func forgetRevision() {
        revision = 0
    }

    /// `isEvent`: an event at revision R announces a change the answer at R already showed.
    func receive(_ state: PostsFeedState, revision: UInt64?, isEvent: Bool = false) {
        if let revision {
            guard revision > self.revision || (!isEvent && revision == self.revision) else { return }
            self.revision = revision
        }
        guard state != self.state else { return }
        objectWillChange.send()
        self.state = state
    }
}
