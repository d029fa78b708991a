import Foundation

/// How gzip event streams are fed, counted for `/metrics` and tests: each broadcast event is
/// deflated once (`shared`) however many gzip streams it reaches (`deliveries`); what only one
/// stream sends — its `retry:`, snapshot, replay, a `reset` — is deflated for that stream
/// (`perStream`). Counted from every stream worker; read from any thread.
public final class StreamCompressionCounters: @unchecked Sendable {
    private let lock = NSLock()
    private var sharedCount = 0
    private var perStreamCount = 0
    private var deliveryCount = 0
    private var openedCount = 0

    /// The counters at one moment.
    public struct Snapshot: Sendable, Equatable {
        /// Broadcast events deflated (once each, for all their gzip subscribers).
        public var shared: Int
        /// Frames deflated for one stream (retry, snapshot, replay, reset).
        public var perStream: Int
        /// Broadcast events queued on gzip streams (shared pieces handed out).
        public var deliveries: Int
        /// Event streams opened with gzip.
        public var streamsOpened: Int
    }

    public var snapshot: Snapshot {
        lock.lock()
        defer { lock.unlock() }
        return Snapshot(shared: sharedCount, perStream: perStreamCount, deliveries: deliveryCount, streamsOpened: openedCount)
    }

    func add(shared: Int = 0, perStream: Int = 0, deliveries: Int = 0, opened: Int = 0) {
        lock.lock()
        sharedCount += shared
        perStreamCount += perStream
        deliveryCount += deliveries
        openedCount += opened
        lock.unlock()
    }
}

/// One broadcast frame's deflated piece, made at most once — by the first stream worker that
/// has a gzip follower for it — and shared by every gzip follower on every worker.
final class SharedPiece: @unchecked Sendable {
    let frame: [UInt8]
    private let lock = NSLock()
    private var made: DeflatedPiece?
    private var tried = false

    init(_ frame: [UInt8]) { self.frame = frame }

    /// The piece, deflated with `deflater` (the calling worker's) if no worker did yet.
    func piece(_ deflater: PieceDeflater, counters: StreamCompressionCounters) -> DeflatedPiece? {
        lock.lock()
        defer { lock.unlock() }
        if !tried {
            tried = true
            made = deflater.piece(frame)
            if made != nil { counters.add(shared: 1) }
        }
        return made
    }
}

/// The `: keep-alive` comment as a piece: the same bytes for every gzip stream, made once.
enum KeepAlivePiece {
    static let piece: DeflatedPiece? = PieceDeflater().piece(ServerSentEvent.comment("keep-alive"))
}
