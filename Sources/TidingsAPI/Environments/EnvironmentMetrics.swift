/// `/metrics` per environment (API.md "Environments": at most `--max-environments`, so the
/// cardinality is bounded): how many exist, and each one's open streams and latest revision,
/// written at scrape time from the environments themselves (nothing to unregister when one is
/// deleted). Also keeps `tidings_open_streams` the total over every environment's hub.
@MainActor
enum EnvironmentMetrics {
    /// Keeps the total open-streams gauge the sum over every environment, now and for every
    /// environment created later.
    static func attach(_ environments: Environments, metrics: TidingsMetrics = .shared) {
        func follow(_ context: EnvironmentContext) {
            if context.writes.onCommit == nil {
                context.writes.onCommit = { seconds, _ in metrics.recordStoreWrite(seconds: seconds) }
            }
            let previous = context.streams.onCountChange
            context.streams.onCountChange = { [weak environments] count in
                previous?(count)
                guard let environments else { return }
                metrics.setOpenStreams(environments.all.reduce(0) { $0 + $1.streams.openStreams })
            }
        }
        environments.all.forEach(follow)
        environments.onCreate.append(follow)
    }

    /// The Prometheus text of the per-environment gauges.
    static func exposition(_ environments: Environments) -> [UInt8] {
        let all = environments.all
        var text = "# HELP tidings_environments Environments that exist, default included.\n"
        text += "# TYPE tidings_environments gauge\ntidings_environments \(all.count)\n"
        text += "# HELP tidings_environment_open_streams Event streams open, per environment.\n"
        text += "# TYPE tidings_environment_open_streams gauge\n"
        for context in all {
            text += "tidings_environment_open_streams{environment=\"\(context.name)\"} \(context.streams.openStreams)\n"
        }
        text += "# HELP tidings_environment_revision The revision of the latest change, per environment.\n"
        text += "# TYPE tidings_environment_revision gauge\n"
        for context in all {
            text += "tidings_environment_revision{environment=\"\(context.name)\"} \(context.revision)\n"
        }
        return Array(text.utf8)
    }
}
