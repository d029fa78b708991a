import Foundation
import Observing

/// The object `GET /posts` answers and every `posts` event carries:
/// `{"error", "fetchedAt", "fetchedWith"?, "posts", "source", "state"}` (absent values as `null`;
/// keys in the shared encoder's sorted order). `fetchedWith` — the upstream's validators of the
/// fetch the posts come from, present only when it sent any — is what lets whichever instance
/// takes the document (a restart, another instance) ask the upstream conditionally next.
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
    let source: String?
    /// The validators of the posts' fetch (nil when there are no posts or none were sent).
    let validators: Validators?

    /// The longest validator kept: an upstream's head may be 64 KiB, but the document's front,
    /// where readers look for its members, is bounded (``StoredPostsPeek``).
    static let maxValidatorBytes = 1024

    init(_ loadState: LoadState<FetchedPosts>, source: String?, timeout: Duration, validators: Validators? = nil) {
        state = loadState.phase.rawValue
        postsJSON = loadState.value?.json ?? "[]"
        fetchedAt = loadState.lastGood.map { Self.rfc3339($0.fetchedAt) }
        error = loadState.error.map { ErrorBody(message: Self.message($0, timeout: timeout), upstreamStatus: $0.upstreamStatus) }
        self.source = source
        self.validators = loadState.lastGood == nil ? nil : validators.flatMap(Self.bounded)
    }

    /// `validators` without one too long to keep; nil when none is left.
    private static func bounded(_ validators: Validators) -> Validators? {
        let kept = Validators(etag: validators.etag.flatMap { $0.utf8.count <= maxValidatorBytes ? $0 : nil },
                              lastModified: validators.lastModified.flatMap { $0.utf8.count <= maxValidatorBytes ? $0 : nil })
        return kept.isEmpty ? nil : kept
    }

    /// One line of JSON. The posts are spliced in as encoded off the loop; only the small
    /// fields are encoded here.
    var json: String {
        let head = self.head, tail = self.tail
        var text = ""
        text.reserveCapacity(head.utf8.count + postsJSON.utf8.count + tail.utf8.count)
        text += head
        text += postsJSON
        text += tail
        return text
    }

    /// Everything before the posts: `{"error":…,"fetchedAt":…,"fetchedWith":…,"posts":`.
    var head: String {
        var head = #"{"error":"# + EventFrame.json(error) + #","fetchedAt":"# + EventFrame.json(fetchedAt)
        if let validators {
            head += #","fetchedWith":{"etag":"# + EventFrame.json(validators.etag)
                + #","lastModified":"# + EventFrame.json(validators.lastModified) + "}"
        }
        return head + #","posts":"#
    }

    /// Everything after the posts: `,"source":…,"state":…}`.
    var tail: String {
        #","source":"# + EventFrame.json(source) + #","state":"# + EventFrame.json(state) + "}"
    }

    /// Whether `document` is this body, read from its ends: the same members but the posts,
    /// and the posts are those of the fetch at `fetchedAt`. Costs the two ends, not the
    /// posts (comparing 8 MiB of posts held the loop for milliseconds per look).
    func describes(_ document: String) -> Bool {
        let head = self.head.utf8, tail = self.tail.utf8, bytes = document.utf8
        return bytes.count >= head.count + tail.count && bytes.starts(with: head)
            && bytes.suffix(tail.count).elementsEqual(tail)
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
