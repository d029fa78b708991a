import Foundation
import XCTest
import TestFixtures
import TidingsAPI
import TidingsTesting

/// openapi.yaml "OpenFeature (OFREP 0.3.0)", in-process (see `InProcessTidings`): evaluation bodies
/// as exact JSON text (OpenFeature clients read a value's type from it), the bulk ETag and 304, the
/// change stream and its resume, errors with OFREP codes, both credential styles, CORS. The
/// Python OFREP suite (`Tests/ofrep`) holds a real provider to the live server.
final class OpenFeatureRoutesTests: XCTestCase {
    private var server: InProcessTidings!

    override func setUpWithError() throws { server = try InProcessTidings() }
    override func tearDown() { server?.stop(); server = nil }

    private func evaluate(_ key: String, body: String = #"{"context":{"targetingKey":"u1"}}"#,
                          headers: [String: String] = [:]) throws -> HTTPReply {
        try server.request("POST", "/ofrep/v1/evaluate/flags/\(key)", contentType: "application/json", text: body, headers: headers)
    }

    private func bulk(headers: [String: String] = [:], body: String = "{}") throws -> HTTPReply {
        try server.request("POST", "/ofrep/v1/evaluate/flags", contentType: "application/json", text: body, headers: headers)
    }

    // MARK: Evaluation

