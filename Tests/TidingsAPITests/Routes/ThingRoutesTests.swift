import Foundation
import XCTest
import TestFixtures
import TidingsModel
import TidingsAPI
import TidingsTesting

/// openapi.yaml "Things", one test per rule, in-process (the real application, router and
/// middleware over a real SQLite file; see `InProcessTidings`). What needs the process — its
/// locale — is `EndToEndTests.ThingsTests`.
final class ThingRoutesTests: XCTestCase {
    private var server: InProcessTidings!

    override func setUpWithError() throws { server = try InProcessTidings() }
    override func tearDown() { server?.stop(); server = nil }

    // MARK: GET /things, POST /things

    func test_GET_things_is_an_empty_list_at_revision_0_on_a_fresh_store() throws {
        XCTAssertEqual(assertJSON(try server.get("/things")), ["things": [], "revision": 0])
    }

    func test_GET_things_lists_in_insertion_order_with_the_revision() throws {
        for thing in ["yolo", "btw", "afaik", "imo"] { XCTAssertEqual(try server.post(thing: thing).status, 201) }
        XCTAssertEqual(assertJSON(try server.get("/things")), ["things": ["YOLO", "BTW", "AFAIK", "IMO"], "revision": 4])
    }

    func test_POST_thing_is_201_with_the_normalised_thing_its_revision_and_Location() throws {
        let reply = try server.post(thing: "yolo")
        XCTAssertEqual(assertJSON(reply, 201), ["thing": "YOLO", "revision": 1])
        XCTAssertEqual(reply.header("Location"), "/things/YOLO")
        XCTAssertEqual(try server.get(reply.header("Location")!).value, ["thing": "YOLO"])
    }

    func test_POST_thing_Location_is_percent_encoded() throws {
        let reply = try server.post(thing: "c/s ü?#%")
        XCTAssertEqual(reply.status, 201, reply.text)
        XCTAssertEqual(reply.value?["thing"], "C/S Ü?#%")
        XCTAssertEqual(reply.header("Location"), "/things/C%2FS%20%C3%9C%3F%23%25")
        XCTAssertEqual(try server.get(reply.header("Location")!).value, ["thing": "C/S Ü?#%"])
    }

    // MARK: Normalisation

    func test_normalisation_trims_whitespace() throws {
        XCTAssertEqual(try server.post(thing: " \t yolo \n ").value?["thing"], "YOLO")
        XCTAssertEqual(try server.post(thing: "\u{3000}btw\u{00A0}").value?["thing"], "BTW", "Unicode spaces are whitespace too")
        XCTAssertEqual(try server.post(thing: "a b").value?["thing"], "A B", "inner spaces stay")
    }

    func test_normalisation_upper_cases_by_default() throws {
        XCTAssertEqual(try server.post(thing: "tIl").value?["thing"], "TIL")
        XCTAssertEqual(try server.post(thing: "éçå").value?["thing"], "ÉÇÅ")
    }

    func test_text_case_none_keeps_the_case_as_typed() throws {
        let none = try InProcessTidings { $0.textCase = .none }
        defer { none.stop() }
        let reply = try none.post(thing: "  yolo ")
        XCTAssertEqual(reply.value?["thing"], "yolo")
        XCTAssertEqual(reply.header("Location"), "/things/yolo")
        XCTAssertEqual(try none.post(thing: "YOLO").status, 201, "different case, different thing")
        XCTAssertEqual(try none.post(thing: "yolo").status, 409)
        XCTAssertEqual(try none.things(), ["yolo", "YOLO"])
        assertProblem(try none.get("/things/Yolo"), 404)
        XCTAssertEqual(try none.request("DELETE", "/things/yolo").status, 204)
        XCTAssertEqual(try none.things(), ["YOLO"])
    }

    func test_text_case_none_a_thing_named_events_is_422_because_its_path_is_the_stream() throws {
        let none = try InProcessTidings { $0.textCase = .none }
        defer { none.stop() }
        assertProblem(try none.post(thing: "events"), 422)
        assertProblem(try none.request("PUT", "/things", json: ["things": ["a", "events"]]), 422)
        XCTAssertEqual(try none.things(), [])
        XCTAssertEqual(try none.post(thing: "Events").status, 201, "only the exact path segment is reserved")
    }

    func test_empty_thing_after_trimming_is_422() throws {
        for raw in ["", "   ", "\n\t"] { assertProblem(try server.post(thing: raw), 422, raw.debugDescription) }
        XCTAssertEqual(try server.things(), [])
    }

    func test_thing_longer_than_64_characters_is_422_and_64_is_accepted() throws {
        XCTAssertEqual(try server.post(thing: String(repeating: "a", count: 64)).status, 201)
        assertProblem(try server.post(thing: String(repeating: "b", count: 65)), 422)
        // Characters, not bytes: 64 two-byte characters are fine.
        XCTAssertEqual(try server.post(thing: String(repeating: "é", count: 64)).status, 201)
        XCTAssertEqual(try server.things().count, 2)
    }

    func test_the_64_character_limit_is_counted_after_normalisation() throws {
        // Surrounding whitespace does not count.
        XCTAssertEqual(try server.post(thing: "  " + String(repeating: "c", count: 64) + "  ").status, 201)
        // "ß" upper-cases to "SS": 32 → 64 characters is fine, 33 → 66 is too long.
        XCTAssertEqual(try server.post(thing: String(repeating: "ß", count: 32)).value?["thing"]?.stringValue?.count, 64)
        assertProblem(try server.post(thing: String(repeating: "ß", count: 33)), 422)
    }

