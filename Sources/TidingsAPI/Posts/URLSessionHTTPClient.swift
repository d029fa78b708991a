import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
public import Observing
import Synchronization

/// The upstream HTTP client Tidings uses for feeds: Foundation's `URLSession`, as an
/// Observing ``HTTPClient`` (the posts loader takes it from its environment).
///
/// Why URLSession and not a client on the libevent loop: it speaks HTTPS (libcurl + the
/// system's CA store) for real-world feeds, follows redirects, and runs on its own threads, so a
/// slow or hanging upstream can never stall the event loop. What it lacks we add here:
/// - an overall deadline per request (`HTTPClientRequest.timeout`), not just URLSession's idle
///   timeout;
/// - a body limit enforced *while reading* (`HTTPClientRequest.maxBodyBytes`): the transfer is
///   cancelled as soon as the announced length or the received bytes pass it;
/// - no caching of its own, so conditional requests (`If-None-Match`, `If-Modified-Since`)
///   reach the upstream and its `304` reaches the caller;
/// - an uncompressed body: it asks for `Accept-Encoding: identity` (libcurl would otherwise ask
///   for gzip/br/zstd and inflate whatever arrives, faster than the limit can stop it), and an
///   answer with any other `Content-Encoding` is refused before its body is read;
/// - redirects only to the same scheme, host and port (never `file:`), others refused with a
///   message naming the rule;
/// - typed failures: ``HTTPClientError`` for transport problems (any status, 304 and 5xx
///   included, is returned, not thrown), `CancellationError` when the calling task is cancelled.
public final class URLSessionHTTPClient: HTTPClient {
    private let session: URLSession
    private let delegate: TransferDelegate

    /// - Parameter maxConnectionsPerHost: keep-alive connections kept per upstream host.
    public init(maxConnectionsPerHost: Int = 4) {
        let delegate = TransferDelegate()
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalAndRemoteCacheData
        configuration.httpMaximumConnectionsPerHost = maxConnectionsPerHost
        self.delegate = delegate
        self.session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
    }

    deinit { session.invalidateAndCancel() }

    /// Performs one GET. Throws ``HTTPClientError`` for transport failures (timeout, connection,
    /// body over `request.maxBodyBytes`) and `CancellationError` when the task is cancelled.
    public func send(_ request: HTTPClientRequest) async throws -> HTTPClientResponse {
        let seconds = Self.seconds(request.timeout)
        var urlRequest = URLRequest(url: request.url, cachePolicy: .reloadIgnoringLocalAndRemoteCacheData,
                                    timeoutInterval: seconds)
        urlRequest.httpMethod = "GET"
        for (name, value) in request.headers { urlRequest.setValue(value, forHTTPHeaderField: name) }
        urlRequest.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
        if urlRequest.value(forHTTPHeaderField: "Accept") == nil {
            urlRequest.setValue("application/json", forHTTPHeaderField: "Accept")
        }
        let task = session.dataTask(with: urlRequest)
        let identifier = task.taskIdentifier
        let endpoint = Self.endpoint(request.url)
        let delegate = self.delegate
        let outcome: Result<HTTPClientResponse, TransferFailure> = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                delegate.register(identifier, limit: request.maxBodyBytes, endpoint: endpoint,
                                  origin: Origin(request.url), continuation: continuation)
                // Cancelled before we started: never put the request on the wire.
                if Task.isCancelled {
                    delegate.abandon(identifier, .cancelled)
                    task.cancel()
                    return
                }
                task.resume()
                // URLSession's own timeouts are idle timeouts; this is the overall deadline.
                DispatchQueue.global().asyncAfter(deadline: .now() + seconds) {
                    if delegate.markFailed(identifier, .timedOut) { task.cancel() }
                }
            }
        } onCancel: {
            if delegate.markFailed(identifier, .cancelled) { task.cancel() }
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

    static func seconds(_ duration: Duration) -> Double {
        let parts = duration.components
        return Double(parts.seconds) + Double(parts.attoseconds) * 1e-18
    }

    /// `host:port` for messages ("connection refused by 127.0.0.1:9").
    private static func endpoint(_ url: URL) -> String {
        let host = url.host ?? "?"
        let port = url.port ?? (url.scheme?.lowercased() == "https" ? 443 : 80)
        return host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }
}

/// Why a transfer ended without a response to judge.
enum TransferFailure: Error, Equatable, Sendable {
    case timedOut
    case bodyTooLarge(limit: Int)
    case connectionFailed(String)
    case refused(String)
    case cancelled
}

/// Scheme, host and port of a URL (default ports filled in), for the same-origin redirect rule.
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
    /// and then to `next` (the request URLSession built from it) is refused; nil to follow it.
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
}

/// Per-transfer bookkeeping for every task of one session, behind one lock. URLSession calls
/// it on its own delegate queue; `send` calls it from the requesting task.
private final class TransferDelegate: NSObject, URLSessionDataDelegate, Sendable {
    typealias Continuation = CheckedContinuation<Result<HTTPClientResponse, TransferFailure>, Never>

    private struct Transfer {
        var continuation: Continuation
        var limit: Int?
        var endpoint: String
        var origin: Origin?
        var body = Data()
        /// Set once the outcome is decided (deadline, limit, cancellation); the task's own
        /// completion then only delivers it.
        var failure: TransferFailure?
    }

    private let transfers = Mutex<[Int: Transfer]>([:])

