import HTTPTypes
import EventHTTP
import Foundation

/// On a server whose writes need no token, a write sent by a web page of another site is
/// refused with `403`: a `PUT`, `PATCH`, `POST` or `DELETE` whose `Origin` is neither allowed
/// by `--cors-origin` nor this server itself (the origin's host and port equal to `Host`).
///
/// Why: without a token, the only thing that tells a page's request from the developer's own
/// tools is `Origin`. Browsers send it on every cross-site write, so a page the developer
/// happens to visit cannot change the local server's data. Requests without `Origin` (curl,
/// the Swift client, other servers) are not affected. With `--api-token` this is not needed:
/// a page cannot know the token.
struct CrossSiteWrites: Middleware {
    let cors: CORSPolicy?

    private static let writes: Set<HTTPRequest.Method> = [.post, .put, .patch, .delete]

    func intercept(_ request: Request) -> Response? {
        guard Self.writes.contains(request.method), let origin = request.headers.first(.origin) else { return nil }
        if let cors, cors.allows(origin) { return nil }
        if let host = request.headers.first(.hostField), Self.authority(of: origin) == host.lowercased() { return nil }
        return .problem(status: .forbidden,
                        detail: "Writes from a web page of another origin are refused: '\(origin.prefix(200))' is not this server and is not allowed by --cors-origin.")
    }

    /// At the head too: the rule reads only the head, so another site's upload is refused
    /// before its body is read.
    func checkHead(_ request: Request) -> Response? { intercept(request) }

    /// `host[:port]` of a serialised origin (`https://app.example:8443` → `app.example:8443`),
    /// lower-cased; nil for `null` and anything that is not `scheme://authority`.
    static func authority(of origin: String) -> String? {
        guard let separator = origin.range(of: "://") else { return nil }
        let authority = origin[separator.upperBound...]
        guard !authority.isEmpty, !authority.contains("/") else { return nil }
        return authority.lowercased()
    }
}
