import EventHTTP
import TidingsStore

/// Resumes read from the durable history (API.md "History": resume reaches as far back as the
/// history does): when the journal in memory no longer holds the events after a stream's
/// `Last-Event-ID`, and for every resume of the audit stream, whose records the journal does
/// not keep. The change table is read a page at a time, each page written as the client reads
/// it (`sendPaced`'s completion asks for the next), so a long catch-up holds one page in
/// memory; once a page reaches the revision memory is at, the stream follows the live
/// broadcasts after it — no gap, no duplicate. Past the history: `reset` (and, except on the
/// audit stream, a fresh snapshot), as before.
extension StreamHub {
    /// Changes read per page.
    static let replayPage = 256

    func replay(_ stream: EventStream, after revision: UInt64, coverage: StreamCoverage, topics: [Int]) {
        let preferences = state.preferences
        let history = coverage.history
        let environment = state.environment
        let encode: @MainActor @Sendable (Change) -> [UInt8]? = { change in
            // Another environment's change is not this stream's (posts are every environment's).
            if case .posts = change.kind {} else if change.environment != environment { return nil }
            if history { return HistoryFrame.frame(change, preferences: preferences) }
            guard let entry = TidingsState.entry(for: TidingsState.committed(change, preferences: preferences)), coverage.covers(entry.topic) else { return nil }
            return entry.frame
        }
        readPage(stream, after: revision, coverage: coverage, topics: topics, encode: encode)
    }

    private func readPage(_ stream: EventStream, after cursor: UInt64, coverage: StreamCoverage, topics: [Int],
                          encode: @escaping @MainActor @Sendable (Change) -> [UInt8]?) {
        guard let store, stream.isOpen else { return }
        Task { @MainActor [weak self] in
            let page: [Change]
            do {
                page = try await store.changes(after: cursor, limit: Self.replayPage)
            } catch StoreError.changesPruned {
                self?.resetAfterReplay(stream, coverage: coverage, topics: topics, reason: "events after \(cursor) are no longer retained")
                return
            } catch {
                // The store cannot be read now: end the stream; the client resumes from its last id.
                stream.end()
                return
            }
            guard let self, stream.isOpen else { return }
            let frames = page.compactMap(encode)
            let reached = page.last?.revision ?? cursor
            if reached >= state.revision {
                // Caught up: everything after `reached` comes live.
                stream.sendPaced(frames)
                stream.follow(topics, after: reached)
            } else {
                stream.sendPaced(frames) { [weak self] in
                    self?.readPage(stream, after: reached, coverage: coverage, topics: topics, encode: encode)
                }
            }
        }
    }

    private func resetAfterReplay(_ stream: EventStream, coverage: StreamCoverage, topics: [Int], reason: String) {
        let now = state.revision
        var frames = [EventFrame.frame(id: now, event: "reset", data: ResetEventData(reason: reason))]
        if !coverage.history { frames += snapshot(coverage, revision: now) }
        stream.sendPaced(frames)
        stream.follow(topics, after: now)
    }
}
