import Crypto
import TidingsStore

/// The cluster's load lease of one feed: held by the one instance fetching that feed upstream
/// right now, on the store's clock, for at most ``lifetime`` from its take.
struct PostsLoadLease: Sendable {
    /// Takes (or renews) the lease for one fetch: this instance may fetch unless it is
    /// ``LeaseTake/refused``; ``LeaseTake/takenOver`` when the holder it replaced died
    /// mid-fetch (its lease expired, not given back), so its outcome was never stored. A store
    /// that cannot be asked answers ``LeaseTake/taken`` (fetching twice is better than not at all).
    var take: @Sendable () async -> LeaseTake
    /// Gives the lease back: called once the fetch's outcome is stored, so a joined load finds
    /// it free (``LeaseTake/taken``) and is answered from the store.
    var release: @Sendable () async -> Void
    /// How long one take holds the lease: a holder that dies (SIGKILL, OOM) leaves it held no
    /// longer, and the instances waiting on it then take it over.
    var lifetime: Duration

    /// One instance alone: always fetch.
    static let alone = PostsLoadLease(take: { .taken }, release: {}, lifetime: .zero)

    /// The lifetime of a take for an upstream timeout: the request's whole time plus a margin
    /// to store its outcome (the holder lets go only once it is stored).
    static func lifetime(upstreamTimeout: Duration) -> Duration {
        upstreamTimeout + .seconds(5)
    }
}

/// The names of a feed's leases in the store: one per feed URL, so instances configured with
/// different `--feed-url`s (a rolling change of the URL) never wait on each other's fetches,
/// while instances of one URL share them. Bounded whatever the URL's length: the name carries
/// 128 bits of the URL's SHA-256, not the URL. The stored schema is unchanged (a lease's name is
/// any text); a row under the former shared names (`posts-load`, `posts-fetch`) expires and is
/// purged like any other.
enum PostsLeaseName {
    /// `posts-load:<32 hex digits>`: the one-fetch-at-a-time lease of the feed at `source`.
    static func load(source: String) -> String { "posts-load:" + digest(source) }

    /// `posts-fetch:<32 hex digits>`: the one-refresh-per-period lease of the feed at `source`.
    static func fetch(source: String) -> String { "posts-fetch:" + digest(source) }

    private static func digest(_ source: String) -> String {
        Hex.string(Array(Crypto.SHA256.hash(data: Array(source.utf8)).prefix(16)))
    }
}
