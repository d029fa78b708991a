import Foundation
import Observing

/// The object `GET /posts` answers and every `posts` event carries:
/// `{"state", "posts", "fetchedAt", "error", "source"}` (absent values as `null`).
struct PostsStateBody: Encodable {
    /// `{"message", "upstreamStatus"?}`.
    struct ErrorBody: Encodable {
        let message: String
        let upstreamStatus: Int?
    }

    let state: String
    let posts: [Post]
    let fetchedAt: String?
    let error: ErrorBody?
    let source: String

    init(_ loadState: LoadState<[Post]>, source: String, timeout: Duration) {
        state = loadState.phase.rawValue
        posts = loadState.value ?? []
        fetchedAt = loadState.lastGood.map { Self.rfc3339($0.fetchedAt) }
        error = loadState.error.map { ErrorBody(message: Self.message($0, timeout: timeout), upstreamStatus: $0.upstreamStatus) }
        self.source = source
    }

    private enum Keys: String, CodingKey {
        case state, posts, fetchedAt, error, source
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(state, forKey: .state)
        try container.encode(posts, forKey: .posts)
        try container.encode(fetchedAt, forKey: .fetchedAt)  // null, not absent
        try container.encode(error, forKey: .error)
        try container.encode(source, forKey: .source)
    }

    /// RFC 3339 in UTC with milliseconds, e.g. `2026-11-22T05:48:55.123Z`.
    static func rfc3339(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }

    /// One sentence per failure kind, saying which it was.
    static func message(_ error: DataLoaderError, timeout: Duration) -> String {
        switch error {
        case let .connectionFailed(detail):
            "Could not reach the upstream feed: \(detail)."
        case .timedOut:
            "The upstream feed did not answer within \(seconds(timeout)) s (--feed-timeout)."
        case let .unexpectedStatus(status):
            "The upstream feed answered with HTTP status \(status), not 2xx."
        case let .bodyTooLarge(limit):
            "The upstream feed's answer is larger than the \(bytes(limit)) limit."
        case let .notDecodable(detail):
            // Post.decodeFeed's own sentence ("… is not JSON." / "… is not a JSON array of posts: …").
            detail
        }
    }

    private static func seconds(_ duration: Duration) -> String {
        let value = URLSessionHTTPClient.seconds(duration)
        return value == value.rounded() ? String(Int(value)) : String(value)
    }

    private static func bytes(_ count: Int) -> String {
        count >= 1 << 20 && count % (1 << 20) == 0 ? "\(count >> 20) MiB" : "\(count)-byte"
    }
}
