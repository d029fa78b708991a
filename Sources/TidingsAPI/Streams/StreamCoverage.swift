/// What one event stream covers: some preference keys, the thing list, the posts feed.
struct StreamCoverage: Hashable {
    /// Covered preference keys, in declaration order (the snapshot's order).
    var preferenceKeys: [String] = []
    var things = false
    var posts = false
    /// OFREP's stream (`GET /ofrep/v1/events`): the covered preferences' changes are written as
    /// OFREP notifications (StreamHub.ofrep) instead of `preference` events, with no snapshot.
    var ofrep = false
    /// The audit stream (`GET /events?topics=history`): every change record as `event: change`
    /// (History/HistoryFrame); always alone on its stream (it shares revisions with the
    /// preference and things events, and a stream sends each revision once).
    var history = false

    func covers(_ topic: EventTopic) -> Bool {
        switch topic {
        case let .preference(key): preferenceKeys.contains(key)
        case .things: things
        case .posts: posts
        }
    }
}

/// A coverage and the broadcast topics its streams follow, made once per distinct coverage and
/// shared by every stream opened with it (`StreamHub`): with thousands of idle streams on one
/// key, each holds a reference rather than its own key list and topic list.
final class CoveredTopics {
    struct Key: Hashable {
        let coverage: StreamCoverage
        /// Whether the topics are the OFREP encoding's.
        let ofrep: Bool
    }

    let coverage: StreamCoverage
    let topics: [Int]

    init(coverage: StreamCoverage, topics: [Int]) {
        self.coverage = coverage
        self.topics = topics
    }
}
