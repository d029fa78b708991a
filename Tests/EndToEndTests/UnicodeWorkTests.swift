import Foundation
import XCTest
import TestFixtures
import TidingsTesting

/// Unicode work on client text stays bounded and off the loop's critical path: text is bounded
/// before it is normalised, runs of combining marks longer than 30 (Unicode's stream-safe limit)
/// are refused, and stored values are compared by bytes. Alternating marks of two classes
/// (U+0301, class 230, and U+0316, class 220) are the worst case: canonical reordering must
/// move every pair, which is quadratic. Measured before the fix: a 256 KB `POST /things` held
/// the loop for 10 s; an OFREP evaluation of a 65,535-scalar `name` for 1 s each.
final class UnicodeWorkTests: XCTestCase {
    /// `count` alternating combining marks after a base letter.
    static func marks(_ count: Int) -> String {
        var scalars = String.UnicodeScalarView()
        scalars.append("a")
        for index in 0..<count { scalars.append(Unicode.Scalar(index % 2 == 0 ? 0x0301 : 0x0316)!) }
        return String(scalars)
    }

    func test_a_huge_thing_of_combining_marks_is_refused_at_once_and_the_loop_stays_responsive() throws {
        let server = try TidingsProcess()
        defer { server.stop() }
        let flood = Self.marks(131_072)          // 256 KiB of marks
        let started = Date()
        assertProblem(try server.post(thing: flood), 422)
        XCTAssertLessThan(Date().timeIntervalSince(started), 1, "a 256 KiB thing took \(Date().timeIntervalSince(started)) s")
        let body = try JSONSerialization.data(withJSONObject: ["thing": flood])
        let probe = try LoopResponsiveness.measure(server, clients: 2, seconds: 3) { connection in
            let reply = try connection.request("POST", "/things", headers: ["Content-Type": "application/json"], body: Array(body))
            XCTAssertEqual(reply.status, 422)
        }
        print("POST /things of 256 KiB of marks: \(probe.summary)")
        XCTAssertGreaterThan(probe.attacks, 4, "the attack did not run")
        probe.assertResponsive()
    }

    func test_a_long_path_segment_cannot_be_a_thing_and_costs_no_normalisation() throws {
        let server = try TidingsProcess()
        defer { server.stop() }
        XCTAssertEqual(try server.post(thing: "NASA").status, 201)
        // ~7,000 raw UTF-8 marks in a 16 KiB head: 404 without normalising them.
        let segment = Self.marks(7_000)
        let probe = try LoopResponsiveness.measure(server, clients: 2, seconds: 3) { connection in
            XCTAssertEqual(try connection.request("GET", "/things/" + segment).status, 404)
            XCTAssertEqual(try connection.request("DELETE", "/things/" + segment).status, 404)
        }
        print("GET+DELETE /things/<7,000 marks>: \(probe.summary)")
        XCTAssertGreaterThan(probe.attacks, 4)
        probe.assertResponsive()
        XCTAssertEqual(try server.get("/things/nasa").status, 200, "short segments are still normalised")
        XCTAssertEqual(try server.things(), ["NASA"])
    }

