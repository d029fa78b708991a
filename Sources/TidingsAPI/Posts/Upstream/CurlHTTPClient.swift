import CCurl
import Foundation
public import Observing
import Synchronization

/// The upstream HTTP client Tidings uses for feeds: libcurl, driven directly, as an Observing
/// ``HTTPClient`` (the posts loader takes it from its environment).
///
/// Why libcurl and not FoundationNetworking's `URLSession` (which runs on libcurl too): the
/// session reads ahead of its delegate and queues what it read, so a limit checked on
/// delivery came too late — an endless identity body pushed the server past 1 GB before the
/// 8 MiB limit was seen. Here the body is taken from libcurl's buffer by our own callback,
/// which stops the transfer at the limit (``CurlReceiver``). It speaks HTTPS (the system's
/// CA store), runs each request on a thread of its own (``CurlTransfer``), so a slow or hanging
/// upstream can never stall the event loop, and adds:
/// - an overall deadline per request (`HTTPClientRequest.timeout`), redirects included;
/// - a body limit enforced *while reading* (`HTTPClientRequest.maxBodyBytes`), and a bound on
///   the head;
/// - no caching, so conditional requests (`If-None-Match`, `If-Modified-Since`) reach the
///   upstream and its `304` reaches the caller;
/// - an uncompressed body: `Accept-Encoding: identity`, and any other `Content-Encoding` is
///   refused before its body is read (nothing is ever inflated);
/// - redirects only to the same scheme, host and port (never `file:`), others refused with a
///   message naming the rule;
/// - typed failures: ``HTTPClientError`` for transport problems (any status, 304 and 5xx
///   included, is returned, not thrown), `CancellationError` when the calling task is cancelled
///   (the transfer stops at once);
/// - connections reused: the handles of a finished request (and their connection cache) serve
///   the next one, so a feed refreshed every few minutes keeps its keep-alive connection;
/// - no proxy unless one is given (`--feed-proxy`): libcurl's `http_proxy`, `https_proxy`,
///   `all_proxy` and `no_proxy` variables are ignored, so the environment cannot send feed
///   requests somewhere else.
public final class CurlHTTPClient: HTTPClient {
    /// `curl_global_init`, once per process, before the first transfer.
    private static let initialized: Bool = tidings_curl_global_init() == CURLE_OK
    /// Idle handles kept for reuse: one per request running at once is plenty (the feed runs one).
    private static let idleHandles = 2

    private let proxy: String?
    private let idle = Mutex<[CurlHandle]>([])

    /// - Parameter proxy: a proxy URL (`http://host:port`, `socks5://…`) every request goes
    ///   through; nil (the default): none, whatever the environment says.
    public init(proxy: String? = nil) {
        _ = Self.initialized
        self.proxy = proxy
    }

    /// Performs one GET. Throws ``HTTPClientError`` for transport failures (timeout, connection,
    /// body over `request.maxBodyBytes`, a refused answer) and `CancellationError` when the task
    /// is cancelled.
    public func send(_ request: HTTPClientRequest) async throws -> HTTPClientResponse {
        guard Self.initialized else { throw HTTPClientError.connectionFailed("libcurl could not be initialised") }
        guard let handle = idle.withLock({ $0.popLast() }) ?? CurlHandle() else {
            throw HTTPClientError.connectionFailed("libcurl could not start a transfer")
        }
        let transfer = CurlTransfer(request, handle: handle, proxy: proxy)
        let outcome = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                transfer.start(reporting: { [self] outcome, reusable in
                    if reusable { giveBack(handle) }
                    continuation.resume(returning: outcome)
                })
            }
        } onCancel: {
            transfer.cancel()
        }
        switch outcome {
        case let .success(response): return response
        case .failure(.cancelled): throw CancellationError()
        case .failure(.timedOut): throw HTTPClientError.timedOut
        case let .failure(.bodyTooLarge(limit)): throw HTTPClientError.bodyTooLarge(limit: limit)
        case let .failure(.connectionFailed(reason)): throw HTTPClientError.connectionFailed(reason)
        case let .failure(.refused(reason)): throw HTTPClientError.refused(reason)
        }
    }

    /// Keeps `handle` (and its connection cache) for the next request, up to ``idleHandles``.
    private func giveBack(_ handle: CurlHandle) {
        idle.withLock { if $0.count < Self.idleHandles { $0.append(handle) } }
    }
}