    func test_control_characters_are_422() throws {
        for raw in ["a\u{0007}b", "a\u{0000}b", "a\tb", "a\nb", "a\u{007F}b", "a\u{0085}b", "a\u{0085}", "\u{0085}a", "a\u{001B}[31mb"] {
            assertProblem(try server.post(thing: raw), 422, raw.debugDescription)
        }
        XCTAssertEqual(try server.things(), [])
    }

    func test_a_thing_equal_to_an_existing_one_after_normalisation_is_409() throws {
        XCTAssertEqual(try server.post(thing: "yolo").status, 201)
        for raw in ["yolo", "YOLO", " Yolo "] { assertProblem(try server.post(thing: raw), 409, raw) }
        XCTAssertEqual(try server.post(thing: "strasse").status, 201)
        assertProblem(try server.post(thing: "straße"), 409)
        XCTAssertEqual(try server.things(), ["YOLO", "STRASSE"])
        XCTAssertEqual(try server.currentRevision(), 2)
    }

    // MARK: GET /things/{thing}, DELETE

    func test_GET_thing_percent_decodes_and_normalises_the_path_segment() throws {
        XCTAssertEqual(try server.post(thing: "yolo").status, 201)
        XCTAssertEqual(try server.post(thing: "a b").status, 201)
        XCTAssertEqual(assertJSON(try server.get("/things/yolo")), ["thing": "YOLO"])
        XCTAssertEqual(try server.get("/things/%20yOlO%20").value, ["thing": "YOLO"])
        XCTAssertEqual(try server.get("/things/a%20b").value, ["thing": "A B"])
    }

    func test_GET_unknown_thing_is_404() throws {
        assertProblem(try server.get("/things/NOPE"), 404)
    }

    func test_DELETE_thing_is_204_then_404() throws {
        XCTAssertEqual(try server.post(thing: "yolo").status, 201)
        XCTAssertEqual(try server.post(thing: "btw").status, 201)
        let deleted = try server.request("DELETE", "/things/yolo")
        XCTAssertEqual(deleted.status, 204)
        XCTAssertTrue(deleted.body.isEmpty)
        XCTAssertEqual(deleted.revisionHeader, 3)
        XCTAssertEqual(try server.get("/things").value, ["things": ["BTW"], "revision": 3])
        assertProblem(try server.request("DELETE", "/things/YOLO"), 404)
        assertProblem(try server.get("/things/YOLO"), 404)
        XCTAssertEqual(try server.currentRevision(), 3)
    }

    // MARK: PUT /things

    func test_PUT_things_replaces_the_whole_list_normalised_and_answers_200() throws {
        XCTAssertEqual(try server.post(thing: "old").status, 201)
        let reply = try server.put(things: [" yolo", "btw ", "straße"])
        XCTAssertEqual(assertJSON(reply), ["things": ["YOLO", "BTW", "STRASSE"], "revision": 2])
        XCTAssertEqual(try server.get("/things").value, ["things": ["YOLO", "BTW", "STRASSE"], "revision": 2])
        XCTAssertEqual(try server.put(things: []).value, ["things": [], "revision": 3])
    }

    func test_PUT_things_with_duplicates_after_normalisation_is_422_and_applies_nothing() throws {
        XCTAssertEqual(try server.put(things: ["keep"]).status, 200)
        assertProblem(try server.put(things: ["yolo", "btw", " YOLO "]), 422)
        assertProblem(try server.put(things: ["strasse", "straße"]), 422)
        XCTAssertEqual(try server.get("/things").value, ["things": ["KEEP"], "revision": 1])
    }

    func test_PUT_things_with_any_invalid_entry_is_422_and_applies_nothing() throws {
        XCTAssertEqual(try server.put(things: ["keep"]).status, 200)
        for bad in ["", "a\u{0007}", String(repeating: "x", count: 65)] {
            assertProblem(try server.put(things: ["fine", bad]), 422, bad.debugDescription)
        }
        XCTAssertEqual(try server.get("/things").value, ["things": ["KEEP"], "revision": 1])
    }

    // MARK: Limit

    func test_at_most_10000_things_one_more_is_422() throws {
        let full = (0..<10_000).map { "t\($0)" }
        let put = try server.put(things: full)
        XCTAssertEqual(put.status, 200, put.text)
        XCTAssertEqual(put.value?["things"]?.arrayValue?.count, 10_000)

        let oneMore = assertProblem(try server.post(thing: "t10000"), 422)
        XCTAssertEqual(oneMore["detail"], "At most 10000 things are allowed.")
        assertProblem(try server.put(things: full + ["t10000"]), 422)
        let list = try server.get("/things").value
        XCTAssertEqual(list?["things"]?.arrayValue?.count, 10_000)
        XCTAssertEqual(list?["revision"], 1)

        // A duplicate is still a conflict at the limit, and room made is room to add.
        assertProblem(try server.post(thing: "t5"), 409)
        XCTAssertEqual(try server.request("DELETE", "/things/T0").status, 204)
        XCTAssertEqual(try server.post(thing: "t10000").status, 201)
    }
}
