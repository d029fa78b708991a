import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// A server's answer: status, the headers the client uses, and the body.
struct TidingsResponse: Sendable {
    let status: Int
    /// `Tidings-Revision`: the global revision the answer reflects.
    let revision: UInt64?
    let body: Data

    func decode<T: Decodable>(_ type: T.Type) throws(TidingsClientError) -> T {
        do {
            return try JSONDecoder().decode(type, from: body)
        } catch {
            throw .invalidResponse("the body is not the expected \(type): \(error)")
        }
    }
}

/// The HTTP side of a client: one URLSession for requests and the event stream, the base URL
/// and the credentials every request carries. Answers over ``maxBodyBytes`` are cut off.
final class Transport: Sendable {
    let baseURL: URL
    let credentials: TidingsCredentials
    let maxBodyBytes: Int
    let requestTimeout: TimeInterval
    let session: URLSession
    private let delegate: SessionDelegate

    init(baseURL: URL, credentials: TidingsCredentials, maxBodyBytes: Int = 16 << 20,
         requestTimeout: TimeInterval = 30, streamIdleTimeout: TimeInterval = 60) {
        self.baseURL = baseURL
        self.credentials = credentials
        self.maxBodyBytes = maxBodyBytes
        self.requestTimeout = requestTimeout
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalAndRemoteCacheData
        // An idle timeout: the server's heartbeat comments keep a healthy stream under it.
        configuration.timeoutIntervalForRequest = streamIdleTimeout
        configuration.timeoutIntervalForResource = .greatestFiniteMagnitude
        delegate = SessionDelegate()
        session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
    }

    deinit { session.invalidateAndCancel() }

    /// `baseURL` + percent-encoded path segments + query.
    func url(_ segments: [String], query: [(String, String)] = []) -> URL {
        var components = URLComponents(url: baseURL, resolvingAgainstBaseURL: false)!
        let prefix = components.percentEncodedPath.hasSuffix("/") ? String(components.percentEncodedPath.dropLast()) : components.percentEncodedPath
        components.percentEncodedPath = prefix + segments.map { "/" + Self.encodeSegment($0) }.joined()
        if !query.isEmpty {
            components.percentEncodedQuery = query.map { "\(Self.encodeSegment($0.0))=\(Self.encodeSegment($0.1))" }.joined(separator: "&")
        }
        return components.url!
    }

    /// Everything but RFC 3986's unreserved characters is percent-encoded.
    static func encodeSegment(_ text: String) -> String {
        let allowed = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }

    /// A request with the credentials' bearer header.
    func request(_ url: URL, method: String = "GET", timeout: TimeInterval? = nil) -> URLRequest {
        var request = URLRequest(url: url, cachePolicy: .reloadIgnoringLocalAndRemoteCacheData,
                                 timeoutInterval: timeout ?? requestTimeout)
        request.httpMethod = method
        if let token = credentials.token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        return request
    }

    /// Sends one request and returns any answer (non-2xx included); throws only when no
    /// complete answer arrived.
    func send(_ method: String, _ segments: [String], query: [(String, String)] = [],
              headers: [String: String] = [:], json: Data? = nil,
              contentType: String = "application/json") async throws(TidingsClientError) -> TidingsResponse {
        var request = request(url(segments, query: query), method: method)
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        if let json {
            request.setValue(contentType, forHTTPHeaderField: "Content-Type")
            request.httpBody = json
        }
        let task = session.dataTask(with: request)
        let collector = BodyCollector(limit: maxBodyBytes)
        delegate.register(task, collector)
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                collector.start(continuation)
                task.resume()
            }
        } onCancel: {
            task.cancel()
        }
        return try result.get()
    }

    /// Sends one request and throws the typed error for any non-2xx answer.
    func expectSuccess(_ method: String, _ segments: [String], query: [(String, String)] = [],
                       headers: [String: String] = [:], json: Data? = nil,
                       contentType: String = "application/json") async throws(TidingsClientError) -> TidingsResponse {
        let response = try await send(method, segments, query: query, headers: headers, json: json, contentType: contentType)
        guard (200..<300).contains(response.status) else {
            throw TidingsClientError(status: response.status, problem: Problem.from(status: response.status, body: response.body))
        }
        return response
    }

    /// Starts a streaming transfer whose head, body pieces and end go to `handler`.
    func startStream(_ request: URLRequest, handler: any TransferHandler) -> URLSessionDataTask {
        let task = session.dataTask(with: request)
        delegate.register(task, handler)
        task.resume()
        return task
    }
}

/// Collects one answer's body, up to a limit, and resumes the waiting request once.
private final class BodyCollector: TransferHandler {
    private struct State {
        var continuation: CheckedContinuation<Result<TidingsResponse, TidingsClientError>, Never>?
        var status = 0
        var revision: UInt64?
        var body = Data()
        var tooLarge = false
    }

    private let state = Mutex(State())
    private let limit: Int

    init(limit: Int) { self.limit = limit }

    func start(_ continuation: CheckedContinuation<Result<TidingsResponse, TidingsClientError>, Never>) {
        state.withLock { $0.continuation = continuation }
    }

    func received(response: HTTPURLResponse) -> Bool {
        let status = response.statusCode
        let revision = response.value(forHTTPHeaderField: "Tidings-Revision").flatMap { UInt64($0) }
        let tooLarge = response.expectedContentLength > Int64(limit)
        return state.withLock { state in
            state.status = status
            state.revision = revision
            if tooLarge { state.tooLarge = true }
            return !state.tooLarge
        }
    }

    func received(data: Data) -> Bool {
        state.withLock { [limit] state in
            guard state.body.count + data.count <= limit else {
                state.tooLarge = true
                return false
            }
            state.body.append(data)
            return true
        }
    }

    func completed(error: (any Error)?) {
        let transportError = error.map { $0.localizedDescription }
        let (continuation, result) = state.withLock { [limit] state in
            let continuation = state.continuation
            state.continuation = nil
            let result: Result<TidingsResponse, TidingsClientError>
            if state.tooLarge {
                result = .failure(.invalidResponse("the answer is larger than \(limit) bytes"))
            } else if let transportError {
                result = .failure(.transport(transportError))
            } else {
                result = .success(TidingsResponse(status: state.status, revision: state.revision, body: state.body))
            }
            return (continuation, result)
        }
        continuation?.resume(returning: result)
    }
}
