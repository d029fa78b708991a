import Foundation

/// The posts feed's URL (`source` in `GET /posts`): `--feed-url`, or the server's own
/// `GET /sample/posts`.
///
/// The sample feed's URL needs the bound port, known only after `app.start()`; it is resolved
/// at first use, which is always a request (or a stream's snapshot), hence after start. A
/// wildcard listen address is fetched through loopback (`0.0.0.0` → `127.0.0.1`, `::` →
/// `localhost`, see ``loopbackHost(for:)``). Confined to the main actor (the event loop).
@MainActor
final class FeedSource {
    private let configuration: TidingsConfiguration
    private let boundPort: @MainActor () -> Int
    private var resolved: (url: URL, text: String)?

    /// - Parameter boundPort: the server's port once started (for the default sample feed URL).
    init(configuration: TidingsConfiguration, boundPort: @escaping @MainActor () -> Int) {
        self.configuration = configuration
        self.boundPort = boundPort
    }

    var url: URL { resolve().url }

    /// The URL as `GET /posts` shows it (and as stored documents are matched against it).
    var text: String { resolve().text }

    /// Whether the feed is the server's own sample (which sits behind the server's access rules).
    var isSample: Bool { configuration.feedURL == nil }

    private func resolve() -> (url: URL, text: String) {
        if let resolved { return resolved }
        if let feed = configuration.feedURL, let url = URL(string: feed) {
            resolved = (url, url.absoluteString)
            return resolved!
        }
        let port = boundPort()
        let url = URL(string: "http://\(Self.loopbackHost(for: configuration.host)):\(port)/sample/posts")!
        // Before start the port is not known yet: not kept.
        if port > 0 { resolved = (url, url.absoluteString) }
        return (url, url.absoluteString)
    }

    /// The host to reach our own listener on: loopback for wildcard addresses. IPv6 loopback is
    /// reached as `localhost` (libcurl tries `::1` and `127.0.0.1`), which every client takes
    /// (FoundationNetworking's URLSession, the feed's client once, refused a bracketed IPv6 literal).
    static func loopbackHost(for host: String) -> String {
        switch host {
        case "", "0.0.0.0", "*": "127.0.0.1"
        case "::", "[::]", "::1", "[::1]": "localhost"
        default: host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        }
    }
}
