import Observing
import TidingsStore

extension TidingsState {
    /// The stored posts document when it is of this server's feed: one stored under another
    /// `--feed-url` before a restart is not shown as this feed's (the state is `idle` until the
    /// new source has been read).
    var postsOfThisFeed: StoredPosts? {
        guard let posts, let postsSource, StoredPostsPeek.isFrom(postsSource.text, posts.document) else { return nil }
        return posts
    }

    /// The `GET /posts` object as stored, for a stream's snapshot: the stored document of this
    /// feed, or before there is one, `idle`.
    var postsSnapshotJSON: String {
        postsOfThisFeed?.document ?? PostsStateBody(.idle, source: postsSource?.text, timeout: .zero).json
    }
}
