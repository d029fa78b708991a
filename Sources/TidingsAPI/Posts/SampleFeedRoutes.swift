import HTTPTypes
import EventHTTP
import Foundation

/// `GET /sample/posts`: the feed shipped beside the binary, served like a well-behaved upstream
/// (strong `ETag`, fixed `Last-Modified`, `304` for a matching `If-None-Match`, or — without
/// one — an `If-Modified-Since` not older than the posts).
struct SampleFeedRoutes {
    let feed: SampleFeed

    func register(on router: any RouteRegistrar) {
        let body = feed.body
        // `If-None-Match` and `If-Modified-Since` → 304 are the caching middleware's
        // (`HTTPCaching`), on these validators.
        let answer = Response.json(bytes: body, headers: [
            // A strong validator from the content, so conditional requests get `304`.
            .eTag: ContentTag.of(body),
            .lastModified: SampleFeed.lastModified,
            .cacheControl: "no-cache",
        ])
        router.get("/sample/posts") { _, responder in responder.send(answer) }
    }
}
