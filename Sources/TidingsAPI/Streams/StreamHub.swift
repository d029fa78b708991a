import HTTPTypes
import EventHTTP
import Foundation
import Observing
import OpenCombine
import TidingsStore

/// Opens event streams and fans each change out to them.
///
/// A stream starts with a snapshot (or, when resuming, the journal's events after its
/// `Last-Event-ID`, or a `reset` and a snapshot when the journal cannot answer without a gap),
/// written at the pace the client reads. Live events follow in revision order. The fan-out is
/// hub-level: one subscription per source (a preference key's subject, the thing list, the
/// posts feed), made when the first stream needs it, and per change the event — encoded once —
/// is broadcast to the stream workers (`HTTPServer.broadcast`): one command per worker and
/// topic, whatever the number of streams. Each worker keeps its streams' topics and queues the
/// shared frame on each follower, never one at or below the revision it already sent.
/// Confined to the main actor (the event loop).
@MainActor
final class StreamHub {
    /// What one subscription listens to.
    private enum Source: Hashable {
        case preference(String)
        case things
        case posts
        /// Every change record (the audit stream).
        case history
    }

    /// An open stream, for the count and for reloads.
    private struct Follower {
        /// Held until the stream closes (`onClose` removes it), so a reload or a deleted
        /// environment can reach every open stream, also one recorded in-process.
        let stream: EventStream?
        /// Shared by every stream of the same coverage (`coverage(_:ofrep:)`).
        let covered: CoveredTopics
        var coverage: StreamCoverage { covered.coverage }
        var topics: [Int] { covered.topics }
    }

    let state: TidingsState
    private weak var server: HTTPServer?
    private var followers: [ObjectIdentifier: Follower] = [:]
    /// One subscription per source; sources are bounded by the declared keys.
    private var sources: [Source: AnyCancellable] = [:]
    private var reloadSubscription: AnyCancellable?
    /// Topic numbers: a source's index × 2, + 1 for its OFREP encoding.
    private var sourceIndex: [Source: Int] = [:]
    /// Open streams per topic (a change is broadcast only on topics someone follows).
    private var followerCounts: [Int: Int] = [:]
    /// One `CoveredTopics` per coverage streams opened with, shared by all of them (an idle
    /// stream then holds no coverage or topic list of its own); at most `coveredTopicsLimit`.
    private var coveredTopics: [CoveredTopics.Key: CoveredTopics] = [:]
    /// Distinct coverages remembered (a client choosing `keys=` picks from the declared keys'
    /// subsets); past it, a stream gets a record of its own.
    static let coveredTopicsLimit = 256
    /// Called when a stream opens or closes (for metrics).
    var onCountChange: (@MainActor (Int) -> Void)?

    /// Where the posts come from: posts are one feed shared by every environment, held by
    /// `default`'s state.
    let postsState: TidingsState
    /// Hands out topic numbers unique across every environment's hub (the workers match
    /// streams by number alone).
    private let topicNumbers: TopicNumbers

    init(state: TidingsState, postsState: TidingsState? = nil, topicNumbers: TopicNumbers = TopicNumbers()) {
        self.state = state
        self.postsState = postsState ?? state
        self.topicNumbers = topicNumbers
    }

    /// The durable history, for resumes older than the journal holds (and every resume of the
    /// audit stream): read page by page at the pace the client reads (StreamHub+Replay).
    var store: (any ChangeStore)?

    /// Opening snapshots' frames, shared by the streams that open at one revision.
    private let snapshotFrames = SnapshotFrames()

    /// Waits for a revision another instance committed before a resume from it (nil: none).
    var catchUp: StreamCatchUp?

    /// OFREP hook: re-encodes the frames of a stream whose coverage has `ofrep` (OpenFeature/).
    var ofrep: OFREPNotifications?

    var openStreams: Int { followers.count }

    /// Starts the stream for `request` covering `coverage` (resume point from `Last-Event-ID`
    /// or `?lastEventId=`).
    func open(_ request: Request, responder: Responder, coverage: StreamCoverage) throws(ProblemDetails) {
        let resume = try Self.resumePoint(request)
        // An id ahead of this instance: the store may have it (another instance's write, not
        // applied here yet). Wait for it rather than answer `reset` (StreamCatchUp).
        if case let .after(revision) = resume, revision > state.revision, let catchUp {
            Task { @MainActor [weak self] in
                await catchUp.wait(for: revision)
                self?.start(request, responder: responder, coverage: coverage, resume: resume)
            }
            return
        }
        start(request, responder: responder, coverage: coverage, resume: resume)
    }

