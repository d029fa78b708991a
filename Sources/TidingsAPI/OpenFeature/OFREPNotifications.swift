import Foundation
import OpenCombine
import Observing

/// The frames of `GET /ofrep/v1/events` (OFREP ADR-0008): after every preference change one
/// `event: message` whose data is `{"type":"refetchEvaluation","etag","lastModified"}`, with the
/// change's revision as `id:` so `Last-Event-ID` resumes it like every other stream.
///
/// The stream hub derives these frames from the preference entries of the replay journal (a
/// coverage with `ofrep` set), so replay after a resume is exactly the journal's. `etag` is the
/// bulk evaluation's ETag right after that change (the change's own revision, quoted as in the
/// `ETag` header); `lastModified` the Unix second the change was seen by this process.
@MainActor
final class OFREPNotifications {
    private let state: TidingsState
    /// When each recent preference revision was seen, oldest first (bounded like the journal).
    private var seenAt: [UInt64: Int64] = [:]
    private var seenOrder: [UInt64] = []
    private var seenStart = 0
    private let capacity: Int
    private var subscriptions: [AnyCancellable] = []
    private let now: () -> Int64
    private var encoded: (revision: UInt64, frame: [UInt8])?

    init(state: TidingsState, now: @escaping () -> Int64 = { Int64(Date().timeIntervalSince1970) }) {
        self.state = state
        self.now = now
        capacity = max(state.journal.capacity, 1)
        // Timestamp every change as it is announced, whether or not an OFREP stream is open, so a
        // replay later shows when the change happened rather than when it was replayed.
        for key in state.preferences.declarations.map(\.key) {
            guard let publisher = state.preferences.publisher(forKey: key) else { continue }
            subscriptions.append(publisher.dropFirst().sink { [unowned self] _ in
                _ = self.lastModified(of: self.state.revision(ofPreference: key))
            })
        }
    }

    /// The frame announcing the change `entry` records (a preference entry of the journal).
    func frame(for entry: JournalEntry) -> [UInt8] {
        // Every OFREP stream asks for the same change in turn: encode it once.
        if let encoded, encoded.revision == entry.revision { return encoded.frame }
        let frame = frame(id: entry.revision, etagRevision: entry.revision)
        encoded = (entry.revision, frame)
        return frame
    }

    /// What a stream gets instead of `reset` + snapshot when its resume point cannot be replayed
    /// without a gap: one notification at the current revision, so the client refetches.
    func resyncFrame(current: UInt64) -> [UInt8] {
        frame(id: current, etagRevision: OFREPEvaluation.latestPreferenceRevision(state))
    }

    private func frame(id: UInt64, etagRevision: UInt64) -> [UInt8] {
        var data = JSONObjectWriter()
        data.string("type", "refetchEvaluation")
        data.string("etag", EntityTag(revision: etagRevision).header)
        data.raw("lastModified", String(lastModified(of: etagRevision)))
        return EventFrame.frame(id: id, event: "message", json: data.json)
    }

    /// The Unix second `revision` was first seen (now, if it was not seen before).
    private func lastModified(of revision: UInt64) -> Int64 {
        if let seconds = seenAt[revision] { return seconds }
        let seconds = now()
        seenAt[revision] = seconds
        seenOrder.append(revision)
        if seenOrder.count - seenStart > capacity {
            seenAt[seenOrder[seenStart]] = nil
            seenStart += 1
            if seenStart > 1_024, seenStart * 2 > seenOrder.count {
                seenOrder.removeFirst(seenStart)
                seenStart = 0
            }
        }
        return seconds
    }
}