    func test_more_than_30_combining_marks_in_a_row_are_refused_in_every_stored_string() throws {
        let server = try TidingsProcess()
        defer { server.stop() }
        // Things: a run of 30 is fine, 31 is not (the 64-scalar limit allowed 63 before).
        XCTAssertEqual(try server.post(thing: "Q" + String(repeating: "\u{0323}", count: 30)).status, 201)
        let thing = assertProblem(try server.post(thing: "R" + String(repeating: "\u{0323}", count: 31)), 422)
        XCTAssertTrue(thing["detail"]?.stringValue?.contains("combining marks") ?? false, "\(thing)")
        // String preferences, as raw UTF-8 and as \u escapes (the JSON body is checked before parsing).
        XCTAssertEqual(try server.put("name", "a" + String(repeating: "\u{0301}", count: 30)).status, 200)
        assertProblem(try server.put("name", "a" + String(repeating: "\u{0301}", count: 31)), 422)
        let escaped = "{\"value\":\"a" + String(repeating: "\\u0301", count: 31) + "\"}"
        assertProblem(try server.request("PUT", "/preferences/name", contentType: "application/json", text: escaped), 422)
        // The Tibetan vowel sign U+0F73 (class 0) decomposes to two marks: 16 of them are a run of 32.
        assertProblem(try server.put("name", "a" + String(repeating: "\u{0F73}", count: 16)), 422)
        // A PATCH key of marks is refused before anything hashes it.
        let key = "{\"" + Self.marks(10_000) + "\":1}"
        let started = Date()
        assertProblem(try server.request("PATCH", "/preferences", contentType: "application/json", text: key), 422)
        XCTAssertLessThan(Date().timeIntervalSince(started), 1)
        // Long values made of short runs are real text, and stay cheap.
        let legal = String(repeating: "a" + String(repeating: "\u{0301}\u{0316}", count: 15), count: 2_000)
        XCTAssertEqual(try server.put("name", legal).status, 200)
        XCTAssertEqual(try server.get("/preferences/name").value?["value"]?.stringValue, legal)
    }

    func test_a_long_string_preference_of_marks_is_refused_and_evaluating_a_long_legal_one_is_cheap() throws {
        let server = try TidingsProcess()
        defer { server.stop() }
        // One run of 65,535 marks: stored before (in 2 s), after which every OFREP evaluation
        // of it held the loop for 1 s.
        let started = Date()
        assertProblem(try server.put("name", Self.marks(65_535)), 422)
        XCTAssertLessThan(Date().timeIntervalSince(started), 1, "took \(Date().timeIntervalSince(started)) s")
        // 65,536 scalars of short runs (the most the default maxLength allows), not NFC.
        var value = String(repeating: "a" + String(repeating: "\u{0316}\u{0301}", count: 15), count: 2_114)
        value = String(value.unicodeScalars.prefix(65_536))
        XCTAssertEqual(try server.put("name", value).status, 200)
        let probe = try LoopResponsiveness.measure(server, clients: 2, seconds: 3) { connection in
            let reply = try connection.request("POST", "/ofrep/v1/evaluate/flags/name", json: [String: Any]())
            XCTAssertEqual(reply.status, 200)
            XCTAssertEqual(reply.json?["variant"] as? String, "set")
        }
        print("OFREP evaluation of a 65,536-scalar name: \(probe.summary)")
        XCTAssertGreaterThan(probe.attacks, 10)
        probe.assertResponsive()
    }

    func test_a_canonically_equal_value_is_a_change_because_values_compare_by_bytes() throws {
        let server = try TidingsProcess()
        defer { server.stop() }
        let first = assertJSON(try server.put("name", "caf\u{00E9}"))
        let second = assertJSON(try server.put("name", "cafe\u{0301}"))
        let firstRevision = try XCTUnwrap(first["revision"]?.intValue)
        XCTAssertEqual(second["revision"]?.intValue, firstRevision + 1, "a different byte sequence is a change (as on PostgreSQL)")
        let stored = try server.get("/preferences/name")
        XCTAssertEqual(Array((stored.value?["value"]?.stringValue ?? "").utf8), Array("cafe\u{0301}".utf8))
        // The same bytes again are no change.
        XCTAssertEqual(assertJSON(try server.put("name", "cafe\u{0301}"))["revision"]?.intValue, firstRevision + 1)
    }
}

