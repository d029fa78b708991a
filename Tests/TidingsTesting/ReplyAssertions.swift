import Foundation
public import TestFixtures
import XCTest

/// Checks `reply` is an RFC 9457 problem with `status`: the status line, `Content-Type:
/// application/problem+json`, a `Tidings-Revision` header, and a body with string `type`,
/// `title`, `detail` and the same numeric `status`. Returns the body for further checks.
@discardableResult
public func assertProblem(_ reply: HTTPReply, _ status: Int, _ message: String = "",
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
public func assertJSON(_ reply: HTTPReply, _ status: Int = 200, _ message: String = "",
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