    private func start(_ request: Request, responder: Responder, coverage: StreamCoverage, resume: ResumePoint) {
        // nil also for HEAD: EventHTTP answered it with the stream's headers and no stream.
        guard let stream = responder.startEventStream() else { return }
        if server == nil { server = stream.owner }
        let current = state.revision
        // OFREP hook: the same journal entries, encoded as OFREP notifications.
        let ofrep = coverage.ofrep ? self.ofrep : nil
        let encode: @MainActor (JournalEntry) -> [UInt8] = { entry in ofrep?.frame(for: entry) ?? entry.frame }
        var initial: [[UInt8]]
        /// Set when the resume is read from the store (the journal cannot answer it).
        var replayAfter: UInt64?
        switch resume {
        case .none:
            initial = ofrep == nil ? snapshot(coverage, revision: current) : []
        case let .after(revision) where coverage.history:
            initial = []
            if revision > current {
                initial = [EventFrame.frame(id: current, event: "reset", data: ResetEventData(
                    reason: "Last-Event-ID \(revision) is newer than the current revision \(current)"))]
            } else if revision < current {
                replayAfter = revision
            }
        case let .after(revision):
            if let replay = state.journal.entries(after: revision, current: current, where: coverage.covers) {
                initial = replay.map(encode)
            } else if let ofrep {
                initial = [ofrep.resyncFrame(current: current)]
            } else if revision < current, store != nil {
                // Older than the journal holds: the durable history may still reach it.
                initial = []
                replayAfter = revision
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
        // Everything after `current` arrives through the broadcasts, each change carrying its
        // event encoded once; nothing at or before `current` is sent again. A resume read from
        // the store follows once it has caught up (StreamHub+Replay).
        let covered = covered(coverage, ofrep: ofrep != nil)
        let topics = covered.topics
        if let replayAfter {
            replay(stream, after: replayAfter, coverage: coverage, topics: topics)
        } else {
            stream.sendPaced(initial)
            stream.follow(topics, after: current)
        }
        for topic in topics { followerCounts[topic, default: 0] += 1 }
        if reloadSubscription == nil {
            reloadSubscription = state.reloads.sink { [weak self] in self?.reloaded() }
        }
        followers[ObjectIdentifier(stream)] = Follower(stream: stream, covered: covered)
        onCountChange?(followers.count)
        stream.onStop = streamStopped
    }

    /// Every stream's `onStop`: one closure for all of them, not one (and its allocation) per stream.
    private lazy var streamStopped: (EventStream) -> Void = { [weak self] stream in
        let id = ObjectIdentifier(stream)
        MainActor.assumeIsolated { self?.stopped(id) }
    }

    private func stopped(_ id: ObjectIdentifier) {
        guard let follower = followers.removeValue(forKey: id) else { return }
        for topic in follower.topics { followerCounts[topic, default: 1] -= 1 }
        onCountChange?(followers.count)
    }

    /// `coverage` and the topics a stream with it follows, shared with every stream opened with
    /// the same coverage (each source subscribed on first use).
    private func covered(_ coverage: StreamCoverage, ofrep: Bool) -> CoveredTopics {
        let key = CoveredTopics.Key(coverage: coverage, ofrep: ofrep)
        if let known = coveredTopics[key] { return known }
        let made = CoveredTopics(coverage: coverage, topics: topics(of: coverage, ofrep: ofrep))
        if coveredTopics.count < Self.coveredTopicsLimit { coveredTopics[key] = made }
        return made
    }

    /// The topics a stream with `coverage` follows, subscribing to each source on first use.
    private func topics(of coverage: StreamCoverage, ofrep: Bool) -> [Int] {
        var sources: [Source] = []
        for key in coverage.preferenceKeys where state.preferences.changes(forKey: key) != nil {
            sources.append(.preference(key))
        }
        if coverage.things { sources.append(.things) }
        if coverage.posts { sources.append(.posts) }
        if coverage.history { sources.append(.history) }
        return sources.map { topic(of: $0, ofrep: ofrep) }
    }

    private func topic(of source: Source, ofrep: Bool) -> Int {
        let index: Int
        if let known = sourceIndex[source] {
            index = known
        } else {
            index = topicNumbers.next()
            sourceIndex[source] = index
            subscribe(source, index: index)
        }
        return index * 2 + (ofrep ? 1 : 0)
    }

    private func subscribe(_ source: Source, index: Int) {
        let subscription: AnyCancellable
        switch source {
        case let .preference(key):
            guard let changes = state.preferences.changes(forKey: key) else { return }
            // The subject repeats its latest change on subscription: not news.
            subscription = changes.dropFirst().sink { [weak self] in self?.publish($0.payload, index: index) }
        case .things:
            subscription = state.things.updates.sink { [weak self] in self?.publish($0.payload, index: index) }
        case .posts:
            subscription = postsState.postsEvents.sink { [weak self] in self?.publish($0, index: index) }
        case .history:
            // Encoded only while someone follows the audit stream.
            subscription = state.historyChanges.sink { [weak self] change in
                guard let self, let server, followerCounts[index * 2, default: 0] > 0,
                      let frame = HistoryFrame.frame(change, preferences: state.preferences) else { return }
                server.broadcast(frame, topic: index * 2, order: change.revision, conflationKey: nil)
            }
        }
        sources[source] = subscription
    }

    /// One change: its frame to the workers, once per encoding someone follows.
    private func publish(_ entry: JournalEntry?, index: Int) {
        guard let entry, let server else { return }
        let plain = index * 2
        if followerCounts[plain, default: 0] > 0 {
            server.broadcast(entry.frame, topic: plain, order: entry.revision,
                             conflationKey: EventConflation.key(of: entry.frame))
        }
        if followerCounts[plain + 1, default: 0] > 0, let ofrep {
            let frame = ofrep.frame(for: entry)
            server.broadcast(frame, topic: plain + 1, order: entry.revision,
                             conflationKey: EventConflation.key(of: frame))
        }
    }

    /// The environment was deleted: every stream gets a `reset` saying so and ends (after
    /// everything already queued on it); the subscriptions go.
    func endAll(reason: String) {
        let frame = EventFrame.frame(id: state.revision, event: "reset", data: ResetEventData(reason: reason))
        for follower in followers.values {
            guard let stream = follower.stream else { continue }
            stream.sendPaced([frame])
            stream.end()
        }
        sources.removeAll()
        // Their topics named the subscriptions just dropped.
        coveredTopics.removeAll()
        reloadSubscription = nil
    }

    /// Memory was rebuilt from a snapshot (history pruned past this instance): every stream
    /// starts over, after everything already queued on it.
    private func reloaded() {
        snapshotFrames.clear()
        let now = state.revision
        for follower in followers.values {
            guard let stream = follower.stream else { continue }
            if follower.coverage.ofrep, let ofrep {
                // An OFREP client has no `reset`: one notification makes it refetch everything.
                stream.sendPaced([ofrep.resyncFrame(current: now)])
            } else {
                let reset = EventFrame.frame(id: now, event: "reset",
                                             data: ResetEventData(reason: "this server caught up from a snapshot"))
                stream.sendPaced([reset] + snapshot(follower.coverage, revision: now))
            }
            stream.follow(follower.topics, after: now)
        }
    }

    /// The current value of everything `coverage` covers, every frame with id `revision`.
    func snapshot(_ coverage: StreamCoverage, revision: UInt64) -> [[UInt8]] {
        var frames: [[UInt8]] = []
        for key in coverage.preferenceKeys {
            guard let value = state.preferences.value(forKey: key) else { continue }
            frames.append(snapshotFrames.frame("preference:" + key, revision: revision) {
                let data = PreferenceEventData(key: key, value: value, revision: state.revision(ofPreference: key))
                return EventFrame.frame(id: revision, event: "preference", data: data)
            })
        }
        if coverage.things {
            frames.append(snapshotFrames.frame("things", revision: revision) {
                let data = ThingsEventData(things: state.things.things, revision: state.thingsRevision, change: nil)
                return EventFrame.frame(id: revision, event: "things", data: data)
            })
        }
        if coverage.posts {
            frames.append(snapshotFrames.frame("posts", revision: revision) {
                EventFrame.frame(id: revision, event: "posts", json: postsState.postsSnapshotJSON)
            })
        }
        return frames
    }
}
