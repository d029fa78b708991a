import Foundation
import TestFixtures
import XCTest

/// The structural readings tests use instead of substring checks read what they claim to.
final class ReplyParsingTests: XCTestCase {
    func testHeaderListsChallengesMediaTypesAndEntityTags() {
        let reply = HTTPReply(status: 401, headers: [
            ("Vary", "Accept-Encoding, Origin"), ("vary", "Accept"),
            ("WWW-Authenticate", #"Bearer realm="tidings", error="invalid_token", error_description="a \"quoted\" word""#),
            ("Content-Type", "text/plain; version=0.0.4; charset=utf-8"), ("ETag", #"W/"17-gzip""#),
        ])
        XCTAssertEqual(reply.headerList("Vary"), ["Accept-Encoding", "Origin", "Accept"])
        XCTAssertEqual(reply.challenge()?.scheme, "Bearer")
        XCTAssertEqual(reply.challenge()?.parameters,
                       ["realm": "tidings", "error": "invalid_token", "error_description": #"a "quoted" word"#])
        XCTAssertEqual(reply.mediaType()?.type, "text/plain")
        XCTAssertEqual(reply.mediaType()?.parameters, ["version": "0.0.4", "charset": "utf-8"])
        XCTAssertEqual(reply.entityTag()?.weak, true)
        XCTAssertEqual(reply.entityTag()?.opaque, "17-gzip")
        XCTAssertNil(HTTPReply(status: 200, headers: [("ETag", "17")]).entityTag(), "not a quoted tag")
    }

    func testARawReplyAndItsChunkedPayload() throws {
        let raw = try XCTUnwrap(HTTPReply.parse(raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nX: y\r\n\r\n5\r\nhello\r\n6\r\n world\r\n3\r\nab"))
        XCTAssertEqual(raw.version, "HTTP/1.1")
        XCTAssertEqual(raw.reply.status, 200)
        XCTAssertEqual(raw.reply.header("x"), "y")
        XCTAssertEqual(String(decoding: raw.payload, as: UTF8.self), "hello world", "the incomplete last chunk is left out")
        XCTAssertNil(HTTPReply.parse(raw: "garbage"))
    }

    func testLogLinesAndMetricSamples() {
        let log = """
            2026-11-27T14:34:28+0000 debug tidings: corsOrigins=[] feedURL=(built-in sample) port=0 [tidings] configuration
            tidings listening on http://127.0.0.1:45655
            2026-11-27T14:34:31+0000 info tidings: [TidingsAPI] shutdown complete
            """
        XCTAssertEqual(LogLine.parse(log), [
            LogLine("2026-11-27T14:34:28+0000 debug tidings: corsOrigins=[] feedURL=(built-in sample) port=0 [tidings] configuration")!,
            LogLine("2026-11-27T14:34:31+0000 info tidings: [TidingsAPI] shutdown complete")!,
        ])
        let first = LogLine.parse(log)[0]
        XCTAssertEqual(first.level, "debug")
        XCTAssertEqual(first.metadata, ["corsOrigins": "[]", "feedURL": "(built-in sample)", "port": "0"])
        XCTAssertEqual(first.source, "tidings")
        XCTAssertEqual(first.message, "configuration")
        XCTAssertEqual(LogLine.parse(log)[1].message, "shutdown complete")
        XCTAssertEqual(MetricSamples.parse("# HELP x\nx_total 3\ny{a=\"b c\"} 1.5\nnot a sample\n"), ["x_total": 3, "y{a=\"b c\"}": 1.5])
    }
}