/// OFREP evaluations check only the shape of their context, and a large one off the loop: a
/// context of 60,000 members took 0.2–0.5 s of the loop per evaluation (4 clients: `/healthz`
/// median 472 ms).
final class OFREPContextCostTests: XCTestCase {
    func test_a_huge_evaluation_context_does_not_hold_the_loop() throws {
        let server = try TidingsProcess()
        defer { server.stop() }
        var members: [String: Any] = ["targetingKey": "user-1"]
        for index in 0..<30_000 { members["attribute\(index)"] = ["nested": index] }
        let body = Array(try JSONSerialization.data(withJSONObject: ["context": members]))
        XCTAssertGreaterThan(body.count, 700_000)
        let single = try server.request("POST", "/ofrep/v1/evaluate/flags/age", headers: ["Content-Type": "application/json"], body: body)
        XCTAssertEqual(single.status, 200, single.text)
        XCTAssertEqual(single.json?["key"] as? String, "age")
        let probe = try LoopResponsiveness.measure(server, clients: 4, seconds: 4) { connection in
            let reply = try connection.request("POST", "/ofrep/v1/evaluate/flags", headers: ["Content-Type": "application/json"], body: body)
            XCTAssertEqual(reply.status, 200)
        }
        print("OFREP bulk evaluations with a 30,000-member context: \(probe.summary)")
        XCTAssertGreaterThan(probe.attacks, 4)
        probe.assertResponsive()
        // The shape rules still hold for any size.
        var bad = members
        bad["targetingKey"] = 7
        let wrong = try server.request("POST", "/ofrep/v1/evaluate/flags/age", headers: ["Content-Type": "application/json"],
                                       body: Array(try JSONSerialization.data(withJSONObject: ["context": bad])))
        XCTAssertEqual(wrong.status, 400)
        XCTAssertEqual(wrong.json?["errorCode"] as? String, "PARSE_ERROR")
        let notObject = try server.request("POST", "/ofrep/v1/evaluate/flags", contentType: "application/json",
                                           text: "{\"context\": [" + String(repeating: "1,", count: 50_000) + "1]}")
        XCTAssertEqual(notObject.status, 400)
        XCTAssertEqual(notObject.json?["errorCode"] as? String, "PARSE_ERROR")
    }
}

/// SIGTERM ends the process within 10 s even while the loop is held (the deadline used to be a
/// timer on the loop itself: 41 s during a stall).
final class ShutdownDeadlineTests: XCTestCase {
    func test_SIGTERM_during_a_loop_stall_exits_0_within_10_seconds() throws {
        let server = try TidingsProcess()
        defer { server.stop() }
        // The loop's thread is held from outside (the product has no hook for it).
        let stall = try LoopStall(pid: server.pid)
        defer { stall.release() }
        // The loop is held: a request gets no answer.
        let connection = try server.connect(timeout: 1)
        connection.send("GET", "/healthz")
        XCTAssertThrowsError(try connection.readReply(), "the loop answered during the stall")
        let sent = Date()
        let status = server.stop(signal: SIGTERM, timeout: 15)
        let elapsed = Date().timeIntervalSince(sent)
        XCTAssertEqual(status, 0, server.log)
        XCTAssertLessThan(elapsed, 10, "exited after \(elapsed) s")
        XCTAssertTrue(server.log.contains("deadline"), server.log)
    }

    func test_SIGTERM_during_a_flood_of_combining_marks_exits_0_within_10_seconds() throws {
        let server = try TidingsProcess()
        defer { server.stop() }
        let body = Array(try JSONSerialization.data(withJSONObject: ["thing": UnicodeWorkTests.marks(500_000)]))
        let port = server.port
        let sender = Thread {
            let connection = try? HTTPConnection(port: port, timeout: 60)
            _ = try? connection?.request("POST", "/things", headers: ["Content-Type": "application/json"], body: body)
        }
        sender.start()
        usleep(300_000)
        let sent = Date()
        let status = server.stop(signal: SIGTERM, timeout: 15)
        XCTAssertEqual(status, 0, server.log)
        XCTAssertLessThan(Date().timeIntervalSince(sent), 10)
    }
}
