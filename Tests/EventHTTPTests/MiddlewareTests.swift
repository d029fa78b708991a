@testable import EventHTTP
import HTTPTypes
import XCTest

/// Route groups: which middleware a route's requests and answers pass, in which order, and
/// what a path with routes in several groups gets for OPTIONS.
final class MiddlewareTests: XCTestCase {
    /// Refuses requests without `Authorization`; records its steps in `log`.
    private final class Gate: Middleware {
        let name: String
        let log: Log
        init(_ name: String, _ log: Log) { self.name = name; self.log = log }
        func intercept(_ request: Request) -> Response? {
            log.steps.append("\(name).intercept")
            return request.headers.first(.authorization) == nil ? .problem(status: .unauthorized, detail: name) : nil
        }
        func finish(_ request: Request, _ response: inout Response) {
            log.steps.append("\(name).finish")
            response.headers.append(HTTPField(name: HTTPField.Name("X-Passed")!, value: name))
        }
    }

    private final class Log { var steps: [String] = [] }

    private func chain(_ router: Router, _ method: HTTPRequest.Method, _ path: String) -> Int? {
        switch router.match(method, path: path) {
        case .handler(_, _, let chain), .options(_, _, let chain): return chain
        default: return nil
        }
    }

    private func intercept(_ router: Router, _ chain: Int, _ request: Request) -> Response? {
        var request = request
        request.chain = chain
        for step in router.chains[chain] { if let answer = step.intercept(request) { return answer } }
        return nil
    }

    func testGroupMiddlewareRunsOnlyForItsRoutesAndNestsInOrder() {
        let router = Router(), log = Log()
        router.get("/open") { _, _ in }
        let outer = router.group(Gate("outer", log))
        outer.get("/guarded") { _, _ in }
        let inner = outer.group(Gate("inner", log))
        inner.put("/guarded") { _, _ in }

        XCTAssertEqual(chain(router, .get, "/open"), 0, "a route outside groups has no middleware")
        let guardedGet = try! XCTUnwrap(chain(router, .get, "/guarded"))
        let guardedPut = try! XCTUnwrap(chain(router, .put, "/guarded"))
        XCTAssertEqual(router.chains[guardedGet].count, 1)
        XCTAssertEqual(router.chains[guardedPut].count, 2)

        let anonymous = Request(method: .put, target: "/guarded")
        XCTAssertEqual(intercept(router, guardedPut, anonymous)?.status, .unauthorized)
        XCTAssertEqual(log.steps, ["outer.intercept"], "the first refusal ends the chain")

        log.steps = []
        let signed = Request(method: .put, target: "/guarded", headers: [.authorization: "Bearer x"])
        XCTAssertNil(intercept(router, guardedPut, signed))
        XCTAssertEqual(log.steps, ["outer.intercept", "inner.intercept"])

        log.steps = []
        var routed = signed
        routed.chain = guardedPut
        var response = Response(status: .ok)
        router.finish(routed, &response)
        XCTAssertEqual(log.steps, ["outer.finish", "inner.finish"])
        XCTAssertEqual(response.headers[values: HTTPField.Name("X-Passed")!], ["outer", "inner"])
    }

    /// OPTIONS on a path answers with the middleware of its GET route.
    func testOptionsTakesTheMiddlewareOfTheGetRoute() {
        let router = Router(), log = Log()
        router.group(Gate("writes", log)).put("/thing") { _, _ in }
        let reads = router.group(Gate("reads", log))
        reads.get("/thing") { _, _ in }
        let options = try! XCTUnwrap(chain(router, .options, "/thing"))
        XCTAssertEqual(options, chain(router, .get, "/thing"))
        _ = intercept(router, options, Request(method: .options, target: "/thing"))
        XCTAssertEqual(log.steps, ["reads.intercept"])
    }

    /// Router-wide middleware sees answers of every route, and the 404 of no route.
    func testRouterMiddlewareFinishesEveryAnswer() {
        let router = Router(), log = Log()
        router.add(middleware: Gate("all", log))
        var response = Response(status: .notFound)
        router.finish(Request(method: .get, target: "/nowhere"), &response)
        XCTAssertEqual(log.steps, ["all.finish"])
        XCTAssertEqual(response.headers.first(HTTPField.Name("X-Passed")!), "all")
    }
}
