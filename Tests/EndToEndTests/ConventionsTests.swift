import Foundation
import XCTest
import TestFixtures
import TidingsTesting

/// openapi.yaml "Conventions", what needs the real binary and a socket: HEAD on a keep-alive
/// connection, unknown methods and versions, raw request targets, the body limit. The routes'
/// rules run in-process (`TidingsAPITests.ConventionRoutesTests`).
final class ConventionsTests: XCTestCase {
    private var server: TidingsProcess!

    override func setUpWithError() throws { server = try TidingsProcess() }
    override func tearDown() { server?.stop(); server = nil }

    // MARK: Bodies and content types

    func test_body_over_1_MiB_is_413_and_the_server_keeps_serving() throws {
        let big = String(repeating: "x", count: 1_100_000)
        let reply = try server.request("PUT", "/preferences/name", json: ["value": big])
        assertProblem(reply, 413)
        XCTAssertEqual(try server.get("/preferences/name").value?["value"], "fat")
        XCTAssertEqual(try server.get("/healthz").status, 200)
    }

    // MARK: Status codes for paths and methods

    func test_HEAD_works_wherever_GET_does_with_the_same_headers_and_no_body() throws {
        XCTAssertEqual(try server.post(thing: "yolo").status, 201)
        XCTAssertEqual(try server.put("age", 6).status, 200)
        let connection = try server.connect()
        for target in ["/preferences", "/preferences/age", "/things", "/things/YOLO", "/healthz", "/nope"] {
            let get = try connection.request("GET", target)
            let head = try connection.request("HEAD", target)
            XCTAssertEqual(head.status, get.status, target)
            XCTAssertTrue(head.body.isEmpty, target)
            XCTAssertEqual(head.header("Content-Type"), get.header("Content-Type"), target)
            XCTAssertEqual(head.header("ETag"), get.header("ETag"), target)
            XCTAssertEqual(head.header("Tidings-Revision"), get.header("Tidings-Revision"), target)
        }
        // A body after HEAD would corrupt the next answer on this keep-alive connection.
        XCTAssertEqual(try connection.request("GET", "/preferences/age").value?["value"], 6)
    }

    func test_the_only_client_caused_5xx_are_501_for_unknown_methods_and_505_for_unknown_versions() throws {
        let unknownMethod = try server.connect()
        unknownMethod.write("BREW /preferences HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        let brew = try unknownMethod.readReply()
        XCTAssertTrue(brew.status == 501 || (400..<500).contains(brew.status), "BREW → \(brew.status)")

        let badVersion = try server.connect()
        badVersion.write("GET /preferences HTTP/3.7\r\nHost: 127.0.0.1\r\n\r\n")
        if let reply = try? badVersion.readReply() {
            XCTAssertTrue(reply.status == 505 || (400..<500).contains(reply.status), "HTTP/3.7 → \(reply.status)")
        }
        XCTAssertEqual(try server.get("/healthz").status, 200)
    }

    func test_nothing_a_client_sends_causes_a_5xx() throws {
        let bodies: [String] = [
            #"{"value": 1e400}"#, #"{"value": -1e400}"#, #"{"value": 9223372036854775808}"#,
            #"{"value": -9223372036854775809}"#, #"{"value": 1e19}"#, #"{"value": "\u0000"}"#,
            #"{"value": "\ud800"}"#, String(repeating: "[", count: 10_000), #"{"value": true, "value": 3}"#,
            #"{"thing": "\u0000"}"#, #"{"thing": "\ud83d"}"#, #"{"things": [null]}"#, "null", "0", "\"\"",
            #"{"age": 1e400, "speed": 1e308, "name": ""}"#, #"{"": 1}"#,
        ]
        for body in bodies {
            for (method, target) in [("PUT", "/preferences/age"), ("PUT", "/preferences/speed"),
                                     ("PUT", "/preferences/name"), ("PATCH", "/preferences"),
                                     ("POST", "/things"), ("PUT", "/things")] {
                let reply = try server.request(method, target, contentType: "application/json", text: body)
                XCTAssertLessThan(reply.status, 500, "\(method) \(target) \(body.prefix(40)) → \(reply.status) \(reply.text)")
            }
        }
        for target in ["/things/%00", "/things/%ff%fe", "/preferences/%00", "/things/" + String(repeating: "A", count: 5000),
                       "/events?lastEventId=-1", "/events?lastEventId=99999999999999999999999", "/things/%zz"] {
            let connection = try server.connect()
            connection.send("GET", target)
            let reply = try connection.readHead()
            XCTAssertLessThan(reply.status, 500, "\(target) → \(reply.status)")
        }
        XCTAssertEqual(try server.get("/healthz").status, 200)
    }
}
