import HTTPTypes
import EventHTTP
import Foundation

/// `GET /sample/posts`: the feed shipped beside the binary, served like a well-behaved upstream
/// (strong `ETag`, fixed `Last-Modified`, `304` for a matching `If-None-Match`, or — without
/// one — an `If-Modified-Since` not older than the posts).
struct SampleFeedRoutes {
    let feed: SampleFeed

    func register(on router: RouteGroup) {
        let body = feed.body
        router.get("/sample/posts") { request, responder in
            let validators: HTTPFields = [
                .eTag: SampleFeed.etag.header,
                .lastModified: SampleFeed.lastModified,
                .cacheControl: "no-cache",
            ]
            if Self.notModified(request) {
                responder.send(Response(status: .notModified, headers: validators))
            } else {
                responder.send(.json(bytes: body, headers: validators))
            }
        }
    }

    /// RFC 9110 §13.2.2: `If-None-Match` decides when present; otherwise `If-Modified-Since`.
    static func notModified(_ request: Request) -> Bool {
        if let tags = request.entityTags(.ifNoneMatch) {
            return SampleFeed.etag.isMatched(by: tags)
        }
        guard let since = request.headers.first(.ifModifiedSince).flatMap(httpDate),
              let modified = httpDate(SampleFeed.lastModified) else { return false }
        return since >= modified
    }

    /// Parses an IMF-fixdate (`Sun, 01 Nov 2026 00:00:00 GMT`).
    static func httpDate(_ text: String) -> Date? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        return formatter.date(from: text.trimmingCharacters(in: .whitespaces))
    }
}
