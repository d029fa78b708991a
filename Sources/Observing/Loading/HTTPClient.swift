public import Foundation

/// A GET request for an ``HTTPClient``.
public struct HTTPClientRequest: Sendable, Hashable {
    public var url: URL
    /// Header names are sent as given; the loader adds `If-None-Match`/`If-Modified-Since`.
    public var headers: [String: String]
    /// The client abandons the request after this long (throwing ``HTTPClientError/timedOut``).
    public var timeout: Duration
    /// The client may stop reading and throw ``HTTPClientError/bodyTooLarge(limit:)`` past this.
    public var maxBodyBytes: Int?
    /// The instant the caller gives up (the loader sets it: the start plus ``timeout``). A client
    /// ends the request there too, and a cancellation that arrives at or after it is the deadline's,
    /// not a caller's.
    public var deadline: ContinuousClock.Instant?

    public init(url: URL, headers: [String: String] = [:], timeout: Duration = .seconds(10), maxBodyBytes: Int? = nil) {
        self.url = url
        self.headers = headers
        self.timeout = timeout
        self.maxBodyBytes = maxBodyBytes
    }
}

/// What an ``HTTPClient`` got back.
public struct HTTPClientResponse: Sendable, Hashable {
    public var status: Int
    /// Header names in any case; read them with ``header(_:)``.
    public var headers: [String: String]
    public var body: Data

    public init(status: Int, headers: [String: String] = [:], body: Data = Data()) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// The value of header `name`, compared case-insensitively.
    public func header(_ name: String) -> String? {
        let lowered = name.lowercased()
        return headers.first { $0.key.lowercased() == lowered }?.value
    }
}

/// Errors an ``HTTPClient`` throws so the loader can tell failures apart; anything else
/// it throws counts as a connection failure.
public enum HTTPClientError: Error, Sendable, Hashable {
    case timedOut
    case connectionFailed(String)
    case bodyTooLarge(limit: Int)
    /// The client refused the answer by one of its rules (the detail names the rule), e.g. a
    /// redirect to another host or a compressed body it cannot bound.
    case refused(String)
}

/// The networking layer behind ``DataLoader``, taken from the environment (``EnvironmentValues/httpClient``).
/// Implementations must honour task cancellation (the loader cancels abandoned loads).
public protocol HTTPClient: Sendable {
    func send(_ request: HTTPClientRequest) async throws -> HTTPClientResponse
}

/// The default client: refuses every request, so a loader without a configured client fails
/// loudly ("no HTTP client configured") instead of silently loading nothing.
public struct UnconfiguredHTTPClient: HTTPClient {
    public init() {}
    public func send(_ request: HTTPClientRequest) async throws -> HTTPClientResponse {
        throw HTTPClientError.connectionFailed("no HTTP client configured in the environment")
    }
}

enum HTTPClientKey: EnvironmentKey {
    static let defaultValue: any HTTPClient = UnconfiguredHTTPClient()
}

extension EnvironmentValues {
    /// The client data loaders fetch with (default: ``UnconfiguredHTTPClient``).
    public var httpClient: any HTTPClient {
        get { self[HTTPClientKey.self] }
        set { self[HTTPClientKey.self] = newValue }
    }
}