    func register(_ id: Int, limit: Int?, endpoint: String, origin: Origin?, continuation: Continuation) {
        transfers.withLock { $0[id] = Transfer(continuation: continuation, limit: limit, endpoint: endpoint, origin: origin) }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                    newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void) {
        let location = response.value(forHTTPHeaderField: "Location")
        let refused = transfers.withLock { all -> Bool in
            guard let index = all.index(forKey: task.taskIdentifier) else { return true }
            guard let origin = all.values[index].origin else { return false }
            guard let why = origin.refusal(location: location, base: response.url, next: request.url) else { return false }
            if all.values[index].failure == nil { all.values[index].failure = .refused(why) }
            return true
        }
        if refused {
            completionHandler(nil)
            task.cancel()
        } else {
            completionHandler(request)
        }
    }

    /// Records `failure` unless the transfer already ended or failed; true when the caller
    /// should cancel the URLSession task.
    func markFailed(_ id: Int, _ failure: TransferFailure) -> Bool {
        transfers.withLock { all in
            guard var transfer = all[id], transfer.failure == nil else { return false }
            transfer.failure = failure
            all[id] = transfer
            return true
        }
    }

    /// Ends a transfer that never started (its task was never resumed).
    func abandon(_ id: Int, _ failure: TransferFailure) {
        transfers.withLock { $0.removeValue(forKey: id) }?.continuation.resume(returning: .failure(failure))
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void) {
        // libcurl inflates a compressed body before the limit below sees a byte of it, and faster
        // than a cancel lands: an answer in any encoding but identity is refused unread.
        let encoding = (response as? HTTPURLResponse)?.value(forHTTPHeaderField: "Content-Encoding")?
            .trimmingCharacters(in: .whitespaces).lowercased()
        let refuse = transfers.withLock { all -> Bool in
            guard let index = all.index(forKey: dataTask.taskIdentifier) else { return false }
            if let encoding, !encoding.isEmpty, encoding != "identity" {
                if all.values[index].failure == nil {
                    all.values[index].failure = .refused("it came with Content-Encoding '\(encoding.prefix(64))' although an uncompressed body was asked for")
                }
                return true
            }
            guard let limit = all.values[index].limit, response.expectedContentLength > Int64(limit) else { return false }
            if all.values[index].failure == nil { all.values[index].failure = .bodyTooLarge(limit: limit) }
            return true
        }
        completionHandler(refuse ? .cancel : .allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        // Mutated in place through `values[index]`: a copy of the transfer would copy its body
        // on every append (quadratic for a large answer).
        let tooLarge = transfers.withLock { all -> Bool in
            guard let index = all.index(forKey: dataTask.taskIdentifier), all.values[index].failure == nil else { return false }
            if let limit = all.values[index].limit, all.values[index].body.count + data.count > limit {
                all.values[index].failure = .bodyTooLarge(limit: limit)
                all.values[index].body = Data()
                return true
            }
            all.values[index].body.append(data)
            return false
        }
        if tooLarge { dataTask.cancel() }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        guard let transfer = transfers.withLock({ $0.removeValue(forKey: task.taskIdentifier) }) else { return }
        transfer.continuation.resume(returning: Self.outcome(transfer, task: task, error: error))
    }

    private static func outcome(_ transfer: Transfer, task: URLSessionTask, error: (any Error)?)
        -> Result<HTTPClientResponse, TransferFailure>
    {
        if let failure = transfer.failure { return .failure(failure) }
        if let error {
            let nsError = error as NSError
            guard nsError.domain == NSURLErrorDomain else {
                return .failure(.connectionFailed(nsError.localizedDescription))
            }
            switch nsError.code {
            case NSURLErrorTimedOut: return .failure(.timedOut)
            case NSURLErrorCancelled: return .failure(.cancelled)
            case NSURLErrorCannotConnectToHost:
                return .failure(.connectionFailed("connection refused by \(transfer.endpoint)"))
            case NSURLErrorCannotFindHost, NSURLErrorDNSLookupFailed:
                return .failure(.connectionFailed("cannot resolve the host of \(transfer.endpoint)"))
            case NSURLErrorNetworkConnectionLost:
                return .failure(.connectionFailed("\(transfer.endpoint) closed the connection before the answer was complete"))
            case NSURLErrorBadServerResponse:
                return .failure(.connectionFailed("\(transfer.endpoint) did not answer with valid HTTP"))
            case NSURLErrorSecureConnectionFailed, NSURLErrorServerCertificateUntrusted,
                 NSURLErrorServerCertificateHasBadDate, NSURLErrorServerCertificateNotYetValid,
                 NSURLErrorServerCertificateHasUnknownRoot:
                return .failure(.connectionFailed("TLS with \(transfer.endpoint) failed: \(nsError.localizedDescription)"))
            default:
                return .failure(.connectionFailed("\(transfer.endpoint): \(nsError.localizedDescription)"))
            }
        }
        guard let http = task.response as? HTTPURLResponse else {
            return .failure(.connectionFailed("\(transfer.endpoint) did not answer with HTTP"))
        }
        var headers: [String: String] = [:]
        for (name, value) in http.allHeaderFields {
            if let name = name as? String, let value = value as? String { headers[name.lowercased()] = value }
        }
        return .success(HTTPClientResponse(status: http.statusCode, headers: headers, body: transfer.body))
    }
}
