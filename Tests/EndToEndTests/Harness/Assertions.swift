import Foundation
import XCTest
import TestFixtures

/// Checks `reply` is an RFC 9457 problem with `status`: the status line, `Content-Type:
/// application/problem+json`, a `Tidings-Revision` header, and a body with string `type`,
/// `title`, `detail` and the same numeric `status`. Returns the body for further checks.
@discardableResult
func assertProblem(_ reply: HTTPReply, _ status: Int, _ message: String = "",
                   file: StaticString = #filePath, line: UInt = #line) -> JSONValue {
    XCTAssertEqual(reply.status, status, "status; body: \(reply.text) \(message)", file: file, line: line)
    XCTAssertEqual(reply.header("Content-Type"), "application/problem+json", "Content-Type \(message)", file: file, line: line)
    XCTAssertNotNil(reply.header("Tidings-Revision"), "Tidings-Revision missing \(message)", file: file, line: line)
    guard let body = reply.value, body.objectValue != nil else {
        XCTFail("problem body is not a JSON object: \(reply.text) \(message)", file: file, line: line)
        return .null
    }
    XCTAssertNotNil(body["type"]?.stringValue, "problem.type \(message)", file: file, line: line)
    XCTAssertNotNil(body["title"]?.stringValue, "problem.title \(message)", file: file, line: line)
    XCTAssertEqual(body["status"]?.intValue, status, "problem.status \(message)", file: file, line: line)
    XCTAssertFalse(body["detail"]?.stringValue?.isEmpty ?? true, "problem.detail \(message)", file: file, line: line)
    return body
}

/// Checks `reply` is a 2xx/3xx JSON answer with `status`, `Content-Type: application/json`
/// and a `Tidings-Revision`. Returns the body.
@discardableResult
func assertJSON(_ reply: HTTPReply, _ status: Int = 200, _ message: String = "",
                file: StaticString = #filePath, line: UInt = #line) -> JSONValue {
    XCTAssertEqual(reply.status, status, "status; body: \(reply.text) \(message)", file: file, line: line)
    XCTAssertEqual(reply.header("Content-Type"), "application/json", "Content-Type \(message)", file: file, line: line)
    XCTAssertNotNil(reply.header("Tidings-Revision"), "Tidings-Revision missing \(message)", file: file, line: line)
    guard let body = reply.value else {
        XCTFail("body is not JSON: \(reply.text) \(message)", file: file, line: line)
        return .null
    }
    return body
}

extension HTTPReply {
    /// `Tidings-Revision` as a number.
    var revisionHeader: UInt64? { header("Tidings-Revision").flatMap { UInt64($0) } }
    /// The `ETag` with its quotes removed (nil unless it is a quoted tag).
    var etagRevision: UInt64? {
        guard let tag = header("ETag"), tag.count >= 2, tag.hasPrefix("\""), tag.hasSuffix("\"") else { return nil }
        return UInt64(tag.dropFirst().dropLast())
    }
}

extension TidingsProcess {
    /// A body sent as raw UTF-8 text with an explicit (or no) Content-Type.
    func request(_ method: String, _ target: String, contentType: String?, text: String,
                 headers: [String: String] = [:]) throws -> HTTPReply {
        var headers = headers
        if let contentType { headers["Content-Type"] = contentType }
        return try request(method, target, headers: headers, body: Array(text.utf8))
    }

    /// `PUT /preferences/{key}` with `{"value": value}`.
    func put(_ key: String, _ value: Any, headers: [String: String] = [:]) throws -> HTTPReply {
        try request("PUT", "/preferences/\(key)", headers: headers, json: ["value": value])
    }

    /// `POST /things` with `{"thing": thing}`.
    func post(thing: String) throws -> HTTPReply {
        try request("POST", "/things", json: ["thing": thing])
    }

    /// `PUT /things` with `{"things": things}`.
    func put(things: [String]) throws -> HTTPReply {
        try request("PUT", "/things", json: ["things": things])
    }

    /// `GET /things` → the list.
    func things() throws -> [String] {
        try get("/things").value?["things"]?.strings ?? []
    }

    /// The current `Tidings-Revision` (from `GET /healthz`).
    func currentRevision() throws -> UInt64 {
        try get("/healthz").revisionHeader ?? 0
    }
}

extension EventStreamReader {
    /// The next `count` events (comments and `retry:` skipped), all within `timeout`.
    func nextEvents(_ count: Int, timeout: Double = 5) throws -> [Event] {
        let deadline = Date().addingTimeInterval(timeout)
        var events: [Event] = []
        while events.count < count {
            events.append(try nextEvent(timeout: max(0.01, deadline.timeIntervalSinceNow)))
        }
        return events
    }

    /// Asserts no event arrives within `seconds` (comments and `retry:` are allowed).
    func assertNoEvent(within seconds: Double, file: StaticString = #filePath, line: UInt = #line) {
        do {
            let event = try nextEvent(timeout: seconds)
            XCTFail("unexpected event \(event)", file: file, line: line)
        } catch HTTPConnectionError.timeout {
            // Expected: nothing arrived.
        } catch {
            XCTFail("stream failed: \(error)", file: file, line: line)
        }
    }
}

/// A temporary directory a test removes itself (for data directories that outlive one
/// server process, and `--preferences` files).
final class TemporaryDirectory {
    let url: URL
    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("tidings-e2e-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }
    deinit { try? FileManager.default.removeItem(at: url) }

    /// Writes `text` to `name` inside the directory; returns its path.
    func file(_ name: String, _ text: String) throws -> String {
        let file = url.appendingPathComponent(name)
        try Data(text.utf8).write(to: file)
        return file.path
    }
}
