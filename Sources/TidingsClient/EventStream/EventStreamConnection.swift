import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import OpenCombine
import Synchronization

/// An `EventSource` for Swift: keeps one event stream open, reconnecting after every end with
/// ``ReconnectPolicy`` back-off (from the server's `retry:`), and hands each event to
/// ``onEvent`` on the main actor, in order.
///
/// What to resume from is the owner's decision (``resumeID``), asked before each attempt, so
/// that an event counts as seen only once the owner has applied it. A non-200 answer that
/// retrying cannot change (4xx other than 408 and 429) or a body that is not
/// `text/event-stream` ends the connection for good (``ConnectionState/failed(_:)``).
@MainActor
final class EventStreamConnection {
    /// Builds the request for one attempt (it may have to fetch a stream ticket first).
    typealias RequestFactory = @MainActor (_ lastEventID: String?) async throws(TidingsClientError) -> URLRequest

    let state = CurrentValueSubject<ConnectionState, Never>(.idle)
    var onEvent: (ServerSentEvent) -> Void = { _ in }
    /// Called when a new connection is open, before its first event.
    var onOpen: () -> Void = {}
    /// The `Last-Event-ID` for the next attempt (nil: start from a snapshot).
    var resumeID: () -> String? = { nil }

    private let transport: Transport
    private let policy: ReconnectPolicy
    /// Set by the owner before ``start()``.
    var makeRequest: RequestFactory = { _ throws(TidingsClientError) in throw .transport("no request factory") }
    private let maxBufferedBytes: Int
    private var parser = ServerSentEventParser()
    private let loop = LoopHandle()

    init(transport: Transport, policy: ReconnectPolicy, maxEventBytes: Int, maxBufferedBytes: Int = 16 << 20) {
        self.transport = transport
        self.policy = policy
        self.maxBufferedBytes = maxBufferedBytes
        parser = ServerSentEventParser(maxLineBytes: maxEventBytes, maxEventBytes: maxEventBytes)
    }

    // The running loop holds `self`; whoever owns the connection ends it (``cancel()``).
    func start() {
        guard !loop.isRunning else { return }
        loop.set(Task { [weak self] in await self?.run() })
    }

    func stop() {
        loop.set(nil)
        state.send(.stopped)
    }

    /// Ends the loop from anywhere (an owner's `deinit`), without announcing a state.
    nonisolated func cancel() { loop.set(nil) }

    private enum Outcome {
        /// The connection ended; retry. `delivered`: it brought at least one event.
        case ended(delivered: Bool, reason: String)
        case fatal(TidingsClientError)
    }

    private func run() async {
        var failures = 0
        while !Task.isCancelled {
            state.send(.connecting(attempt: failures + 1))
            switch await attempt() {
            case let .fatal(error):
                if !Task.isCancelled { state.send(.failed(error)) }
                return
            case let .ended(delivered, reason):
                guard !Task.isCancelled else { return }
                failures = delivered ? 1 : failures + 1
                let delay = policy.delay(afterFailures: failures, serverRetryMilliseconds: parser.retry)
                state.send(.waiting(attempt: failures, delay: delay, reason: reason))
                do { try await Task.sleep(for: delay) } catch { return }
            }
        }
    }

    /// One connection, from the request to its end.
    private func attempt() async -> Outcome {
        let request: URLRequest
        do {
            request = try await makeRequest(resumeID())
        } catch {
            return Self.isFatal(error) ? .fatal(error) : .ended(delivered: false, reason: error.description)
        }
        let (chunks, continuation) = AsyncStream.makeStream(of: StreamChunk.self)
        let receiver = StreamReceiver(continuation: continuation, maxBufferedBytes: maxBufferedBytes)
        let task = transport.startStream(request, handler: receiver)
        parser.endOfStream()
        return await withTaskCancellationHandler {
            await consume(chunks, receiver: receiver)
        } onCancel: {
            task.cancel()
        }
    }

