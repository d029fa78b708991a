import Foundation

/// The feed Tidings ships beside its binary (`sample-posts.json`, a resource of this target) and
/// serves at `GET /sample/posts`.
///
/// Without `--feed-url` the server loads its posts from this endpoint over HTTP, exactly as it
/// would from any upstream, so `/posts` works on a machine with no network and the whole
/// loader path (request, status, body limit, decoding, conditional requests) is exercised.
struct SampleFeed: Sendable {
    /// Fixed when the posts were written (they never change at run time), so restarts and
    /// `If-Modified-Since` agree.
    static let lastModified = "Sun, 01 Nov 2026 00:00:00 GMT"

    /// The body as served, read once.
    let body: [UInt8]

    /// Reads the feed from the resource bundle; a missing or undecodable file fails here, at
    /// start-up, not when the first reader asks for posts.
    static func load() throws -> SampleFeed {
        let bundle = try ResourceBundle.locate()
        guard let url = bundle.url(forResource: "sample-posts", withExtension: "json") else {
            throw StartupError(description: "the sample feed sample-posts.json is missing from \(bundle.bundlePath)")
        }
        let data: Data
        do { data = try Data(contentsOf: url) } catch {
            throw StartupError(description: "cannot read the sample feed \(url.path): \(error)")
        }
        do { _ = try Post.decodeFeed(data) } catch {
            throw StartupError(description: "the sample feed \(url.path) is not a feed of posts: \(error)")
        }
        return SampleFeed(body: Array(data))
    }
}
