import Foundation
import Observing

/// The object `GET /posts` answers and every `posts` event carries:
/// `{"error", "fetchedAt", "posts", "source", "state"}` (absent values as `null`; keys in the
/// shared encoder's sorted order).
struct PostsStateBody {
    /// `{"message", "upstreamStatus"?}`.
    struct ErrorBody: Encodable {
        let message: String
        let upstreamStatus: Int?
    }

    let state: String
    /// The posts array, already encoded (``FetchedPosts/json``).
    let postsJSON: String
    let fetchedAt: String?
    let error: ErrorBody?
    let source: String

    init(_ loadState: LoadState<FetchedPosts>, source: String, timeout: Duration) {
        state = loadState.phase.rawValue
        postsJSON = loadState.value?.json ?? "[]"
        fetchedAt = loadState.lastGood.map { Self.rfc3339($0.fetchedAt) }
        error = loadState.error.map { ErrorBody(message: Self.message($0, timeout: timeout), upstreamStatus: $0.upstreamStatus) }
        self.source = source
    }

    /// One line of JSON. The posts are spliced in as encoded off the loop; only the small
    /// fields are encoded here.
    var json: String {
        var text = #"{"error":"#
        text.reserveCapacity(postsJSON.utf8.count + 512)
        text += EventFrame.json(error)
        text += #","fetchedAt":"#
        text += EventFrame.json(fetchedAt)
        text += #","posts":"#
        text += postsJSON
        text += #","source":"#
        text += EventFrame.json(source)
        text += #","state":"#
        text += EventFrame.json(state)
        text += "}"
        return text
    }

    /// Every member but the posts: what tells one body from another, since the posts are those
    /// of the fetch at `fetchedAt` (a tag from this costs nothing; hashing 8 MiB of posts held
    /// the loop for tens of milliseconds).
    var identity: String {
        EventFrame.json(error) + "\n" + EventFrame.json(fetchedAt) + "\n" + EventFrame.json(source) + "\n" + state
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
        case let .refused(detail):
            "The upstream feed's answer was refused: \(detail)."
        case let .notDecodable(detail):
            // Post.decodeFeed's own sentence ("… is not JSON." / "… is not a JSON array of posts: …").
            detail
        }
    }

    private static func seconds(_ duration: Duration) -> String {
        let parts = duration.components
        let value = Double(parts.seconds) + Double(parts.attoseconds) * 1e-18
        return value == value.rounded() ? String(Int(value)) : String(value)
    }

    private static func bytes(_ count: Int) -> String {
        count >= 1 << 20 && count % (1 << 20) == 0 ? "\(count >> 20) MiB" : "\(count)-byte"
    }
}