    private func consume(_ chunks: AsyncStream<StreamChunk>, receiver: StreamReceiver) async -> Outcome {
        var status = 0
        var refusal = Data()
        var delivered = false
        for await chunk in chunks {
            switch chunk {
            case let .head(code, contentType):
                status = code
                if code == 200 {
                    guard contentType.lowercased().hasPrefix("text/event-stream") else {
                        return .fatal(.invalidResponse("the stream answered with Content-Type '\(contentType)'"))
                    }
                    state.send(.open)
                    onOpen()
                }
            case let .body(data):
                receiver.consumed(data.count)
                guard status == 200 else {
                    // Keep the start of a refusal for its problem details.
                    if refusal.count < 65_536 { refusal.append(data.prefix(65_536 - refusal.count)) }
                    continue
                }
                do {
                    for event in try parser.feed(data) {
                        delivered = true
                        onEvent(event)
                    }
                } catch {
                    return .ended(delivered: delivered, reason: error.description)
                }
            case let .end(reason):
                if status != 200, status != 0 {
                    let error = TidingsClientError(status: status, problem: Problem.from(status: status, body: refusal))
                    return Self.isFatal(error) ? .fatal(error) : .ended(delivered: false, reason: error.description)
                }
                return .ended(delivered: delivered, reason: reason ?? "the server ended the stream")
            }
        }
        return .ended(delivered: delivered, reason: "cancelled")
    }

    /// 4xx answers do not change by asking again, except 408 (timeout) and 429 (slow down).
    private static func isFatal(_ error: TidingsClientError) -> Bool {
        guard let status = error.problem?.status else { return false }
        return (400..<500).contains(status) && status != 408 && status != 429
    }
}

/// The connection's loop task, cancellable from a nonisolated `deinit`.
final class LoopHandle: Sendable {
    private let task = Mutex<Task<Void, Never>?>(nil)

    var isRunning: Bool { task.withLock { $0 != nil } }

    /// Cancels the current task (if any) and keeps `task` instead.
    func set(_ task: Task<Void, Never>?) {
        let previous = self.task.withLock { current in
            defer { current = task }
            return current
        }
        previous?.cancel()
    }
}

/// What a streaming transfer reports, in order.
enum StreamChunk: Sendable {
    case head(status: Int, contentType: String)
    case body(Data)
    /// nil: the server ended the body.
    case end(String?)
}

/// Forwards a streaming transfer into an `AsyncStream`, cutting the transfer when the reader
/// falls more than `maxBufferedBytes` behind (it then reconnects and resumes).
private final class StreamReceiver: TransferHandler {
    private struct Backlog {
        var buffered = 0
        var overflowed = false
    }

    private let backlog = Mutex(Backlog())
    private let continuation: AsyncStream<StreamChunk>.Continuation
    private let maxBufferedBytes: Int

    init(continuation: AsyncStream<StreamChunk>.Continuation, maxBufferedBytes: Int) {
        self.continuation = continuation
        self.maxBufferedBytes = maxBufferedBytes
    }

    func received(response: HTTPURLResponse) -> Bool {
        continuation.yield(.head(status: response.statusCode,
                                 contentType: response.value(forHTTPHeaderField: "Content-Type") ?? ""))
        return true
    }

    func received(data: Data) -> Bool {
        let overflowed = backlog.withLock { [maxBufferedBytes] backlog in
            backlog.buffered += data.count
            if backlog.buffered > maxBufferedBytes { backlog.overflowed = true }
            return backlog.overflowed
        }
        guard !overflowed else { return false }
        continuation.yield(.body(data))
        return true
    }

    func consumed(_ count: Int) {
        backlog.withLock { $0.buffered -= count }
    }

    func completed(error: (any Error)?) {
        if backlog.withLock({ $0.overflowed }) {
            continuation.yield(.end("the client fell more than \(maxBufferedBytes) bytes behind the stream"))
        } else {
            continuation.yield(.end(error.map { $0.localizedDescription }))
        }
        continuation.finish()
    }
}
