@testable import EventHTTP
import HTTPTypes
import XCTest

final class RouterTests: XCTestCase {
    private func makeRouter() -> Router {
        let router = Router()
        router.get("/preferences/{key}") { _, _ in }
        router.put("/preferences/{key}") { _, _ in }
        router.get("/preferences/events") { _, _ in }
        router.get("/preferences/{key}/events") { _, _ in }
        router.get("/") { _, _ in }
        return router
    }

    private func template(_ router: Router, _ method: HTTPRequest.Method, _ path: String) -> (String, [String: String])? {
        if case .handler(_, let routing, _) = router.match(method, path: path) { return (routing.route ?? "", routing.parameters) }
        return nil
    }

    func testLiteralSegmentBeatsParameter() {
        let router = makeRouter()
        XCTAssertEqual(template(router, .get, "/preferences/events")?.0, "/preferences/events")
        XCTAssertEqual(template(router, .get, "/preferences/age")?.0, "/preferences/{key}")
        XCTAssertEqual(template(router, .get, "/preferences/age")?.1, ["key": "age"])
        XCTAssertEqual(template(router, .get, "/preferences/events/events")?.1, ["key": "events"])
        XCTAssertEqual(template(router, .get, "/")?.0, "/")
    }

    /// Resolved paths are remembered: a repeat answers the same (parameters, method rules),
    /// a route registered later still wins where it should, and the memory stays bounded.
    func testResolvedPathsAnswerAsTheTreeDoes() {
        let router = makeRouter()
        for _ in 0..<3 {
            XCTAssertEqual(template(router, .get, "/preferences/age")?.1, ["key": "age"])
            XCTAssertEqual(template(router, .get, "/preferences/a%20b")?.1, ["key": "a b"])
            XCTAssertEqual(template(router, .put, "/preferences/age")?.0, "/preferences/{key}")
            if case .methodNotAllowed = router.match(.delete, path: "/preferences/age") {} else { XCTFail("DELETE must be 405") }
        }
        router.get("/preferences/age") { _, _ in }
        XCTAssertEqual(template(router, .get, "/preferences/age")?.0, "/preferences/age")
        for index in 0..<5_000 { XCTAssertEqual(template(router, .get, "/preferences/k\(index)")?.1, ["key": "k\(index)"]) }
        XCTAssertEqual(template(router, .get, "/preferences/k1")?.1, ["key": "k1"])
    }

    /// The exact-path shortcut for parameterless templates answers as the tree does: the same
    /// route for an exactly spelled or a percent-encoded path, HEAD via GET, 405 and OPTIONS.
    func testExactPathsAndTheirEncodedSpellingsMatchTheSameRoute() {
        let router = makeRouter()
        XCTAssertEqual(template(router, .get, "/preferences/events")?.0, "/preferences/events")
        XCTAssertEqual(template(router, .get, "/preferences/%65vents")?.0, "/preferences/events")
        XCTAssertEqual(template(router, .head, "/preferences/events")?.0, "/preferences/events")
        if case .methodNotAllowed(let allow, _) = router.match(.post, path: "/preferences/events") {
            XCTAssertEqual(allow, "GET, HEAD, OPTIONS")
        } else { XCTFail("POST on a GET-only exact path must be 405") }
        if case .options(let allow, _, _) = router.match(.options, path: "/") {
            XCTAssertEqual(allow, "GET, HEAD, OPTIONS")
        } else { XCTFail("OPTIONS on an exact path must list its methods") }
    }

    func testParametersArePercentDecoded() {
        let router = makeRouter()
        XCTAssertEqual(template(router, .get, "/preferences/a%20b%2Fc")?.1, ["key": "a b/c"])
        XCTAssertEqual(template(router, .get, "/preferences/%C3%A9t%C3%A9")?.1, ["key": "été"])
        if case .notFound = router.match(.get, path: "/preferences/%zz") {} else { XCTFail("broken escape must be 404") }
    }

    func testNotFoundAndMethodNotAllowed() {
        let router = makeRouter()
        if case .notFound = router.match(.get, path: "/nothing") {} else { XCTFail() }
        if case .notFound = router.match(.get, path: "/preferences/") {} else { XCTFail("empty parameter") }
        if case .notFound = router.match(.get, path: "/preferences/a/b") {} else { XCTFail() }
        guard case .methodNotAllowed(let allow, _) = router.match(.delete, path: "/preferences/age") else { return XCTFail() }
        XCTAssertEqual(allow, "GET, HEAD, PUT, OPTIONS")
    }

    func testHeadUsesGetAndOptionsListsMethods() {
        let router = makeRouter()
        XCTAssertEqual(template(router, .head, "/preferences/age")?.0, "/preferences/{key}")
        guard case .options(let allow, _, _) = router.match(.options, path: "/preferences/events") else { return XCTFail() }
        XCTAssertEqual(allow, "GET, HEAD, OPTIONS")
    }

    func testQueryItemsAreDecoded() {
        let request = Request(method: .get, target: "/events?topics=a%2Cb&keys=x+y&empty=&flag")
        XCTAssertEqual(request.path, "/events")
        XCTAssertEqual(request.query("topics"), "a,b")
        XCTAssertEqual(request.query("keys"), "x y")
        XCTAssertEqual(request.query("empty"), "")
        XCTAssertEqual(request.query("flag"), "")
        XCTAssertNil(request.query("missing"))
    }

    func testHeadersAreCaseInsensitive() {
        let headers: HTTPFields = [.contentType: "application/json"]
        XCTAssertEqual(headers.first(.contentType), "application/json")
        XCTAssertNil(headers.first(.contentLength))
    }

    func testDecodeContentTypeRules() throws {
        struct Body: Decodable, Equatable { var value: Int }
        let json = Array(#"{"value": 3}"#.utf8)
        for type in [nil, "application/json", "application/json; charset=utf-8", "application/merge-patch+json", "application/x-www-form-urlencoded"] {
            var headers: HTTPFields = [:]
            if let type { headers[.contentType] = type }
            XCTAssertEqual(try Request(method: .put, target: "/", headers: headers, body: json).decode(Body.self), Body(value: 3), "\(type ?? "none")")
        }
        XCTAssertThrowsError(try Request(method: .put, target: "/", headers: [.contentType: "text/plain"], body: json).decode(Body.self)) {
            XCTAssertEqual(($0 as? ProblemDetails)?.status, 415)
        }
        XCTAssertThrowsError(try Request(method: .put, target: "/", body: Array("{nope".utf8)).decode(Body.self)) {
            XCTAssertEqual(($0 as? ProblemDetails)?.status, 400)
        }
    }

    func testProblemResponseShape() throws {
        let response = Response.problem(status: .unprocessableContent, detail: "bad", errors: [.init(key: "age", detail: "expected integer")])
        XCTAssertEqual(response.headers.first(.contentType), "application/problem+json")
        let object = try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any]
        XCTAssertEqual(object?["status"] as? Int, 422)
        XCTAssertEqual(object?["title"] as? String, "Unprocessable Content")
        XCTAssertEqual(object?["type"] as? String, "about:blank")
        XCTAssertEqual(object?["detail"] as? String, "bad")
        XCTAssertEqual((object?["errors"] as? [[String: String]])?.first?["key"], "age")
    }
}
