import Foundation

/// The validators an upstream sent (`ETag`, `Last-Modified`), echoed back as conditional
/// request headers (`If-None-Match`, `If-Modified-Since`).
public struct Validators: Sendable, Hashable {
    public var etag: String?
    public var lastModified: String?

    public init(etag: String? = nil, lastModified: String? = nil) {
        self.etag = etag
        self.lastModified = lastModified
    }

    public init(_ response: HTTPClientResponse) {
        self.init(etag: response.header("ETag"), lastModified: response.header("Last-Modified"))
    }

    /// Neither is known.
    public var isEmpty: Bool { etag == nil && lastModified == nil }

    /// The response headers that carry them (what an answer made from a kept value sends, so
    /// the loader that takes it keeps them).
    public var headers: [String: String] {
        var headers: [String: String] = [:]
        if let etag { headers["ETag"] = etag }
        if let lastModified { headers["Last-Modified"] = lastModified }
        return headers
    }

    mutating func merge(_ other: Validators) {
        if let etag = other.etag { self.etag = etag }
        if let lastModified = other.lastModified { self.lastModified = lastModified }
    }
}

extension DataLoader {
    enum Outcome: Sendable {
        case cancelled
        /// 304, or a body identical to the last good one.
        case unchanged(Validators)
        case fresh(Value, body: Data, Validators)
        case failure(DataLoaderError)
    }

    /// One request, off the main actor: send (bounded by the policy's timeout), check status
    /// and size, decode.
    nonisolated static func fetch(
        client: any HTTPClient, request: HTTPClientRequest, policy: DataLoaderPolicy,
        previousBody: Data?, decode: @Sendable (Data) throws -> Value
    ) async -> Outcome {
        let response: HTTPClientResponse
        do {
            response = try await sendWithTimeout(client: client, request: request, timeout: policy.timeout)
        } catch is CancellationError {
            return .cancelled
        } catch let error as HTTPClientError {
            if Task.isCancelled { return .cancelled }
            switch error {
            case .timedOut: return .failure(.timedOut(after: policy.timeout))
            case let .connectionFailed(detail): return .failure(.connectionFailed(detail))
            case let .bodyTooLarge(limit): return .failure(.bodyTooLarge(limit: limit))
            case let .refused(detail): return .failure(.refused(detail))
            }
        } catch {
            if Task.isCancelled { return .cancelled }
            return .failure(.connectionFailed(String(describing: error)))
        }
        if Task.isCancelled { return .cancelled }
        if response.status == 304, previousBody != nil { return .unchanged(Validators(response)) }
        guard (200..<300).contains(response.status) else { return .failure(.unexpectedStatus(response.status)) }
        guard response.body.count <= policy.maxBodyBytes else { return .failure(.bodyTooLarge(limit: policy.maxBodyBytes)) }
        if let previousBody, previousBody == response.body { return .unchanged(Validators(response)) }
        do {
            return .fresh(try decode(response.body), body: response.body, Validators(response))
        } catch {
            return .failure(.notDecodable(describeDecodingError(error)))
        }
    }

    /// Races the client against the timeout. The loser is cancelled (clients must honour it).
    nonisolated private static func sendWithTimeout(
        client: any HTTPClient, request: HTTPClientRequest, timeout: Duration
    ) async throws -> HTTPClientResponse {
        var request = request
        let deadline = ContinuousClock.now + timeout
        request.deadline = deadline
        return try await withThrowingTaskGroup(of: HTTPClientResponse.self) { [request] group in
            group.addTask { try await client.send(request) }
            group.addTask {
                try await Task.sleep(until: deadline, clock: .continuous)
                throw HTTPClientError.timedOut
            }
            defer { group.cancelAll() }
            return try await group.next()!
        }
    }
}

/// A one-line reason, e.g. "expected String at [0].title" (DecodingError's own text is long).
func describeDecodingError(_ error: any Error) -> String {
    func path(_ context: DecodingError.Context) -> String {
        let rendered = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
        return rendered.isEmpty ? "the top level" : (rendered.hasPrefix(".") ? String(rendered.dropFirst()) : rendered)
    }
    switch error {
    case let DecodingError.typeMismatch(type, context):
        return "expected \(type) at \(path(context))"
    case let DecodingError.valueNotFound(type, context):
        return "missing \(type) value at \(path(context))"
    case let DecodingError.keyNotFound(key, context):
        return "missing key \"\(key.stringValue)\" at \(path(context))"
    case let DecodingError.dataCorrupted(context):
        return "\(context.debugDescription) at \(path(context))"
    default:
        return String(describing: error)
    }
}
