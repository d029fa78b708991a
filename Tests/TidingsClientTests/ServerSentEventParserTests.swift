import XCTest
@testable import TidingsClient

/// The WHATWG event-stream rules, on a recorded stream split at every byte and on the edge
/// cases the rules spell out.
final class ServerSentEventParserTests: XCTestCase {
    private func parse(_ chunks: [[UInt8]]) throws -> (events: [ServerSentEvent], retry: Int?) {
        var parser = ServerSentEventParser()
        var events: [ServerSentEvent] = []
        for chunk in chunks { events += try parser.feed(chunk) }
        return (events, parser.retry)
    }

    private func parse(_ text: String) throws -> [ServerSentEvent] { try parse([Array(text.utf8)]).events }

    /// What the recorded stream holds: 9 snapshot events with id 0, then 6 changes with ids 1-6.
    private func checkRecorded(_ events: [ServerSentEvent], retry: Int?, variant: String) {
        XCTAssertEqual(retry, 3000, variant)
        XCTAssertEqual(events.count, 15, variant)
        guard events.count == 15 else { return }
        XCTAssertEqual(events[0], ServerSentEvent(
            type: "preference", data: #"{"key":"should_show_hello_world","revision":0,"value":false}"#, lastEventID: "0"), variant)
        XCTAssertEqual(events[8].type, "things", variant)
        XCTAssertEqual(events.map(\.lastEventID), ["0", "0", "0", "0", "0", "0", "0", "0", "0", "1", "2", "3", "4", "5", "6"], variant)
        XCTAssertEqual(events[9].data, #"{"key":"name","revision":1,"value":"line\nbreak ünïcödé"}"#, variant)
        XCTAssertEqual(events[14].data, #"{"change":{"op":"remove","thing":"YOLO"},"revision":6,"things":[]}"#, variant)
    }

    /// The recorded stream, with LF, CRLF and CR line ends and with a leading BOM.
    private var variants: [(name: String, bytes: [UInt8])] {
        let lf = RecordedStream.text + "\n"
        let crlf = lf.replacingOccurrences(of: "\n", with: "\r\n")
        let cr = lf.replacingOccurrences(of: "\n", with: "\r")
        return [("LF", Array(lf.utf8)), ("CRLF", Array(crlf.utf8)), ("CR", Array(cr.utf8)),
                ("BOM+CRLF", [0xEF, 0xBB, 0xBF] + Array(crlf.utf8))]
    }

    func testTheRecordedStreamSplitAtEveryBytePosition() throws {
        for (name, bytes) in variants {
            let whole = try parse([bytes])
            checkRecorded(whole.events, retry: whole.retry, variant: "\(name) whole")
            for split in 0...bytes.count {
                let result = try parse([Array(bytes[..<split]), Array(bytes[split...])])
                XCTAssertEqual(result.events, whole.events, "\(name) split at \(split)")
                XCTAssertEqual(result.retry, 3000, "\(name) split at \(split)")
            }
        }
    }

    func testEveryFrameSplitAtEveryBytePositionAndFedByteByByte() throws {
        for (name, bytes) in variants {
            // One byte at a time: every CR/LF pair and every multi-byte character is cut.
            let single = try parse(bytes.map { [$0] })
            checkRecorded(single.events, retry: single.retry, variant: "\(name) byte by byte")
            // Three pieces: every position in the stream against every position of a frame.
            let whole = try parse([bytes]).events
            for first in stride(from: 0, through: bytes.count, by: 97) {
                for second in first...min(bytes.count, first + 120) {
                    let pieces = [Array(bytes[..<first]), Array(bytes[first..<second]), Array(bytes[second...])]
                    XCTAssertEqual(try parse(pieces).events, whole, "\(name) split at \(first) and \(second)")
                }
            }
        }
    }

    func testMultiLineDataIsJoinedWithLineFeeds() throws {
        XCTAssertEqual(try parse("data: one\ndata:two\ndata:  three\n\n"),
                       [ServerSentEvent(data: "one\ntwo\n three")])
        // An empty data line still makes an event (with empty data); no data line makes none.
        XCTAssertEqual(try parse("data\n\nevent: x\n\n"), [ServerSentEvent(data: "")])
        XCTAssertEqual(try parse("data:\ndata:\n\n"), [ServerSentEvent(data: "\n")])
    }

    func testCommentsAndUnknownFieldsAreIgnored() throws {
        XCTAssertEqual(try parse(": hello\nfoo: bar\ndata: x\n: keep-alive\n\n"), [ServerSentEvent(data: "x")])
        XCTAssertEqual(try parse(":\n\n: only a comment\n\n"), [])
    }

    func testEventNameAppliesToOneEventOnly() throws {
        XCTAssertEqual(try parse("event: preference\ndata: a\n\ndata: b\n\n"),
                       [ServerSentEvent(type: "preference", data: "a"), ServerSentEvent(data: "b")])
    }

    func testIdPersistsAndAnIdWithNulIsIgnored() throws {
        let events = try parse("id: 7\ndata: a\n\ndata: b\n\nid: 8\u{0}9\ndata: c\n\nid\ndata: d\n\n")
        XCTAssertEqual(events.map(\.lastEventID), ["7", "7", "7", ""])
        // An id without an event still moves the last event ID.
        var parser = ServerSentEventParser()
        _ = try parser.feed(Array("id: 12\n\n".utf8))
        XCTAssertEqual(parser.lastEventID, "12")
    }

    func testRetryTakesOnlyDigits() throws {
        XCTAssertEqual(try parse([Array("retry: 2500\n\n".utf8)]).retry, 2500)
        XCTAssertEqual(try parse([Array("retry: 2500\nretry: 25x\nretry: -1\nretry:\nretry: 1.5\n\n".utf8)]).retry, 2500)
        XCTAssertNil(try parse([Array("retry: 99999999999999999999999999\n\n".utf8)]).retry)
    }

    func testOnlyOneSpaceAfterTheColonIsDroppedAndOnlyALeadingBOM() throws {
        XCTAssertEqual(try parse("data:  x \n\n"), [ServerSentEvent(data: " x ")])
        // A second BOM is data, not a byte order mark.
        let twice = [0xEF, 0xBB, 0xBF, 0xEF, 0xBB, 0xBF] + Array("data: x\n\n".utf8)
        XCTAssertEqual(try parse([twice]).events, [])
        XCTAssertEqual(try parse([[0xEF, 0xBB] , [0xBF] + Array("data: x\n\n".utf8)]).events, [ServerSentEvent(data: "x")])
    }

    func testAnUnfinishedEventIsDroppedAtTheEndOfTheStream() throws {
        var parser = ServerSentEventParser()
        XCTAssertEqual(try parser.feed(Array("id: 3\ndata: never dispatched\n".utf8)), [])
        parser.endOfStream()
        XCTAssertEqual(try parser.feed(Array("data: next\n\n".utf8)), [ServerSentEvent(data: "next", lastEventID: "3")])
    }

    func testInvalidUTF8BecomesReplacementCharacters() throws {
        XCTAssertEqual(try parse([Array("data: a".utf8) + [0xFF] + Array("b\n\n".utf8)]).events, [ServerSentEvent(data: "a\u{FFFD}b")])
    }

    func testLinesAndEventsAreBounded() {
        var parser = ServerSentEventParser(maxLineBytes: 16, maxEventBytes: 32)
        XCTAssertThrowsError(try parser.feed(Array(String(repeating: "x", count: 17).utf8)))
        var events = ServerSentEventParser(maxLineBytes: 16, maxEventBytes: 32)
        XCTAssertThrowsError(try events.feed(Array(String(repeating: "data: 0123456789\n", count: 4).utf8)))
    }
}
