@testable import EventHTTP
import HTTPTypes
import XCTest

/// The strict parser's readings, case by case (the wire behaviour is in EndToEndTests/FramingTests;
/// the fuzz targets in Fuzz/ explore the rest).
final class RequestFramingTests: XCTestCase {
    private func parse(_ text: String) -> Result<ParsedHead, FramingRefusal> {
        RequestFraming.parseHead(Array(text.utf8)[...], maxBodyBytes: 1000)
    }

    private func status(_ text: String) -> Int? {
        if case .failure(let refusal) = parse(text) { return refusal.status.code }
        return nil
    }

    func testAmbiguousLengthsAreRefused() {
        XCTAssertEqual(status("PUT / HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 5\r\n"), 400)
        XCTAssertEqual(status("PUT / HTTP/1.1\r\nContent-Length : 5\r\n"), 400)
        XCTAssertEqual(status("PUT / HTTP/1.1\r\nContent-Length: +5\r\n"), 400)
        XCTAssertEqual(status("PUT / HTTP/1.1\r\nContent-Length: 0x5\r\n"), 400)
        XCTAssertEqual(status("PUT / HTTP/1.1\r\nContent-Length:\r\n"), 400)
        XCTAssertEqual(status("PUT / HTTP/1.1\r\nTransfer-Encoding: identity\r\n"), 400)
        XCTAssertEqual(status("PUT / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n"), 400)
        XCTAssertEqual(status("PUT / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n"), 400)
        XCTAssertEqual(status("PUT / HTTP/1.1\r\nContent-Length: 1001\r\n"), 413)
        XCTAssertEqual(status("PUT / HTTP/1.1\r\nContent-Length: 99999999999999999999999\r\n"), 413)
        XCTAssertEqual(status("GET / HTTP/1.1\r\nHost: a\0b\r\n"), 400, "NUL would truncate a C string")
        XCTAssertEqual(status("GET / HTTP/1.1\r\nHost: a\rb\r\n"), 400, "bare CR")
    }

    func testRequestLineRules() {
        XCTAssertEqual(status("GET  / HTTP/1.1\r\n"), 400)
        XCTAssertEqual(status("GET / HTTP/1.1 \r\n"), 400)
        XCTAssertEqual(status("GET /a b HTTP/1.1\r\n"), 400)
        XCTAssertEqual(status("GET / HTTP/1.10\r\n"), 505)
        XCTAssertEqual(status("GET / HTTP/3.0\r\n"), 505)
        XCTAssertEqual(status("get / HTTP/1.1\r\n"), 501)
        XCTAssertEqual(status("GET / http/1.1\r\n"), 400)
    }

    func testCanonicalHeadKeepsFieldsAndReplacesFraming() throws {
        let head = try parse("POST /x?y=1 HTTP/1.1\nHost: h\nTransfer-Encoding: Chunked\nExpect: 100-continue\nX-A:  v  \n").get()
        XCTAssertEqual(head.body, .chunked)
        XCTAssertTrue(head.expectsContinue)
        XCTAssertEqual(String(decoding: head.canonical(length: 3), as: UTF8.self),
                       "POST /x?y=1 HTTP/1.1\r\nHost: h\r\nX-A: v\r\nContent-Length: 3\r\n\r\n")
        XCTAssertEqual(try parse("PUT / HTTP/1.1\r\nContent-Length: 007\r\n").get().body, .length(7))
        XCTAssertEqual(try parse("PUT / HTTP/1.1\r\nContent-Length: 0\r\n").get().body, BodyFraming.none)
        XCTAssertEqual(status("PUT / HTTP/1.1\r\nExpect: 200-ok\r\nContent-Length: 1\r\n"), 417)
    }

    func testChunkedDecoderAcceptsExtensionsAndTrailersAcrossPieces() throws {
        let wire = Array("4;a=b\r\nWiki\r\n5 ;x\r\npedia\r\n0\r\nT: v\r\n\r\nNEXT".utf8)
        var decoder = ChunkedDecoder(maxBodyBytes: 100)
        var offset = 0
        while !decoder.isComplete {
            offset += try decoder.feed(wire[offset..<min(wire.count, offset + 3)])
        }
        XCTAssertEqual(String(decoding: decoder.body, as: UTF8.self), "Wikipedia")
        XCTAssertEqual(String(decoding: wire[offset...], as: UTF8.self), "NEXT", "bytes after the body are left")
    }

