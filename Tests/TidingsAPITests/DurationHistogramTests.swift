import TestFixtures
import XCTest
@testable import TidingsAPI

/// The request-duration histogram kept by the metrics middleware, and its Prometheus text.
final class DurationHistogramTests: XCTestCase {
    func testABoundIsInclusiveAndBucketsAreCumulative() {
        var histogram = DurationHistogram()
        histogram.record(nanoseconds: 100_000)        // exactly le=0.0001
        histogram.record(nanoseconds: 100_001)        // the next bucket
        histogram.record(nanoseconds: 0)
        histogram.record(nanoseconds: 20_000_000_000) // beyond 10 s: +Inf only
        var text = ""
        histogram.render(name: "d", route: "/r/{x}", into: &text)
        let lines = text.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.count, TidingsMetrics.latencyBuckets.count + 3)
        XCTAssertEqual(lines[0], #"d_bucket{route="/r/{x}",le="0.0001"} 2"#)
        XCTAssertEqual(lines[1], #"d_bucket{route="/r/{x}",le="0.00025"} 3"#)
        XCTAssertEqual(MetricSamples.parse(text)[#"d_bucket{route="/r/{x}",le="1.0"}"#], 3)
        XCTAssertEqual(lines[TidingsMetrics.latencyBuckets.count - 1], #"d_bucket{route="/r/{x}",le="10.0"} 3"#)
        XCTAssertEqual(lines[TidingsMetrics.latencyBuckets.count], #"d_bucket{route="/r/{x}",le="+Inf"} 4"#)
        XCTAssertEqual(lines[TidingsMetrics.latencyBuckets.count + 1], #"d_sum{route="/r/{x}"} 20.000200001"#)
        XCTAssertEqual(lines[TidingsMetrics.latencyBuckets.count + 2], #"d_count{route="/r/{x}"} 4"#)
        XCTAssertEqual(histogram.count, 4)
    }
}
