import Foundation
import Observing
import TidingsStore

/// A stored posts document as the posts cycle reads it — from its ends, never parsing the posts
/// (a document can be 8 MiB): its revision, its fetch time and where its posts array lies. The
/// posts themselves are decoded once, by the loader, off the loop, when the cycle takes them
/// (``answer``: the loader's request answered with the array).
struct StoredPostsDocument: Sendable {
    let revision: UInt64
    /// The fetch time of its posts (nil: it shows none — idle, loading, or a failure before any).
    let fetchedAt: Date?
    /// The upstream's validators of its posts' fetch (nil: none kept).
    let validators: Validators?
    private let document: String
    private let postsRange: Range<Int>

    /// nil when `stored` is nil or not a posts document.
    init?(_ stored: StoredPosts?) {
        guard let stored, let range = StoredPostsPeek.postsRange(stored.document) else { return nil }
        revision = stored.revision
        fetchedAt = StoredPostsPeek.fetchedAt(stored.document)
        validators = StoredPostsPeek.validators(stored.document)
        document = stored.document
        postsRange = range
    }

    /// What the loader's request gets when it takes these posts: 200 with the array as its
    /// body (one copy of it: make it off the loop) and the validators the posts were fetched
    /// with, so the loader's next upstream request is conditional, as the fetching instance's
    /// would have been.
    var answer: HTTPClientResponse {
        let utf8 = document.utf8
        let body = utf8.withContiguousStorageIfAvailable { Data($0[postsRange]) }
            ?? Data(utf8.dropFirst(postsRange.lowerBound).prefix(postsRange.count))
        return HTTPClientResponse(status: 200, headers: validators?.headers ?? [:], body: body)
    }
}