    func testChunkedDecoderRefusesMalformedAndOversizedBodies() {
        for text in ["x\r\n", "-1\r\n", "4\r\nWikiX\r\n", "4\nWiki\n", "1000000000000000\r\n", "4\r\nWiki\r\n0\r\nbad trailer\r\n\r\n"] {
            var decoder = ChunkedDecoder(maxBodyBytes: 100)
            XCTAssertThrowsError(try decoder.feed(Array(text.utf8)[...]), text.debugDescription) {
                XCTAssertEqual(($0 as? FramingRefusal)?.status, 400, text.debugDescription)
            }
        }
        var decoder = ChunkedDecoder(maxBodyBytes: 10)
        XCTAssertThrowsError(try decoder.feed(Array("b\r\n".utf8)[...])) { XCTAssertEqual(($0 as? FramingRefusal)?.status, 413) }
    }

    func testEndOfHeadFindsTheBlankLine() {
        XCTAssertEqual(FramingMachine.endOfHead(Array("GET / HTTP/1.1\r\n\r\nrest".utf8), from: 0)?.1, 18)
        XCTAssertEqual(FramingMachine.endOfHead(Array("GET / HTTP/1.1\n\nrest".utf8), from: 0)?.1, 16)
        XCTAssertNil(FramingMachine.endOfHead(Array("GET / HTTP/1.1\r\nHost: x\r\n".utf8), from: 0))
    }

    func testMemberCountStopsAtTheLimit() {
        XCTAssertEqual(JSONShape.topLevelMemberCount(Array(#"{"a": [1, 2], "b": {"c": 1}, "d": "x,y"}"#.utf8)), 3)
        XCTAssertEqual(JSONShape.topLevelMemberCount(Array("{}".utf8)), 0)
        XCTAssertEqual(JSONShape.topLevelMemberCount(Array(#"{"a":1,"b":2,"c":3}"#.utf8), stopAbove: 1), 2)
        XCTAssertNil(JSONShape.topLevelMemberCount(Array("[1, 2]".utf8)))
        XCTAssertNil(JSONShape.topLevelMemberCount(Array(#"{"a": 1"#.utf8)))
    }

    func testDuplicateMemberNamesAreFoundAtEveryDepthAfterUnescaping() {
        func duplicate(_ text: String) -> String? { JSONShape.duplicateMemberName(Array(text.utf8)) }
        XCTAssertEqual(duplicate(#"{"age": 1, "age": 2}"#), "age")
        XCTAssertEqual(duplicate(#"{"a": {"x": 1, "y": [{"z": 1, "z": 2}]}}"#), "z")
        XCTAssertEqual(duplicate(#"{"a": 1, "\u0061": 2}"#), "a", "escapes are decoded")
        XCTAssertEqual(duplicate(#"{"\ud83d\ude00": 1, "😀": 2}"#), "😀", "surrogate pairs are decoded")
        XCTAssertEqual(duplicate("{\"\u{E9}\": 1, \"e\u{301}\": 2}"), "\u{E9}", "canonically equal names are one name, as Foundation merges them")
        XCTAssertEqual(duplicate(#"{"a\"b": 1, "a\"b": 2}"#), "a\"b")
        // Not duplicates: the same name in different objects, names that are values, strings in arrays.
        XCTAssertNil(duplicate(#"{"a": {"a": 1}, "b": {"a": 2}}"#))
        XCTAssertNil(duplicate(#"{"a": "a", "b": "a"}"#))
        XCTAssertNil(duplicate(#"["a", "a", {"a": 1}, {"a": 2}]"#))
        XCTAssertNil(duplicate(#"{"a": 1, "A": 2, "a ": 3}"#))
        XCTAssertNil(duplicate(#"{"a,b": 1, "a": 2, "b": 3}"#))
        XCTAssertNil(duplicate(#""just a string""#))
    }

    func testDecodeRefusesDuplicateMembersWith400() {
        struct Body: Decodable { let value: Int }
        let request = Request(method: .put, target: "/x", headers: [.contentType: "application/json"],
                              body: Array(#"{"value": 7, "value": 8}"#.utf8))
        XCTAssertThrowsError(try request.decode(Body.self)) { error in
            let problem = error as? ProblemDetails
            XCTAssertEqual(problem?.status, .badRequest)
            XCTAssertTrue(problem?.detail.contains(#""value" twice"#) ?? false, problem?.detail ?? "")
        }
        let unique = Request(method: .put, target: "/x", headers: [.contentType: "application/json"],
                             body: Array(#"{"value": 7, "other": {"value": 8}}"#.utf8))
        XCTAssertEqual(try unique.decode(Body.self).value, 7)
    }

    func testProblemErrorsAreCappedAt100() {
        let errors = (0..<250).map { ProblemDetails.FieldError(key: "k\($0)", detail: "bad") }
        XCTAssertEqual(ProblemDetails(status: .unprocessableContent, detail: "many", errors: errors).errors?.count, 100)
    }
}
