import OpenCombine
import Observing

/// Feeds the resource-level metrics from the parts that know them: open streams from the
/// stream hub, store write latency from the write pipeline, and events published from the
/// same subjects the event streams listen to (one emission per announced change).
///
/// Lives as long as the hub: the hub's `onCountChange` closure holds it (and it holds no
/// reference back), so `attach` needs no owner. Main-actor bound like the state it watches.
@MainActor
final class ResourceMetrics {
    private var subscriptions: [AnyCancellable] = []

    /// Starts feeding `metrics` from `state`, `writes` and `streams`.
    static func attach(state: TidingsState, writes: WritePipeline, streams: StreamHub,
                       metrics: TidingsMetrics = .shared) {
        let observer = ResourceMetrics()
        for key in state.preferences.declarations.map(\.key) {
            guard let publisher = state.preferences.publisher(forKey: key) else { continue }
            // The first value is the current one on subscription, not a change.
            observer.subscriptions.append(publisher.dropFirst().sink { _ in
                metrics.recordEventPublished(topic: "preferences")
            })
        }
        observer.subscriptions.append(state.things.changes.sink { _ in metrics.recordEventPublished(topic: "things") })
        observer.subscriptions.append(state.postsEvents.sink { _ in metrics.recordEventPublished(topic: "posts") })
        writes.onCommit = { seconds, _ in metrics.recordStoreWrite(seconds: seconds) }
        metrics.setOpenStreams(streams.openStreams)
        streams.onCountChange = { count in
            _ = observer  // kept alive by this closure
            metrics.setOpenStreams(count)
        }
    }
}