    func test_single_evaluation_keeps_the_declared_type_in_the_json_text() throws {
        let age = try evaluate("age")
        XCTAssertEqual(age.status, 200)
        XCTAssertEqual(age.header("Content-Type"), "application/json")
        XCTAssertEqual(age.text, #"{"key":"age","value":5,"reason":"STATIC","variant":"default","metadata":{"revision":0,"type":"integer"}}"#)
        XCTAssertEqual(try server.put("speed", 2).status, 200)
        // A number is written with a fraction even when it is whole: `2.0`, never `2`.
        XCTAssertEqual(try evaluate("speed").text,
                       #"{"key":"speed","value":2.0,"reason":"STATIC","variant":"set","metadata":{"revision":1,"type":"number"}}"#)
        XCTAssertEqual(try evaluate("name").value?["value"], "fat")
        XCTAssertEqual(try evaluate("readyForAction").value?["value"], false)
    }

    func test_variant_is_set_while_the_value_differs_from_the_default_and_default_again_after_a_reset() throws {
        XCTAssertEqual(try server.put("age", 9).status, 200)
        XCTAssertEqual(try evaluate("age").value?["variant"], "set")
        XCTAssertEqual(try server.request("DELETE", "/preferences/age").status, 200)
        let reset = try evaluate("age").value
        XCTAssertEqual(reset?["variant"], "default")
        XCTAssertEqual(reset?["metadata"], ["revision": 2, "type": "integer"])
    }

    func test_the_context_is_optional_and_does_not_change_the_value() throws {
        for body in ["{}", #"{"context":{}}"#, #"{"context":{"targetingKey":"a","plan":"pro","n":[1,{"x":null}]}}"#] {
            let reply = try evaluate("age", body: body)
            XCTAssertEqual(reply.status, 200, body)
            XCTAssertEqual(reply.value?["value"], 5, body)
        }
    }

    func test_unknown_key_is_404_flag_not_found() throws {
        let reply = try evaluate("colour")
        XCTAssertEqual(reply.status, 404)
        XCTAssertEqual(reply.header("Content-Type"), "application/json")
        XCTAssertEqual(reply.value, ["key": "colour", "errorCode": "FLAG_NOT_FOUND",
                                     "errorDetails": "There is no preference 'colour'."])
    }

    func test_a_body_that_is_not_an_evaluation_request_is_400_parse_error() throws {
        for body in ["", "not json", "[1]", #"{"context":5}"#, #"{"context":null}"#, #"{"context":{"targetingKey":7}}"#, #"{"context":{},}"#] {
            let single = try evaluate("age", body: body)
            XCTAssertEqual(single.status, 400, body)
            XCTAssertEqual(single.value?["errorCode"], "PARSE_ERROR", body)
            XCTAssertEqual(single.value?["key"], "age", body)
            XCTAssertNotNil(single.value?["errorDetails"]?.stringValue, body)
            let all = try bulk(body: body)
            XCTAssertEqual(all.status, 400, body)
            XCTAssertEqual(all.value?["errorCode"], "PARSE_ERROR", body)
            XCTAssertNil(all.value?["key"], body)
        }
        // A content type that cannot carry JSON is the API's usual 415 problem.
        assertProblem(try server.request("POST", "/ofrep/v1/evaluate/flags/age", contentType: "text/plain", text: "{}"), 415)
    }

    /// A body equal, byte for byte, to one already found an evaluation request is accepted without
    /// a second scan (`OFREPCheckedBodies`): one of the same length that differs anywhere — or the
    /// same bytes under a content type that cannot carry JSON — is still refused, and a body
    /// pushed out by newer ones is checked again.
    func test_a_body_like_one_already_accepted_is_still_checked() throws {
        let accepted = #"{"context":{"targetingKey":"u1","plan":"pro"}}"#
        let twins = [#"{"context":{"targetingKey":1234,"plan":"pro"}}"#,   // same length, not a string
                     #"{"context":{"targetingKey":"u1","plan":"pro"}]"#,   // same length, not JSON
                     #"{"context":{"plan":"u1xxxxxxxx","plan":"pro"}}"#]     // same length, a name twice
        for round in 0..<2 {
            for path in ["/ofrep/v1/evaluate/flags/age", "/ofrep/v1/evaluate/flags"] {
                for _ in 0..<2 { XCTAssertEqual(try server.request("POST", path, contentType: "application/json", text: accepted).status, 200) }
                for twin in twins {
                    XCTAssertEqual(twin.utf8.count, accepted.utf8.count)
                    let reply = try server.request("POST", path, contentType: "application/json", text: twin)
                    XCTAssertEqual(reply.status, 400, "\(path) \(twin)")
                    XCTAssertEqual(reply.value?["errorCode"], "PARSE_ERROR", "\(path) \(twin)")
                }
                assertProblem(try server.request("POST", path, contentType: "text/plain", text: accepted), 415)
            }
            // More accepted bodies than are kept: the first is pushed out, then read again.
            for index in 0..<12 {
                let other = #"{"context":{"targetingKey":"user-\#(index)"}}"#
                XCTAssertEqual(try evaluate("age", body: other).status, 200, "round \(round)")
            }
        }
    }

    /// Small bodies are decided by one pass over the bytes (`OFREPBodyScan`); bodies over 32 KiB
    /// (here: the same body padded with spaces) take the full reading. Both must answer alike.
    func test_the_quick_body_check_answers_as_the_full_reading_does() throws {
        let deep = String(repeating: "[", count: 70) + String(repeating: "]", count: 70)
        let bodies = [
            "{}", " { } ", #"{"context":{}}"#, #"{"context":{"targetingKey":"u"}}"#,
            #"{"context":{"targetingKey":"u","a":[1,2,{"b":null}],"n":-0.5,"t":true,"f":false,"z":0}}"#,
            #"{"other":{"context":5},"context":{"k":{"targetingKey":1}}}"#,
            #"{"context":5}"#, #"{"context":null}"#, #"{"context":"x"}"#, #"{"context":[]}"#,
            #"{"context":{"targetingKey":7}}"#, #"{"context":{"targetingKey":null}}"#, #"{"context":{"targetingKey":{}}}"#,
            #"{"context":{},}"#, #"{"a":1,"a":2}"#, #"{"context":{"x":1,"x":1}}"#, #"{"context":{"targetingKey":"é"}}"#,
            #"{"context":{"k":"\u00e9"}}"#, #"{"context":{"k":"a\"b\\c\n\/"}}"#, #"{"cont\u0065xt":5}"#,
            #"{"context":{"k":01}}"#, #"{"context":{"k":1.}}"#, #"{"context":{"k":.5}}"#, #"{"context":{"k":1e5}}"#,
            #"{"context":{"k":-}}"#, #"{"context":{"k":12345678901234567890}}"#, #"{"context":{"k":tru}}"#,
            #"{"context":{"k":"open}}"#, "{\"context\":{\"k\":\"tab\there\"}}", #"{"context":{"k":"\q"}}"#,
            #"{} x"#, "{}{}", #"{"context" {}}"#, #"{"context":{"k":1 "j":2}}"#, #"{context:{}}"#,
            "[1]", #""s""#, "1", "null", " ", "{\"context\":{\"k\":" + deep + "}}",
        ]
        for body in bodies {
            for path in ["/ofrep/v1/evaluate/flags/age", "/ofrep/v1/evaluate/flags"] {
                let quick = try server.request("POST", path, contentType: "application/json", text: body)
                let full = try server.request("POST", path, contentType: "application/json",
                                              text: body + String(repeating: " ", count: 33 << 10))
                XCTAssertEqual(quick.status, full.status, "\(path) \(body): \(quick.text) / \(full.text)")
                XCTAssertEqual(quick.value?["errorDetails"], full.value?["errorDetails"], "\(path) \(body)")
                XCTAssertTrue([200, 400].contains(quick.status), "\(path) \(body): \(quick.text)")
            }
        }
    }

    /// The quick check crosses strings eight bytes at a time and tells member names apart by a
    /// fingerprint of their length, first and last eight bytes: a byte that needs a look (quote,
    /// escape, control, non-ASCII) at every offset of a word, and names that differ only where the
    /// fingerprint does not look, must still be decided as the full reading decides them.
    func test_the_quick_body_check_agrees_at_every_offset_of_a_word() throws {
        var bodies: [String] = []
        let plain = String(repeating: "a", count: 19)
        for special in ["\"", "\\n", "\\u0041", "\\q", "\t", "é", "\\"] {
            for offset in 0...plain.count {
                var text = plain
                text.insert(contentsOf: special, at: text.index(text.startIndex, offsetBy: offset))
                bodies.append(#"{"context":{"k":""# + text + #""}}"#)        // in a value
                bodies.append(#"{"context":{""# + text + #"":1}}"#)         // in a name
            }
        }
        for length in [1, 7, 8, 9, 15, 16, 17, 24] {
            for offset in 0..<length {
                let name = String(repeating: "n", count: length)
                var other = Array(name.utf8)
                other[offset] = UInt8(ascii: "m")
                let different = String(decoding: other, as: UTF8.self)
                // Differ in one byte (maybe one no fingerprint word covers), then equal: only the second is named twice.
                bodies.append(#"{"context":{""# + name + #"":1,""# + different + #"":2}}"#)
                bodies.append(#"{"context":{""# + name + #"":1,"x":{},""# + name + #"":2}}"#)
                bodies.append(#"{""# + name + #"":{""# + name + #"":1},""# + name + #"":2}"#)
            }
        }
        var decided = 0
        for body in bodies {
            let path = "/ofrep/v1/evaluate/flags/age"
            let quick = try server.request("POST", path, contentType: "application/json", text: body)
            let full = try server.request("POST", path, contentType: "application/json",
                                          text: body + String(repeating: " ", count: 33 << 10))
            XCTAssertEqual(quick.status, full.status, "\(body): \(quick.text) / \(full.text)")
            XCTAssertEqual(quick.value?["errorDetails"], full.value?["errorDetails"], body)
            if quick.status == 200 { decided += 1 }
        }
        // Both kinds occur: the bodies are not all refused (or all accepted) by one early mistake.
        XCTAssertGreaterThan(decided, 50)
        XCTAssertLessThan(decided, bodies.count - 50)
    }

    /// The quick check reads runs of plain `"name":"value"` members (a provider's context) in a
    /// loop of its own, sixteen bytes at a time, and hands anything else back to its general
    /// loop. Contexts like the benchmark's, changed here and there by a seeded generator (a byte
    /// that matters to JSON put in, taken out or replaced, a member repeated, white space after a
    /// comma), must be decided as the full reading decides them, wherever the change falls.
    func test_the_quick_body_check_agrees_on_changed_provider_contexts() throws {
        var attributes = [#""targetingKey":"user-1234""#, #""plan":"pro""#]
        for index in 1...24 { attributes.append(#""attribute\#(index < 10 ? "0" : "")\#(index)":"value-\#(index)-abcdefghijklmnop""#) }
        let context = Array(("{\"context\":{" + attributes.joined(separator: ",") + "}}").utf8)
        let alphabet = Array(#"{}[]":,.\/ -019eEtnu"#.utf8) + [0x09, 0x0A, 0x0D, 0x01, 0xC3, 0xA9]
        var random = SeededGenerator(seed: 33)
        var bodies = [context]
        for _ in 0..<160 {
            var body = context
            for _ in 0...random.below(3) {
                let at = random.below(body.count)
                switch random.below(4) {
                case 0: body.remove(at: at)
                case 1: body.insert(alphabet[random.below(alphabet.count)], at: at)
                case 2: body[at] = alphabet[random.below(alphabet.count)]
                default:
                    // A member again (named twice), or white space after a comma.
                    let member = Array(("," + attributes[random.below(attributes.count)]).utf8)
                    let comma = body[at...].firstIndex(of: UInt8(ascii: ",")) ?? body.count - 2
                    body.insert(contentsOf: random.below(2) == 0 ? member : [0x20, 0x0A], at: comma + 1)
                }
            }
            bodies.append(body)
        }
        var decided = 0
        for body in bodies {
            let text = String(decoding: body, as: UTF8.self)
            let path = "/ofrep/v1/evaluate/flags/age"
            let quick = try server.request("POST", path, headers: ["Content-Type": "application/json"], body: body)
            let full = try server.request("POST", path, headers: ["Content-Type": "application/json"],
                                          body: body + [UInt8](repeating: 0x20, count: 33 << 10))
            XCTAssertEqual(quick.status, full.status, "\(text.debugDescription): \(quick.text) / \(full.text)")
            XCTAssertEqual(quick.value?["errorDetails"], full.value?["errorDetails"], text.debugDescription)
            if quick.status == 200 { decided += 1 }
        }
        XCTAssertGreaterThan(decided, 20)
        XCTAssertLessThan(decided, bodies.count - 20)
    }

    /// The answers are built once per revision and then served as bytes: a change is seen by the
    /// very next evaluation, single and bulk, whatever was cached before it.
    func test_a_change_is_seen_by_the_next_evaluation_at_once() throws {
        for _ in 0..<2 {
            XCTAssertEqual(try evaluate("age").value?["value"], 5)
            XCTAssertEqual(try bulk().header("ETag"), "\"0\"")
        }
        XCTAssertEqual(try server.put("age", 6).status, 200)  // 1
        XCTAssertEqual(try evaluate("age").value?["value"], 6)
        XCTAssertEqual(try evaluate("age").value?["variant"], "set")
        let afterPut = try bulk(headers: ["If-None-Match": "\"0\""])
        XCTAssertEqual(afterPut.status, 200)
        XCTAssertEqual(afterPut.value?["flags"]?.arrayValue?.first { $0["key"] == "age" }?["value"], 6)
        // Keys take their revisions in declaration order: name 2, age 3.
        XCTAssertEqual(try server.request("PATCH", "/preferences", json: ["age": 7, "name": "lean"]).status, 200)
        XCTAssertEqual(try evaluate("age").value?["metadata"]?["revision"], 3)
        XCTAssertEqual(try evaluate("name").value?["value"], "lean")
        XCTAssertEqual(try bulk().header("ETag"), "\"3\"")
        XCTAssertEqual(try server.request("DELETE", "/preferences/age").status, 200)  // 4
        XCTAssertEqual(try evaluate("age").value?["value"], 5)
        XCTAssertEqual(try evaluate("age").value?["variant"], "default")
        XCTAssertEqual(try bulk().value?["flags"]?.arrayValue?.first { $0["key"] == "age" }?["metadata"]?["revision"], 4)
        // A change to another key leaves this flag's answer as it was, and the bulk one moves on.
        XCTAssertEqual(try server.put("speed", 1.5).status, 200)  // 5
        XCTAssertEqual(try evaluate("age").value?["metadata"]?["revision"], 4)
        XCTAssertEqual(try bulk().header("ETag"), "\"5\"")
    }

    func test_bulk_lists_every_preference_in_declaration_order_with_the_event_stream() throws {
        let reply = try bulk()
        XCTAssertEqual(reply.status, 200)
        let body = try XCTUnwrap(reply.value)
        XCTAssertEqual(body["flags"]?.arrayValue?.compactMap { $0["key"]?.stringValue }, PreferenceRoutesTests.builtInKeys)
        XCTAssertEqual(body["flags"]?.arrayValue?.compactMap { $0["reason"]?.stringValue }, Array(repeating: "STATIC", count: 8))
        XCTAssertEqual(body["eventStreams"], [["type": "sse", "endpoint": ["requestUri": "/ofrep/v1/events"], "inactivityDelaySec": 120]])
        // substring: the number's spelling (0.0, a number, not the integer 0) is text a parsed value does not keep.
        XCTAssertTrue(reply.text.contains(#"{"key":"speed","value":0.0,"#), reply.text)
    }

    // MARK: Bulk ETag

    func test_bulk_etag_is_the_latest_preference_revision_and_if_none_match_answers_304() throws {
        let first = try bulk()
        XCTAssertEqual(first.header("ETag"), "\"0\"")
        let unchanged = try bulk(headers: ["If-None-Match": "\"0\""])
        XCTAssertEqual(unchanged.status, 304)
        XCTAssertEqual(unchanged.body, [])
        XCTAssertEqual(unchanged.header("ETag"), "\"0\"")

        // A change to something else (the thing list) moves the global revision, not the flags' ETag.
        XCTAssertEqual(try server.post(thing: "yolo").status, 201)
        XCTAssertEqual(try bulk(headers: ["If-None-Match": "\"0\""]).status, 304)

        XCTAssertEqual(try server.put("age", 6).status, 200)  // revision 2
        let changed = try bulk(headers: ["If-None-Match": "\"0\""])
        XCTAssertEqual(changed.status, 200)
        XCTAssertEqual(changed.header("ETag"), "\"2\"")
        XCTAssertEqual(changed.value?["flags"]?.arrayValue?.first { $0["key"] == "age" }?["value"], 6)
        XCTAssertEqual(try bulk(headers: ["If-None-Match": "W/\"2\""]).status, 304)
        XCTAssertEqual(try bulk(headers: ["If-None-Match": "\"1\", \"2\""]).status, 304)

        // Writing the same value again changes nothing, so the ETag stays.
        XCTAssertEqual(try server.put("age", 6).status, 200)
        XCTAssertEqual(try bulk(headers: ["If-None-Match": "\"2\""]).status, 304)
    }

    // MARK: Change notifications

    private func assertNotification(_ event: EventStreamReader.Event, id: String, etag: String,
                                    file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(event.id, id, file: file, line: line)
        XCTAssertEqual(event.name, "message", file: file, line: line)
        let data = event.json ?? [:]
        XCTAssertEqual(data["type"] as? String, "refetchEvaluation", file: file, line: line)
        XCTAssertEqual(data["etag"] as? String, etag, file: file, line: line)
        let lastModified = (data["lastModified"] as? NSNumber)?.doubleValue ?? 0
        XCTAssertEqual(lastModified, Date().timeIntervalSince1970, accuracy: 120, file: file, line: line)
        XCTAssertEqual(lastModified, lastModified.rounded(), "whole seconds: \(event.data)", file: file, line: line)
    }

    func test_events_stream_sends_a_refetch_notification_per_preference_change_and_nothing_else() throws {
        let stream = try server.openEventStream("/ofrep/v1/events")
        XCTAssertEqual(stream.reply.status, 200)
        XCTAssertEqual(stream.reply.header("Content-Type"), "text/event-stream")
        guard case .retry = try stream.nextMessage(timeout: 2) else { return XCTFail("no retry: line") }
        // No snapshot (a provider fetches the bulk evaluation itself): the first event is the
        // first change's.
        XCTAssertEqual(try server.put("age", 6).status, 200)       // 1
        assertNotification(try stream.nextEvent(), id: "1", etag: "\"1\"")
        XCTAssertEqual(try server.post(thing: "brb").status, 201)   // 2: not a flag change
        XCTAssertEqual(try server.request("PATCH", "/preferences", json: ["name": "n", "speed": 1.5]).status, 200)  // 3, 4
        let patched = try stream.nextEvents(2)
        assertNotification(patched[0], id: "3", etag: "\"3\"")
        assertNotification(patched[1], id: "4", etag: "\"4\"")
        // The notification's etag is the bulk ETag after that change.
        XCTAssertEqual(try bulk().header("ETag"), "\"4\"")
        // Nothing else came (the thing at 2 included): the next event is the next change's.
        XCTAssertEqual(try server.put("age", 7).status, 200)       // 5
        assertNotification(try stream.nextEvent(), id: "5", etag: "\"5\"")
    }

    func test_events_resume_with_last_event_id_replays_the_missed_changes_without_gap_or_duplicate() throws {
        let first = try server.openEventStream("/ofrep/v1/events")
        XCTAssertEqual(try server.put("age", 6).status, 200)        // 1
        let seen = try first.nextEvent()
        assertNotification(seen, id: "1", etag: "\"1\"")

        XCTAssertEqual(try server.put("name", "x").status, 200)     // 2
        XCTAssertEqual(try server.post(thing: "afk").status, 201)   // 3
        XCTAssertEqual(try server.put("speed", 3).status, 200)      // 4

        let resumed = try server.openEventStream("/ofrep/v1/events", headers: ["Last-Event-ID": "1"])
        let replay = try resumed.nextEvents(2)
        assertNotification(replay[0], id: "2", etag: "\"2\"")
        assertNotification(replay[1], id: "4", etag: "\"4\"")
        // The replayed frame is the one a live subscriber got: same bytes, same lastModified.
        let byQuery = try server.openEventStream("/ofrep/v1/events?lastEventId=0")
        XCTAssertEqual(try byQuery.nextEvents(3), [seen] + replay)

        XCTAssertEqual(try server.put("age", 7).status, 200)        // 5: live after the replay
        assertNotification(try resumed.nextEvent(), id: "5", etag: "\"5\"")
        assertNotification(try byQuery.nextEvent(), id: "5", etag: "\"5\"")
    }

    func test_events_resume_point_that_cannot_be_replayed_gets_one_notification_at_the_current_revision() throws {
        XCTAssertEqual(try server.put("age", 6).status, 200)        // 1
        XCTAssertEqual(try server.post(thing: "imo").status, 201)   // 2
        let ahead = try server.openEventStream("/ofrep/v1/events", headers: ["Last-Event-ID": "99"])
        assertNotification(try ahead.nextEvent(), id: "2", etag: "\"1\"")
        // Digits beyond any 64-bit revision cannot be ours either.
        let beyond = try server.openEventStream("/ofrep/v1/events?lastEventId=99999999999999999999")
        assertNotification(try beyond.nextEvent(), id: "2", etag: "\"1\"")
        assertProblem(try server.get("/ofrep/v1/events?lastEventId=x"), 400)
        // One notification and no more: the next is the next change's.
        XCTAssertEqual(try server.put("age", 7).status, 200)        // 3
        assertNotification(try ahead.nextEvent(), id: "3", etag: "\"3\"")
    }

    func test_events_resume_after_the_replay_buffer_is_exceeded_gets_the_resync_notification() throws {
        let small = try InProcessTidings { $0.replayBuffer = 2 }
        defer { small.stop() }
        for value in 1...4 { XCTAssertEqual(try small.put("age", value).status, 200) }
        let stream = try small.openEventStream("/ofrep/v1/events", headers: ["Last-Event-ID": "1"])
        assertNotification(try stream.nextEvent(), id: "4", etag: "\"4\"")
        // One notification and no more: the next is the next change's.
        XCTAssertEqual(try small.put("age", 5).status, 200)
        assertNotification(try stream.nextEvent(), id: "5", etag: "\"5\"")
    }

    // MARK: Credentials and CORS

    func test_bearer_and_x_api_key_carry_the_read_or_api_token_and_evaluation_is_a_read() throws {
        let secured = try InProcessTidings { $0.readToken = "r3ad"; $0.apiTokens.append("wr1te") }
        defer { secured.stop() }
        func evaluate(_ headers: [String: String]) throws -> HTTPReply {
            try secured.request("POST", "/ofrep/v1/evaluate/flags/age", contentType: "application/json", text: "{}", headers: headers)
        }
        XCTAssertEqual(try evaluate([:]).status, 401)
        XCTAssertEqual(try evaluate(["X-API-Key": "nope"]).status, 401)
        XCTAssertEqual(try evaluate(["X-API-Key": ""]).status, 401)
        // POST, but a read: the read token is enough, in either style.
        XCTAssertEqual(try evaluate(["X-API-Key": "r3ad"]).status, 200)
        XCTAssertEqual(try evaluate(["Authorization": "Bearer r3ad"]).status, 200)
        XCTAssertEqual(try evaluate(["X-API-Key": "wr1te"]).status, 200)
        // Authorization, when present, decides alone.
        XCTAssertEqual(try evaluate(["Authorization": "Bearer nope", "X-API-Key": "r3ad"]).status, 401)
        let bulk = try secured.request("POST", "/ofrep/v1/evaluate/flags", contentType: "application/json", text: "{}",
                                       headers: ["X-API-Key": "r3ad"])
        XCTAssertEqual(bulk.status, 200)
        // The header works for the rest of the API too: a write with the api token.
        XCTAssertEqual(try secured.put("age", 6, headers: ["X-API-Key": "wr1te"]).status, 200)
        XCTAssertEqual(try secured.put("age", 7, headers: ["X-API-Key": "r3ad"]).status, 401)

        let stream = try secured.openEventStream("/ofrep/v1/events", headers: ["X-API-Key": "r3ad"])
        XCTAssertEqual(stream.reply.status, 200)
        XCTAssertEqual(try secured.get("/ofrep/v1/events").status, 401)
        // A stream ticket opens it too, like every other stream.
        let ticket = try XCTUnwrap(try secured.request("POST", "/stream-tickets", headers: ["X-API-Key": "r3ad"]).value?["ticket"]?.stringValue)
        XCTAssertEqual(try secured.openEventStream("/ofrep/v1/events?ticket=\(ticket)").reply.status, 200)
    }

    func test_cors_preflight_allows_x_api_key_on_the_evaluation_routes() throws {
        let origin = "https://app.example"
        let cors = try InProcessTidings { $0.corsOrigins.append(origin) }
        defer { cors.stop() }
        let preflight = try cors.request("OPTIONS", "/ofrep/v1/evaluate/flags", headers: [
            "Origin": origin, "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "content-type, x-api-key",
        ])
        XCTAssertEqual(preflight.status, 204)
        XCTAssertEqual(preflight.header("Access-Control-Allow-Origin"), origin)
        XCTAssertTrue(preflight.headerList("Access-Control-Allow-Methods").contains("POST"), "\(preflight.headers)")
        XCTAssertTrue(preflight.headerList("Access-Control-Allow-Headers").contains("X-API-Key"), "\(preflight.headers)")
        let reply = try cors.request("POST", "/ofrep/v1/evaluate/flags", contentType: "application/json", text: "{}",
                                     headers: ["Origin": origin])
        XCTAssertEqual(reply.header("Access-Control-Allow-Origin"), origin)
        XCTAssertTrue(reply.headerList("Access-Control-Expose-Headers").contains("ETag"), "\(reply.headers)")
    }
}
