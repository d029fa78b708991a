import Foundation
import Observing

/// Makes the posts feed's `DataLoader<FetchedPosts>`: its request (with the server's own read
/// token for the sample feed, never for a `--feed-url` upstream), its upstream client —
/// metered (``UpstreamFetchMeter``) and clustered (``ClusterFeedClient``) — and its decoding,
/// off the loop, into posts and their JSON.
enum PostsLoader {
    struct Parts {
        let source: FeedSource
        let configuration: TidingsConfiguration
        let client: any HTTPClient
        let meter: UpstreamFetchMeter
        let gate: RefreshGate
        let fetchLease: @Sendable () async -> Bool
        let loadLease: PostsLoadLease
        let policy: DataLoaderPolicy
    }

    @MainActor
    static func make(_ parts: Parts) -> DataLoader<FetchedPosts> {
        var headers: [String: String] = [:]
        // Our own sample feed sits behind the same access rules as every other read.
        if parts.source.isSample, let token = parts.configuration.readToken ?? parts.configuration.apiTokens.first {
            headers["Authorization"] = "Bearer \(token)"
        }
        var environment = EnvironmentValues()
        environment.httpClient = ClusterFeedClient(base: MeteredHTTPClient(base: parts.client, meter: parts.meter),
                                                   gate: parts.gate, lease: parts.fetchLease, load: parts.loadLease)
        let meter = parts.meter
        let loader = DataLoader<FetchedPosts>(request: HTTPClientRequest(url: parts.source.url, headers: headers),
                                              environment: environment, policy: parts.policy) { data in
            do {
                let posts = FetchedPosts(try Post.decodeFeed(data))
                meter.decoded(data, ok: true)
                return posts
            } catch {
                meter.decoded(data, ok: false)
                throw error
            }
        }
        // Posts taken from another instance's stored document hold a re-encoded body, so the next
        // fetch of the same feed differs in bytes; the same posts are still nothing new (no new
        // fetch time, no event), as a 304 would say.
        loader.isSameValue = { held, fetched in held.hasSameJSON(as: fetched) }
        return loader
    }
}
