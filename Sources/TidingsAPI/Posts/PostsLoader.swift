import Foundation
import Observing

/// Makes the posts feed's `DataLoader<FetchedPosts>`: its request (with the server's own read
/// token for the sample feed, never for a `--feed-url` upstream), the client the cycle routes
/// its requests through, and its decoding, off the loop, into posts and their JSON. The cycle
/// schedules retries and refreshes itself (it decides which instance fetches), so the loader's
/// own are off.
enum PostsLoader {
    @MainActor
    static func make(source: FeedSource, configuration: TidingsConfiguration, client: any HTTPClient,
                     meter: UpstreamFetchMeter, policy: DataLoaderPolicy) -> DataLoader<FetchedPosts> {
        var headers: [String: String] = [:]
        // Our own sample feed sits behind the same access rules as every other read.
        if source.isSample, let token = configuration.readToken ?? configuration.apiTokens.first {
            headers["Authorization"] = "Bearer \(token)"
        }
        var environment = EnvironmentValues()
        environment.httpClient = client
        var loaderPolicy = policy
        loaderPolicy.retryBase = nil
        loaderPolicy.refreshInterval = nil
        return DataLoader<FetchedPosts>(request: HTTPClientRequest(url: source.url, headers: headers),
                                        environment: environment, policy: loaderPolicy) { data in
            do {
                let posts = FetchedPosts(try Post.decodeFeed(data))
                meter.decoded(data, ok: true)
                return posts
            } catch {
                meter.decoded(data, ok: false)
                throw error
            }
        }
    }
}
