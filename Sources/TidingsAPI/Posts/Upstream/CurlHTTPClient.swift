import CCurl
import Foundation
public import Observing

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
///   (the transfer stops at once).
public final class CurlHTTPClient: HTTPClient {
    /// `curl_global_init`, once per process, before the first transfer.
    private static let initialized: Bool = tidings_curl_global_init() == CURLE_OK

    public init() { _ = Self.initialized }

    /// Performs one GET. Throws ``HTTPClientError`` for transport failures (timeout, connection,
    /// body over `request.maxBodyBytes`, a refused answer) and `CancellationError` when the task
    /// is cancelled.
    public func send(_ request: HTTPClientRequest) async throws -> HTTPClientResponse {
        guard Self.initialized else { throw HTTPClientError.connectionFailed("libcurl could not be initialised") }
        let transfer = CurlTransfer(request)
        let outcome = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                transfer.start { continuation.resume(returning: $0) }
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
}
