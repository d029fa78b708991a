import EventHTTP
import TestFixtures
import XCTest

final class ServerSentEventTests: XCTestCase {
    func testFrameLayout() {
        let frame = ServerSentEvent(id: "7", event: "preference", data: #"{"key":"a"}"#).encoded
        XCTAssertEqual(String(decoding: frame, as: UTF8.self), "id: 7\nevent: preference\ndata: {\"key\":\"a\"}\n\n")
        XCTAssertEqual(String(decoding: ServerSentEvent(data: "x").encoded, as: UTF8.self), "data: x\n\n")
    }

    func testLineBreaksCannotForgeEvents() {
        let frame = String(decoding: ServerSentEvent(id: "1\nevent: evil", event: "a\r\nb", data: "x\n\ndata: forged").encoded, as: UTF8.self)
        XCTAssertEqual(frame.components(separatedBy: "\n").filter { !$0.isEmpty }.count, 3)
        XCTAssertEqual(EventStreamText.blocks(frame).last?.split(separator: "\n").last, "data: x\\n\\ndata: forged")
        XCTAssertEqual(String(decoding: ServerSentEvent.comment("keep-alive\nid: 9"), as: UTF8.self), ": keep-alive\\nid: 9\n\n")
    }

    func testRetryField() {
        XCTAssertEqual(String(decoding: ServerSentEvent.retry(milliseconds: 2500), as: UTF8.self), "retry: 2500\n\n")
    }
}
