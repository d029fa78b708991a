import HTTPTypes
import EventHTTP
import Foundation
import Observing
import OpenCombine
import TidingsStore

/// Opens event streams and keeps each one subscribed to the per-key subjects it covers.
///
/// A stream starts with a snapshot (or, when resuming, the journal's events after its
/// `Last-Event-ID`, or a `reset` and a snapshot when the journal cannot answer without a gap),
/// written at the pace the client reads. Live events follow in revision order: a key's subject
/// carries each change with its event encoded once for all streams, and the stream sends what
/// it receives, never one it already sent. Confined to the main actor (the event loop).
@MainActor
final class StreamHub {
    private let state: TidingsState
    private var subscriptions: [ObjectIdentifier: [AnyCancellable]] = [:]
    /// Called when a stream opens or closes (for metrics).
    var onCountChange: (@MainActor (Int) -> Void)?

    init(state: TidingsState) { self.state = state }

    /// OFREP hook: re-encodes the frames of a stream whose coverage has `ofrep` (OpenFeature/).
    var ofrep: OFREPNotifications?

    var openStreams: Int { subscriptions.count }

    /// Starts the stream for `request` covering `coverage` (resume point from `Last-Event-ID`
    /// or `?lastEventId=`).
    func open(_ request: Request, responder: Responder, coverage: StreamCoverage) throws(ProblemDetails) {
        let resume = try Self.resumePoint(request)
        // nil also for HEAD: EventHTTP answered it with the stream's headers and no stream.
        guard let stream = responder.startEventStream(retryMilliseconds: 3_000) else { return }
        let current = state.revision
        // OFREP hook: the same journal entries, encoded as OFREP notifications.
        let ofrep = coverage.ofrep ? self.ofrep : nil
        let encode: @MainActor (JournalEntry) -> [UInt8] = { entry in ofrep?.frame(for: entry) ?? entry.frame }
        var initial: [[UInt8]]
        switch resume {
        case .none:
            initial = ofrep == nil ? snapshot(coverage, revision: current) : []
        case let .after(revision):
            if let replay = state.journal.entries(after: revision, current: current, where: coverage.covers) {
                initial = replay.map(encode)
            } else if let ofrep {
                initial = [ofrep.resyncFrame(current: current)]
            } else {
                let reason = revision > current
                    ? "Last-Event-ID \(revision) is newer than the current revision \(current)"
                    : "events after \(revision) are no longer retained"
                initial = [EventFrame.frame(id: current, event: "reset", data: ResetEventData(reason: reason))]
                initial += snapshot(coverage, revision: current)
            }
        case .beyondRange:
            if let ofrep {
                initial = [ofrep.resyncFrame(current: current)]
            } else {
                initial = [EventFrame.frame(id: current, event: "reset",
                                            data: ResetEventData(reason: "Last-Event-ID is newer than the current revision \(current)"))]
                initial += snapshot(coverage, revision: current)
            }
        }
        stream.sendPaced(initial)

        // Everything after `current` arrives through the subjects, each change carrying its
        // event encoded once (the payload); nothing at or before `current` is sent again.
        var lastSent = current
        let deliver: @MainActor (JournalEntry?) -> Void = { [weak stream] entry in
            guard let stream, let entry, entry.revision > lastSent else { return }
            lastSent = entry.revision
            stream.send(encode(entry))
        }
        var cancellables: [AnyCancellable] = []
        for key in coverage.preferenceKeys {
            guard let changes = state.preferences.changes(forKey: key) else { continue }
            cancellables.append(changes.dropFirst().sink { deliver($0.payload as? JournalEntry) })
        }
        if coverage.things {
            cancellables.append(state.things.updates.sink { deliver($0.payload as? JournalEntry) })
        }
        if coverage.posts {
            cancellables.append(state.postsEvents.sink { deliver($0) })
        }
        // Memory was rebuilt from a snapshot (history pruned past this instance): start over.
        cancellables.append(state.reloads.sink { [weak self, weak stream] in
            guard let self, let stream else { return }
            let now = state.revision
            lastSent = now
            let reset = EventFrame.frame(id: now, event: "reset",
                                         data: ResetEventData(reason: "this server caught up from a snapshot"))
            stream.sendPaced([reset] + snapshot(coverage, revision: now))
        })
        let id = ObjectIdentifier(stream)
        subscriptions[id] = cancellables
        onCountChange?(subscriptions.count)
        stream.onClose = { [weak self] in
            MainActor.assumeIsolated {
                guard let self, let cancellables = self.subscriptions.removeValue(forKey: id) else { return }
                cancellables.forEach { $0.cancel() }
                self.onCountChange?(self.subscriptions.count)
            }
        }
    }

    /// The current value of everything `coverage` covers, every frame with id `revision`.
    func snapshot(_ coverage: StreamCoverage, revision: UInt64) -> [[UInt8]] {
        var frames: [[UInt8]] = []
        for key in coverage.preferenceKeys {
            guard let value = state.preferences.value(forKey: key) else { continue }
            let data = PreferenceEventData(key: key, value: value, revision: state.revision(ofPreference: key))
            frames.append(EventFrame.frame(id: revision, event: "preference", data: data))
        }
        if coverage.things {
            let data = ThingsEventData(things: state.things.things, revision: state.thingsRevision, change: nil)
            frames.append(EventFrame.frame(id: revision, event: "things", data: data))
        }
        if coverage.posts {
            frames.append(EventFrame.frame(id: revision, event: "posts", json: state.posts?.document ?? state.idlePostsJSON()))
        }
        return frames
    }
}
