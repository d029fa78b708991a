import Foundation
import XCTest
import TestFixtures
import TidingsAPI
import TidingsTesting

/// openapi.yaml "Conventions", one test per rule, in-process (the real application, router and
/// middleware over a real SQLite file; see `InProcessTidings`). What needs a socket — HEAD on a
/// keep-alive connection, unknown methods and versions, raw request targets, the body limit — is
/// `EndToEndTests.ConventionsTests`.
final class ConventionRoutesTests: XCTestCase {
    private var server: InProcessTidings!

    override func setUpWithError() throws { server = try InProcessTidings() }
    override func tearDown() { server?.stop(); server = nil }

    // MARK: Bodies and content types

    func test_responses_are_JSON_with_ContentType_application_json() throws {
        for target in ["/preferences", "/preferences/age", "/things", "/healthz"] {
            let body = assertJSON(try server.get(target), 200, target)
            XCTAssertNotNil(body.objectValue, target)
        }
        assertJSON(try server.put("age", 6), 200)
        assertJSON(try server.post(thing: "ok"), 201)
    }

    func test_errors_are_problem_details_as_application_problem_json_never_HTML() throws {
        let replies = [
            try server.get("/preferences/nope"),                                   // 404
            try server.request("PUT", "/preferences/age", contentType: "application/json", text: "{"),  // 400
            try server.put("age", "six"),                                          // 422
            try server.request("DELETE", "/things"),                               // 405
            try server.request("PUT", "/preferences/age", contentType: "text/plain", text: #"{"value":1}"#),  // 415
        ]
        for (reply, status) in zip(replies, [404, 400, 422, 405, 415]) {
            let problem = assertProblem(reply, status)
            XCTAssertEqual(problem["type"], "about:blank")
        }
    }

    func test_request_body_application_json_is_accepted_with_or_without_charset() throws {
        assertJSON(try server.request("PUT", "/preferences/age", contentType: "application/json", text: #"{"value": 7}"#))
        assertJSON(try server.request("PUT", "/preferences/age", contentType: "application/json; charset=utf-8",
                                      text: #"{"value": 8}"#))
        XCTAssertEqual(try server.get("/preferences/age").value?["value"], 8)
    }

    func test_request_body_any_application_plus_json_is_accepted() throws {
        assertJSON(try server.request("PATCH", "/preferences", contentType: "application/merge-patch+json",
                                      text: #"{"age": 9}"#))
        assertJSON(try server.request("POST", "/things", contentType: "application/vnd.tidings+json",
                                      text: #"{"thing": "vnd"}"#), 201)
        XCTAssertEqual(try server.get("/preferences/age").value?["value"], 9)
        XCTAssertEqual(try server.things(), ["VND"])
    }

    func test_request_body_without_ContentType_is_read_as_JSON() throws {
        assertJSON(try server.request("PUT", "/preferences/age", contentType: nil, text: #"{"value": 10}"#))
        assertJSON(try server.request("POST", "/things", contentType: nil, text: #"{"thing": "curl"}"#), 201)
        XCTAssertEqual(try server.get("/preferences/age").value?["value"], 10)
    }

    func test_request_body_form_urlencoded_holding_JSON_is_accepted_like_curl_d() throws {
        let form = "application/x-www-form-urlencoded"
        assertJSON(try server.request("PUT", "/preferences/age", contentType: form, text: #"{"value": 11}"#))
        assertJSON(try server.request("PATCH", "/preferences", contentType: form, text: #"{"speed": 1.5}"#))
        assertJSON(try server.request("POST", "/things", contentType: form, text: #"{"thing": "form"}"#), 201)
        assertJSON(try server.request("PUT", "/things", contentType: form, text: #"{"things": ["x"]}"#))
        XCTAssertEqual(try server.get("/preferences").value?["speed"], 1.5)
    }

    func test_any_other_explicit_ContentType_is_415_and_nothing_is_applied() throws {
        let json = #"{"value": 1, "thing": "a", "things": ["a"], "age": 1}"#
        for contentType in ["text/plain", "text/json", "application/xml", "multipart/form-data; boundary=x"] {
            for (method, target) in [("PUT", "/preferences/age"), ("PATCH", "/preferences"),
                                     ("POST", "/things"), ("PUT", "/things")] {
                assertProblem(try server.request(method, target, contentType: contentType, text: json), 415,
                              "\(method) \(target) as \(contentType)")
            }
        }
        XCTAssertEqual(try server.get("/preferences/age").value?["value"], 5)
        XCTAssertEqual(try server.things(), [])
        XCTAssertEqual(try server.currentRevision(), 0)
    }

    func test_malformed_JSON_body_is_400() throws {
        for text in ["{", #"{"value": }"#, "value=1", #"{'value': 1}"#, "\u{FF}\u{FE}", "", #"{"value": 1} x"#,
                     #"{"value": 1,}"#, #"{"things": ["a",]}"#, #"{"value": 1 /* c */}"#, #"{"value": NaN}"#] {
            for (method, target) in [("PUT", "/preferences/age"), ("PATCH", "/preferences"),
                                     ("POST", "/things"), ("PUT", "/things")] {
                assertProblem(try server.request(method, target, contentType: "application/json", text: text), 400,
                              "\(method) \(target) with \(text.debugDescription)")
            }
        }
        XCTAssertEqual(try server.currentRevision(), 0)
    }

    func test_commas_and_brackets_inside_strings_are_not_mistaken_for_malformed_JSON() throws {
        XCTAssertEqual(try server.put("name", "a,}b,]\\\",}").value?["value"], "a,}b,]\\\",}")
        XCTAssertEqual(try server.put(things: ["x,]", "y,}"]).value?["things"], ["X,]", "Y,}"])
    }

    func test_wellformed_JSON_of_the_wrong_shape_is_422() throws {
        let cases: [(String, String, String)] = [
            ("PUT", "/preferences/age", "[1]"),
            ("PUT", "/preferences/age", "6"),
            ("PUT", "/preferences/age", #"{"value": [6]}"#),
            ("PUT", "/preferences/age", #"{"value": {"n": 6}}"#),
            ("PATCH", "/preferences", "[]"),
            ("PATCH", "/preferences", #""age""#),
            ("POST", "/things", #"{"thing": 5}"#),
            ("POST", "/things", #"{"thing": null}"#),
            ("POST", "/things", #"{"name": "yolo"}"#),
            ("POST", "/things", #"["yolo"]"#),
            ("PUT", "/things", #"{"things": "YOLO"}"#),
            ("PUT", "/things", #"{"things": [1, 2]}"#),
            ("PUT", "/things", #"{}"#),
        ]
        for (method, target, text) in cases {
            assertProblem(try server.request(method, target, contentType: "application/json", text: text), 422,
                          "\(method) \(target) \(text)")
        }
        XCTAssertEqual(try server.currentRevision(), 0)
    }

    func test_malformed_query_is_400() throws {
        assertProblem(try server.get("/events?topics=weather"), 400)
        assertProblem(try server.get("/events?topics="), 400)
        assertProblem(try server.get("/events?keys="), 400)
        assertProblem(try server.get("/events?lastEventId="), 400)
        assertProblem(try server.get("/events?lastEventId=abc"), 400)
    }

    func test_unknown_key_in_a_stream_query_is_422_naming_it() throws {
        let reply = try server.get("/preferences/events?keys=age,nope")
        let problem = assertProblem(reply, 422)
        XCTAssertEqual(problem["errors"]?.arrayValue?.compactMap { $0["key"] }, ["nope"], reply.text)
    }

    // MARK: Status codes for paths and methods

    func test_unknown_resource_is_404_problem() throws {
        assertProblem(try server.get("/nope"), 404)
        assertProblem(try server.get("/preferences/nope"), 404)
        assertProblem(try server.get("/things/NOPE"), 404)
        assertProblem(try server.get("/preferences/nope/events"), 404)
    }

    func test_wrong_method_is_405_with_Allow() throws {
        let post = try server.request("POST", "/preferences/age", json: ["value": 1])
        assertProblem(post, 405)
        XCTAssertEqual(Set(post.headerList("Allow")), ["GET", "HEAD", "PUT", "DELETE", "OPTIONS"], "no POST on a key")

        let delete = try server.request("DELETE", "/things")
        assertProblem(delete, 405)
        XCTAssertEqual(Set(delete.headerList("Allow")), ["GET", "HEAD", "POST", "PUT", "OPTIONS"])
        assertProblem(try server.request("PUT", "/preferences", json: ["age": 1]), 405)
    }

    func test_OPTIONS_answers_with_Allow() throws {
        let reply = try server.request("OPTIONS", "/preferences/age")
        XCTAssertTrue((200..<300).contains(reply.status), "\(reply.status)")
        XCTAssertEqual(Set(reply.headerList("Allow")), ["GET", "HEAD", "PUT", "DELETE", "OPTIONS"])
        XCTAssertEqual(Set(try server.request("OPTIONS", "/things").headerList("Allow")), ["GET", "HEAD", "POST", "PUT", "OPTIONS"])
        XCTAssertNil(reply.header("Access-Control-Allow-Origin"), "no CORS headers without --cors-origin")
    }

    // MARK: Revisions

    func test_every_change_to_any_resource_takes_the_next_global_revision() throws {
        let put = try server.put("age", 6)
        XCTAssertEqual(put.value?["revision"], 1)
        XCTAssertEqual(put.etagRevision, 1)
        XCTAssertEqual(put.revisionHeader, 1)

        let post = try server.post(thing: "yolo")
        XCTAssertEqual(post.value?["revision"], 2)
        XCTAssertEqual(post.revisionHeader, 2)

        XCTAssertEqual(try server.put("name", "lean").value?["revision"], 3)
        XCTAssertEqual(try server.request("DELETE", "/things/YOLO").status, 204)
        XCTAssertEqual(try server.currentRevision(), 4)
        XCTAssertEqual(try server.put(things: ["a", "b"]).value?["revision"], 5)
        XCTAssertEqual(try server.request("DELETE", "/preferences/age").value?["revision"], 6)

        let patch = try server.request("PATCH", "/preferences", json: ["speed": 2, "numberOfItems": 3])
        XCTAssertEqual(patch.revisionHeader, 8)
        let revisions = try ["speed", "numberOfItems"].map { try server.get("/preferences/\($0)").value?["revision"]?.intValue }
        XCTAssertEqual(Set(revisions.compactMap { $0 }), [7, 8])
    }

    func test_the_revision_is_the_ETag_of_the_changed_resource_and_the_id_of_its_event() throws {
        let stream = try server.openEventStream("/events?topics=preferences,things")
        _ = try stream.nextEvents(9)  // 8 preferences + things
        let put = try server.put("age", 6)
        XCTAssertEqual(put.header("ETag"), "\"1\"")
        let event = try stream.nextEvent()
        XCTAssertEqual(event.id, "1")
        XCTAssertEqual(event.value?["revision"], 1)
        XCTAssertEqual(try server.get("/preferences/age").header("ETag"), "\"1\"")

        let post = try server.post(thing: "x")
        XCTAssertEqual(post.header("ETag"), "\"2\"")
        XCTAssertEqual(try stream.nextEvent().id, "2")
        XCTAssertEqual(try server.get("/things").header("ETag"), "\"2\"")
    }

    func test_every_response_carries_Tidings_Revision_the_global_revision_of_its_content() throws {
        XCTAssertEqual(try server.put("age", 6).revisionHeader, 1)
        XCTAssertEqual(try server.post(thing: "a").revisionHeader, 2)
        // Reads of a resource that did not change still report the global revision.
        XCTAssertEqual(try server.get("/preferences/name").revisionHeader, 2)
        XCTAssertEqual(try server.get("/preferences").revisionHeader, 2)
        XCTAssertEqual(try server.get("/nope").revisionHeader, 2)
        XCTAssertEqual(try server.put("age", "x").revisionHeader, 2)
        XCTAssertEqual(try server.get("/preferences/age", headers: ["If-None-Match": "\"1\""]).revisionHeader, 2)
        XCTAssertEqual(try server.openEventStream("/things/events").reply.header("Tidings-Revision"), "2")
    }

    func test_read_then_subscribe_with_lastEventId_of_Tidings_Revision_misses_nothing() throws {
        XCTAssertEqual(try server.put("age", 6).status, 200)
        let read = try server.get("/preferences")
        let revision = try XCTUnwrap(read.revisionHeader)
        XCTAssertEqual(read.value?["age"], 6)
        // Changes land between the read and the subscription.
        XCTAssertEqual(try server.put("age", 7).status, 200)
        XCTAssertEqual(try server.put("name", "between").status, 200)
        let stream = try server.openEventStream("/preferences/events?lastEventId=\(revision)")
        let missed = try stream.nextEvents(2)
        XCTAssertEqual(missed.map(\.id), ["\(revision + 1)", "\(revision + 2)"])
        XCTAssertEqual(missed[0].value?["value"], 7)
        XCTAssertEqual(missed[1].value?["value"], "between")
        XCTAssertEqual(try server.put("age", 8).status, 200)
        XCTAssertEqual(try stream.nextEvent().id, "\(revision + 3)")
    }

    func test_a_write_equal_to_the_current_value_keeps_the_revision_and_sends_no_event() throws {
        let first = try server.put("age", 6)
        XCTAssertEqual(first.value?["revision"], 1)
        let stream = try server.openEventStream("/events?topics=preferences,things")
        _ = try stream.nextEvents(9)

        let again = assertJSON(try server.put("age", 6))
        XCTAssertEqual(again["revision"], 1)
        XCTAssertEqual(try server.put("age", 6.0).value?["revision"], 1)
        XCTAssertEqual(assertJSON(try server.request("PATCH", "/preferences", json: ["age": 6, "speed": 0]))["age"], 6)
        XCTAssertEqual(try server.request("DELETE", "/preferences/name").value?["revision"], 0, "name is already the default")
        XCTAssertEqual(try server.request("PATCH", "/preferences", json: ["readyForAction": NSNull()]).status, 200)
        XCTAssertEqual(try server.currentRevision(), 1)

        // None of them was announced: a real change arrives as the next event.
        XCTAssertEqual(try server.put("age", 7).value?["revision"], 2)
        XCTAssertEqual(try stream.nextEvent().id, "2")
    }

    func test_PUT_things_with_the_current_list_keeps_the_revision_and_sends_no_event() throws {
        XCTAssertEqual(try server.put(things: ["a", "b"]).value?["revision"], 1)
        let stream = try server.openEventStream("/things/events")
        _ = try stream.nextEvent()
        let again = assertJSON(try server.put(things: ["A", " b "]))
        XCTAssertEqual(again["revision"], 1)
        XCTAssertEqual(again["things"], ["A", "B"])
        XCTAssertEqual(try server.currentRevision(), 1)
        // Same things in another order is a change, and the next event: the write above sent none.
        XCTAssertEqual(try server.put(things: ["b", "a"]).value?["revision"], 2)
        XCTAssertEqual(try stream.nextEvent().id, "2")
    }
}
