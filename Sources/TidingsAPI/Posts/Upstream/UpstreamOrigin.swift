import Foundation

/// Why an upstream transfer ended without a response to judge.
enum TransferFailure: Error, Equatable, Sendable {
    case timedOut
    case bodyTooLarge(limit: Int)
    case connectionFailed(String)
    case refused(String)
    case cancelled
}

/// Scheme, host and port of a URL (default ports filled in), for the same-origin redirect rule:
/// the feed's upstream client follows a redirect only to its own origin, so a feed URL can
/// never be turned into a request to an internal service or a local file.
struct Origin: Equatable, Sendable, CustomStringConvertible {
    let scheme: String
    let host: String
    let port: Int

    init?(_ url: URL?) {
        guard let url, let scheme = url.scheme?.lowercased(), let host = url.host?.lowercased() else { return nil }
        self.scheme = scheme
        self.host = host
        port = url.port ?? (scheme == "https" ? 443 : scheme == "http" ? 80 : -1)
    }

    var description: String { "\(scheme)://\(host.contains(":") ? "[\(host)]" : host):\(port)" }

    /// Why a redirect from `self` to `location` (the raw `Location`, resolved against `base`)
    /// and then to `next` (the request built from it) is refused; nil to follow it.
    func refusal(location: String?, base: URL?, next: URL?) -> String? {
        let rule = "only redirects to the same scheme, host and port (\(self)) are followed"
        if let location {
            guard let target = URL(string: location, relativeTo: base)?.absoluteURL, let origin = Origin(target) else {
                return "a redirect to '\(location.prefix(200))' was refused: \(rule)"
            }
            if origin != self { return "a redirect to \(origin) was refused: \(rule)" }
        }
        guard let origin = Origin(next) else { return "a redirect to an unusable URL was refused: \(rule)" }
        return origin == self ? nil : "a redirect to \(origin) was refused: \(rule)"
    }

    /// `host:port` of `url`, for messages ("connection refused by 127.0.0.1:9").
    static func endpoint(_ url: URL) -> String {
        let host = url.host ?? "?"
        let port = url.port ?? (url.scheme?.lowercased() == "https" ? 443 : 80)
        return host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }
}
