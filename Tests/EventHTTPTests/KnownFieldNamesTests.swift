@testable import EventHTTP
import HTTPTypes
import XCTest

/// The request-field fast path must give exactly what the validating initializer gives.
final class KnownFieldNamesTests: XCTestCase {
    func test_every_spelling_gets_the_name_the_validating_initializer_gives() {
        let spellings = ["Host", "host", "HOST", "User-Agent", "user-agent", "Accept", "Accept-Encoding",
                         "Connection", "Content-Type", "Content-Length", "content-length", "Authorization",
                         "If-None-Match", "If-Match", "Origin", "Last-Event-ID", "Last-Event-Id", "X-API-Key",
                         "Hos", "Hostt", "Cache-Control", "Referer", "Cookie", "Accept-Language"]
        for spelling in spellings {
            let fast = Array(spelling.utf8).withUnsafeBytes { KnownFieldNames.name($0) }
            let slow = HTTPField.Name(spelling)
            XCTAssertEqual(fast?.rawName, slow?.rawName, spelling)
            XCTAssertEqual(fast?.canonicalName, slow?.canonicalName, spelling)
        }
    }

    func test_a_name_that_is_not_a_token_is_refused() {
        for spelling in ["", "Ho st", "Host:", "Hést"] {
            XCTAssertNil(Array(spelling.utf8).withUnsafeBytes { KnownFieldNames.name($0) }, spelling)
        }
    }

    func test_the_query_is_split_off_the_path_at_the_first_question_mark() {
        let request = Request(method: .get, target: "/pr%C3%A9f/x?a=1?b&c")
        XCTAssertEqual(request.path, "/pr%C3%A9f/x")
        XCTAssertEqual(request.rawQuery, "a=1?b&c")
        XCTAssertNil(Request(method: .get, target: "/plain").rawQuery)
        XCTAssertEqual(Request(method: .get, target: "/e?").rawQuery, "")
    }
}
