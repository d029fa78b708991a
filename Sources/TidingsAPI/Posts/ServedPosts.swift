import EventHTTP
import HTTPTypes
import TidingsStore

/// What `GET /posts`, its `?wait=` and `POST /posts/refresh` answer: the stored posts document
/// of this feed as it came back through the one change path — the bytes every `posts` event
/// carries and every instance serves — tagged with its revision. Nothing here holds a copy of
/// the feed's state; the bytes are cached per stored revision only.
///
/// One thing a stored document cannot say: that this instance is running a load a client
/// asked for over posts it holds. Such a load is never stored (a refresh that changes nothing
/// is invisible to subscribers), so while it runs the answer is the stored document marked
/// `loading` (its `error` null), with a tag of its own.
///
/// Confined to the main actor (the event loop).
@MainActor
final class ServedPosts {
    private struct Body {
        let revision: UInt64?
        let count: Int
        let refreshing: Bool
        let bytes: [UInt8]
        let tag: String
    }

    private let state: TidingsState
    private var cached: Body?

    init(state: TidingsState) { self.state = state }

    /// The answer showing the stored document (`refreshing`: marked `loading`), with its `ETag`.
    func response(status: HTTPResponse.Status = .ok, refreshing: Bool) -> Response {
        let body = body(refreshing: refreshing)
        return .json(bytes: body.bytes, status: status, headers: [.eTag: body.tag])
    }

    private func body(refreshing: Bool) -> Body {
        let stored = state.postsOfThisFeed
        if let cached, cached.revision == stored?.revision, cached.count == stored?.document.utf8.count ?? -1,
           cached.refreshing == refreshing {
            return cached
        }
        var bytes: [UInt8]
        var tag: String
        if let stored {
            bytes = Array(stored.document.utf8)
            tag = EntityTag(revision: stored.revision).header
        } else {
            // Nothing of this feed stored yet: idle, tagged by its content.
            bytes = Array(state.postsSnapshotJSON.utf8)
            tag = ContentTag.of(bytes)
        }
        if refreshing, let marked = Self.markedLoading(bytes) {
            bytes = marked
            tag = ContentTag.of(Array(("loading over " + tag).utf8))
        }
        let body = Body(revision: stored?.revision, count: stored?.document.utf8.count ?? -1,
                        refreshing: refreshing, bytes: bytes, tag: tag)
        cached = body
        return body
    }

    /// `document` with `error` null and `state` `loading` (nil when it is `loading` already or
    /// not a posts document): its members are in a fixed order (``PostsStateBody``), the error
    /// first and the state last, so this is two searches near the ends and one copy.
    static func markedLoading(_ document: [UInt8]) -> [UInt8]? {
        let fetchedAt = Array(#","fetchedAt":"#.utf8), stateMember = Array(#","state":""#.utf8)
        let loading = Array(#","state":"loading"}"#.utf8)
        guard !document.suffix(loading.count).elementsEqual(loading),
              let start = StoredPostsPeek.firstIndex(of: fetchedAt, in: document[..<min(document.count, 16 << 10)]),
              let end = StoredPostsPeek.lastIndex(of: stateMember, in: document[max(start, document.count - 64)...])
        else { return nil }
        var marked = Array(#"{"error":null"#.utf8)
        marked.reserveCapacity(document.count + 16)
        marked += document[start..<end]
        marked += loading
        return marked
    }
}
