import EventHTTP
public import TestFixtures
import Foundation

/// An event stream of ``InProcessTidings``: the bytes the route wrote (`InProcessStream`), parsed
/// as a client parses them. Waiting for the next message turns the main run loop, so the writes
/// and broadcasts that produce it run meanwhile. Letting go of the reader (or `close()`) is the
/// client going away: the route's `onClose` runs.
public final class InProcessEventStream: EventStreamReading {
    public let reply: HTTPReply
    private let stream: InProcessStream?
    private var parser = ServerSentEventParser()
    private var consumed = 0
    private var queued: [StreamMessage] = []

    /// A stream the route opened.
    init(stream: InProcessStream, head: HTTPReply) {
        self.stream = stream
        reply = head
    }

    /// A request the route answered without a stream (a refusal, a HEAD): its body is all there is.
    init(answered: HTTPReply) {
        stream = nil
        reply = answered
        queued = parser.feed(answered.body)
    }

    deinit {
        if Thread.isMainThread { stream?.close() }
    }

    public var isEnded: Bool { queued.isEmpty && (stream.map { $0.isEnded && consumed == $0.body.count } ?? true) }

    public func nextMessage(timeout: Double = 5) throws -> StreamMessage {
        if queued.isEmpty { take() }
        if queued.isEmpty {
            _ = runMainLoop(timeout: timeout) {
                take()
                return !queued.isEmpty || (stream?.isEnded ?? true)
            }
        }
        if !queued.isEmpty { return queued.removeFirst() }
        if stream?.isEnded ?? true { throw HTTPConnectionError.closed }
        throw HTTPConnectionError.timeout
    }

    /// The client goes away.
    public func close() {
        stream?.close()
    }

    private func take() {
        guard let stream, consumed < stream.body.count else { return }
        queued += parser.feed(stream.body[consumed...])
        consumed = stream.body.count
    }
}
