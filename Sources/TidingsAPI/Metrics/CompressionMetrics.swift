import EventHTTP

/// gzip in `/metrics`: answers compressed (and how many needed compressing: the rest came from
/// the cache of fixed answers), gzip event streams opened, and the deflate work behind them —
/// `shared` once per broadcast event whatever the number of gzip subscribers, `stream` for what
/// one stream sends alone — with the shared pieces handed to streams. Rendered at exposition
/// time from the counters the server keeps (loop thread, like the route).
@MainActor
enum CompressionMetrics {
    static func exposition(caching: HTTPCaching, streams: StreamCompressionCounters) -> [UInt8] {
        let counts = streams.snapshot
        var text = ""
        func counter(_ name: String, _ help: String, _ samples: [(labels: String, value: Int)]) {
            text += "# HELP tidings_\(name) \(help)\n# TYPE tidings_\(name) counter\n"
            for sample in samples { text += "tidings_\(name)\(sample.labels) \(sample.value)\n" }
        }
        counter("http_gzip_answers_total", "Answers sent gzip-coded.", [("", caching.gzipAnswers)])
        counter("http_br_answers_total", "Answers sent br-coded (Brotli).", [("", caching.brAnswers)])
        counter("http_compressions_total", "Answers compressed, gzip or br (the rest of the coded answers came from the cache).",
                [("", caching.compressions)])
        counter("gzip_streams_opened_total", "Event streams opened with Content-Encoding: gzip.", [("", counts.streamsOpened)])
        counter("stream_compressions_total",
                "Frames deflated for gzip event streams: shared (once per broadcast event, for every gzip subscriber) or for one stream (retry, snapshot, replay, reset).",
                [("{kind=\"shared\"}", counts.shared), ("{kind=\"stream\"}", counts.perStream)])
        counter("stream_gzip_deliveries_total", "Shared deflated events queued on gzip event streams.", [("", counts.deliveries)])
        return Array(text.utf8)
    }
}
