import Foundation
import Synchronization

/// How gzip event streams are fed, counted for `/metrics` and tests: each broadcast event is
/// deflated once (`shared`) however many gzip streams it reaches (`deliveries`); what only one
/// stream sends — its `retry:`, snapshot, replay, a `reset` — is deflated for that stream
/// (`perStream`). Counted from every stream worker; read from any thread.
public final class StreamCompressionCounters: Sendable {
    private let counts = Mutex(Snapshot(shared: 0, perStream: 0, deliveries: 0, streamsOpened: 0))

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

    public var snapshot: Snapshot { counts.withLock { $0 } }

    func add(shared: Int = 0, perStream: Int = 0, deliveries: Int = 0, opened: Int = 0) {
        counts.withLock {
            $0.shared += shared
            $0.perStream += perStream
            $0.deliveries += deliveries
            $0.streamsOpened += opened
        }
    }
}

/// One broadcast frame's deflated piece, made at most once — by the first stream worker that
/// has a gzip follower for it — and shared by every gzip follower on every worker.
final class SharedPiece: Sendable {
    let frame: [UInt8]
    /// The piece once a worker tried to make it (nil inside: deflating failed).
    private let made = Mutex<DeflatedPiece??>(nil)

    init(_ frame: [UInt8]) { self.frame = frame }

    /// The piece, deflated with `deflater` (the calling worker's) if no worker did yet.
    func piece(_ deflater: PieceDeflater, counters: StreamCompressionCounters) -> DeflatedPiece? {
        made.withLock { made in
            if let tried = made { return tried }
            let piece = deflater.piece(frame)
            made = .some(piece)
            if piece != nil { counters.add(shared: 1) }
            return piece
        }
    }
}

/// The `: keep-alive` comment as a piece: the same bytes for every gzip stream, made once.
enum KeepAlivePiece {
    static let piece: DeflatedPiece? = PieceDeflater().piece(ServerSentEvent.comment("keep-alive"))
}
