import EventHTTP
import Foundation
import HTTPTypes
import XCTest
@testable import TidingsAPI
import TidingsStore

/// History over HTTP, in-process (the real application over SQLite in a temporary directory,
/// `Router.respond(to:)`): records of every kind of write with who and why, pages both ways at
/// their boundaries, as-of reads, rollback, named credentials and their reload.
@MainActor
final class HistoryRoutesTests: XCTestCase {
    private var directory: URL!
    private var tokensFile: URL!
    private var app: TidingsApplication!

    override func setUp() async throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("history-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        tokensFile = directory.appendingPathComponent("tokens.json")
        try writeTokens([
            ["name": "deploy-bot", "role": "write", "token": "bot-secret"],
            ["name": "viewer", "role": "read", "sha256": Hex.string(SHA256.hash(Array("viewer-secret".utf8)))],
        ])
        var configuration = TidingsConfiguration()
        configuration.dataDir = directory.appendingPathComponent("data").path
        configuration.apiTokens = ["write-secret"]
        configuration.readToken = "read-secret"
        configuration.tokensFile = tokensFile.path
        configuration.feedRefresh = 0
        app = try TidingsApplication(configuration: configuration, loop: try EventLoop())
    }

    override func tearDown() async throws {
        app = nil
        try? FileManager.default.removeItem(at: directory)
    }

    private func writeTokens(_ entries: [[String: String]]) throws {
        try JSONSerialization.data(withJSONObject: entries).write(to: tokensFile)
    }

    private func send(_ method: HTTPRequest.Method, _ target: String, token: String? = "write-secret",
                      headers: HTTPFields = [:], body: String? = nil) async throws -> Response {
        var headers = headers
        if let token { headers[.authorization] = "Bearer \(token)" }
        if body != nil { headers[.contentType] = "application/json" }
        let answer = await app.router.respond(to: Request(method: method, target: target, headers: headers,
                                                          body: Array((body ?? "").utf8)))
        return try XCTUnwrap(answer.response)
    }

    private func json(_ response: Response) throws -> [String: Any] {
        try XCTUnwrap(JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any],
                      String(decoding: response.body, as: UTF8.self))
    }

    private func changes(_ target: String, token: String = "read-secret") async throws -> (records: [[String: Any]], next: String?, response: Response) {
        let response = try await send(.get, target, token: token)
        XCTAssertEqual(response.status, .ok, String(decoding: response.body, as: UTF8.self))
        let body = try json(response)
        return (try XCTUnwrap(body["changes"] as? [[String: Any]]), body["next"] as? String, response)
    }

    func testEveryWriteIsRecordedWithItsActorReasonBeforeAndAfter() async throws {
        var put = try await send(.put, "/preferences/age", token: "bot-secret",
                                 headers: [.tidingsReason: "ramp up"], body: #"{"value": 6}"#)
        XCTAssertEqual(put.status, .ok)
        put = try await send(.delete, "/preferences/age")
        XCTAssertEqual(put.status, .ok)
        let patch = try await send(.patch, "/preferences", headers: [.tidingsReason: "three at once"],
                                   body: #"{"name": "tidings", "speed": 2.5, "age": 9}"#)
        XCTAssertEqual(patch.status, .ok)
        _ = try await send(.post, "/things", body: #"{"thing": "yolo"}"#)
        _ = try await send(.put, "/things", body: #"{"things": ["imho", "afaik"]}"#)
        let removed = try await send(.delete, "/things/IMHO", token: "bot-secret")
        XCTAssertEqual(removed.status, .noContent)

        let (records, next, _) = try await changes("/history", token: "viewer-secret")
        XCTAssertNil(next)
        XCTAssertEqual(records.map { $0["revision"] as? Int }, [8, 7, 6, 5, 4, 3, 2, 1])
        let byRevision = Dictionary(uniqueKeysWithValues: records.map { ($0["revision"] as! Int, $0) })
        func check(_ revision: Int, _ expected: [String: String], file: StaticString = #filePath, line: UInt = #line) throws {
            let record = try XCTUnwrap(byRevision[revision])
            for (name, value) in expected {
                let actual = try JSONSerialization.data(withJSONObject: record[name] ?? NSNull(), options: [.fragmentsAllowed])
                XCTAssertEqual(String(decoding: actual, as: UTF8.self), value, "revision \(revision) \(name)", file: file, line: line)
            }
        }
        try check(1, ["actor": #""deploy-bot""#, "reason": #""ramp up""#, "topic": #""preferences""#, "key": #""age""#,
                      "before": "5", "after": "6"])
        try check(2, ["actor": #""api""#, "before": "6", "after": "5"])
        XCTAssertNil(byRevision[2]?["reason"], "no reason header, no reason")
        // The PATCH: one record per key, consecutive revisions, the same time, actor and reason.
        let patched = (3...5).map { byRevision[$0]! }
        XCTAssertEqual(Set(patched.map { $0["at"] as! String }).count, 1)
        XCTAssertEqual(patched.map { $0["actor"] as? String }, ["api", "api", "api"])
        XCTAssertEqual(patched.map { $0["reason"] as? String }, ["three at once", "three at once", "three at once"])
        XCTAssertEqual(Set(patched.map { $0["key"] as! String }), ["name", "speed", "age"])
        try check(6, ["topic": #""things""#, "op": #""add""#, "before": "null", "after": #""YOLO""#])
        try check(7, ["op": #""replace""#, "before": #"["YOLO"]"#, "after": #"["IMHO","AFAIK"]"#])
        try check(8, ["op": #""remove""#, "before": #""IMHO""#, "after": "null", "actor": #""deploy-bot""#])
        let at = try XCTUnwrap(byRevision[1]?["at"] as? String)
        XCTAssertNotNil(ISO8601DateFormatter().date(from: at.replacingOccurrences(of: #"\.\d+"#, with: "", options: .regularExpression)), at)
        XCTAssertEqual(at.last, "Z", "UTC")

        let age = try await changes("/preferences/age/history")
        XCTAssertEqual(age.records.count, 3)
        XCTAssertEqual(age.records.dropFirst().map { $0["revision"] as? Int }, [2, 1])
        XCTAssertTrue((3...5).contains(age.records[0]["revision"] as? Int ?? 0))
        let things = try await changes("/things/history?after=0")
        XCTAssertEqual(things.records.map { $0["revision"] as? Int }, [6, 7, 8])
        let filtered = try await changes("/history?topics=preferences&keys=name,speed")
        XCTAssertEqual(filtered.records.map { $0["revision"] as? Int }.count, 2)
    }

    func testAReasonThatIsTooLongOrNotTextIsRefusedAndNothingChanges() async throws {
        let long = String(repeating: "é", count: 257)
        var refused = try await send(.put, "/preferences/age", headers: [.tidingsReason: long], body: #"{"value": 6}"#)
        XCTAssertEqual(refused.status, .unprocessableContent)
        refused = try await send(.post, "/things", headers: [.tidingsReason: "a\u{85}b"], body: #"{"thing": "x"}"#)
        XCTAssertEqual(refused.status, .unprocessableContent)
        let fits = try await send(.put, "/preferences/age", headers: [.tidingsReason: String(repeating: "é", count: 256)],
                                  body: #"{"value": 6}"#)
        XCTAssertEqual(fits.status, .ok)
        let (records, _, _) = try await changes("/history")
        XCTAssertEqual(records.count, 1)
        XCTAssertEqual((records[0]["reason"] as? String)?.count, 256)
    }

    func testAReasonWithFormatCharactersOrSeparatorsIsRefused() async throws {
        // Each would make an audit viewer show other text than what is recorded: a bidi
        // override or isolate reorders it, zero-width characters hide it, separators split it.
        for scalar in ["\u{202D}", "\u{2067}", "\u{200B}", "\u{2060}", "\u{FEFF}", "\u{2029}", "\u{2028}"] {
            let refused = try await send(.put, "/preferences/age", headers: [.tidingsReason: "fix\(scalar)tnemyolped"],
                                         body: #"{"value": 9}"#)
            XCTAssertEqual(refused.status, .unprocessableContent, "U+\(String(scalar.unicodeScalars.first!.value, radix: 16))")
        }
        // Letters and marks of any script stay welcome.
        let fits = try await send(.put, "/preferences/age", headers: [.tidingsReason: "שינוי ¡olé! 変更"], body: #"{"value": 9}"#)
        XCTAssertEqual(fits.status, .ok)
        let (records, _, _) = try await changes("/history")
        XCTAssertEqual(records.map { $0["reason"] as? String }, ["שינוי ¡olé! 変更"])
    }

    func testAWriteIsRecordedUnderTheCredentialItsAccessCheckUsedEvenIfTheFileIsReloadedMeanwhile() async throws {
        // A list big enough to be checked off the loop: the reload lands while it is.
        let list = (0..<6_000).map { "\"thing-\($0)-\(String(repeating: "x", count: 40))\"" }.joined(separator: ",")
        let answer = Task { @MainActor in try await self.send(.put, "/things", token: "bot-secret", body: #"{"things": ["# + list + "]}") }
        for _ in 0..<3 { await Task.yield() }
        try writeTokens([["name": "renamed-bot", "role": "write", "token": "bot-secret"]])
        XCTAssertTrue(app.reloadCredentials())
        let response = try await answer.value
        XCTAssertEqual(response.status, .ok)
        let (records, _, _) = try await changes("/history")
        XCTAssertEqual(records.first?["actor"] as? String, "deploy-bot")
    }

    func testPagesReadBothWaysAcrossTheirBoundaries() async throws {
        for n in 1...7 { _ = try await send(.put, "/preferences/numberOfItems", body: #"{"value": \#(n)}"#) }
        var seen: [Int] = []
        var target: String? = "/history?limit=3"
        var pages = 0
        while let current = target {
            let page = try await changes(current)
            seen += page.records.map { $0["revision"] as! Int }
            if let next = page.next {
                XCTAssertEqual(page.response.headers[.link], "<\(next)>; rel=\"next\"")
            } else {
                XCTAssertNil(page.response.headers[.link])
            }
            target = page.next
            pages += 1
        }
        XCTAssertEqual(seen, [7, 6, 5, 4, 3, 2, 1])
        XCTAssertEqual(pages, 3)
        seen = []
        target = "/history?after=0&limit=7"
        while let current = target {
            let page = try await changes(current)
            seen += page.records.map { $0["revision"] as! Int }
            target = page.next
        }
        XCTAssertEqual(seen, Array(1...7), "a page exactly as long as what is left has no next page")
        let exact = try await changes("/history?before=4&limit=3")
        XCTAssertEqual(exact.records.map { $0["revision"] as? Int }, [3, 2, 1])
        XCTAssertNil(exact.next)
        let forward = try await changes("/history?after=5&limit=1")
        XCTAssertEqual(forward.records.map { $0["revision"] as? Int }, [6])
        XCTAssertEqual(forward.next, "/history?after=6&limit=1")
        // Both bounds: a window read oldest first, paged like any other.
        let window = try await changes("/history?after=2&before=6&limit=2")
        XCTAssertEqual(window.records.map { $0["revision"] as? Int }, [3, 4])
        XCTAssertEqual(window.next, "/history?after=4&before=6&limit=2")
        let rest = try await changes(window.next!)
        XCTAssertEqual(rest.records.map { $0["revision"] as? Int }, [5])
        XCTAssertNil(rest.next)

        for bad in ["/history?before=x", "/history?limit=0", "/history?limit=1001", 
                    "/history?topics=posts", "/history?after=-1", "/history?keys="] {
            let response = try await send(.get, bad, token: "read-secret")
            XCTAssertEqual(response.status, .badRequest, bad)
            XCTAssertEqual(response.headers[.contentType], "application/problem+json")
        }
        let unknownKey = try await send(.get, "/history?keys=nope", token: "read-secret")
        XCTAssertEqual(unknownKey.status, .unprocessableContent)
        let anonymous = try await send(.get, "/history", token: nil)
        XCTAssertEqual(anonymous.status, .unauthorized, "history is read like every other resource")
    }

    func testAsOfReadsAnswerTheResourceAsItStoodAtARevision() async throws {
        var maps: [Int: Data] = [:]
        maps[0] = Data(try await send(.get, "/preferences", token: "read-secret").body)
        let writes = [#"{"age": 6}"#, #"{"name": "x", "speed": 1.5}"#, #"{"age": null}"#, #"{"readyForAction": true}"#]
        var revision = 0
        for body in writes {
            let response = try await send(.patch, "/preferences", body: body)
            XCTAssertEqual(response.status, .ok)
            revision = Int(response.allHeaders[.tidingsRevision] ?? "") ?? -1
            maps[revision] = Data(response.body)
        }
        XCTAssertEqual(revision, 5)
        // Every revision a write ended at: the map it answered (a PATCH's inner revisions are
        // covered by the store's property test).
        for (r, last) in maps {
            let response = try await send(.get, "/preferences?asOf=\(r)", token: "read-secret")
            XCTAssertEqual(response.status, .ok)
            XCTAssertEqual(try JSONSerialization.jsonObject(with: Data(response.body)) as? NSDictionary,
                           try JSONSerialization.jsonObject(with: last) as? NSDictionary, "as of \(r)")
            XCTAssertEqual(response.allHeaders[.tidingsRevision], String(r))
        }
        let age = try await send(.get, "/preferences/age?asOf=2", token: "read-secret")
        XCTAssertEqual(try json(age)["value"] as? Int, 6)
        XCTAssertEqual(age.headers[.eTag], #""1""#, "the ETag of the last change at or before R")
        let map = try await send(.get, "/preferences?asOf=3", token: "read-secret")
        XCTAssertEqual(map.headers[.eTag], #""3""#)

        _ = try await send(.post, "/things", body: #"{"thing": "a"}"#)  // 6
        _ = try await send(.post, "/things", body: #"{"thing": "b"}"#)  // 7
        let things = try await send(.get, "/things?asOf=6", token: "read-secret")
        XCTAssertEqual(try json(things)["things"] as? [String], ["A"])
        XCTAssertEqual(things.headers[.eTag], #""6""#)
        let now = try await send(.get, "/things?asOf=\(ISO8601DateFormatter().string(from: Date().addingTimeInterval(60)))", token: "read-secret")
        XCTAssertEqual(try json(now)["things"] as? [String], ["A", "B"])
        XCTAssertEqual(now.allHeaders[.tidingsRevision], "7")

        let future = try await send(.get, "/preferences?asOf=8", token: "read-secret")
        XCTAssertEqual(future.status, .unprocessableContent)
        XCTAssertEqual(try json(future)["currentRevision"] as? Int, 7)
        let malformed = try await send(.get, "/things?asOf=yesterday", token: "read-secret")
        XCTAssertEqual(malformed.status, .badRequest)
        let unknown = try await send(.get, "/preferences/nope?asOf=1", token: "read-secret")
        XCTAssertEqual(unknown.status, .notFound)
    }

    func testRollbackOfAllKeysOfSomeKeysAndOfNothing() async throws {
        _ = try await send(.patch, "/preferences", body: #"{"age": 6, "name": "before"}"#)  // 1, 2
        let at2 = try await send(.get, "/preferences", token: "read-secret").body
        _ = try await send(.patch, "/preferences", body: #"{"age": 7, "name": "after", "speed": 3.5}"#)  // 3, 4, 5

        let some = try await send(.post, "/preferences/rollback", headers: [.tidingsReason: "only age"],
                                  body: #"{"revision": 2, "keys": ["age"]}"#)
        XCTAssertEqual(some.status, .ok, String(decoding: some.body, as: UTF8.self))
        let someRecords = try XCTUnwrap(try json(some)["changes"] as? [[String: Any]])
        XCTAssertEqual(someRecords.map { $0["key"] as? String }, ["age"])
        XCTAssertEqual(someRecords.first?["reason"] as? String, "only age")
        XCTAssertEqual(someRecords.first?["after"] as? Int, 6)
        let name = try await send(.get, "/preferences/name", token: "read-secret")
        XCTAssertEqual(try json(name)["value"] as? String, "after", "keys not named stay")

        let all = try await send(.post, "/preferences/rollback", token: "bot-secret", body: #"{"revision": 2}"#)
        XCTAssertEqual(all.status, .ok)
        let allRecords = try XCTUnwrap(try json(all)["changes"] as? [[String: Any]])
        XCTAssertEqual(Set(allRecords.compactMap { $0["key"] as? String }), ["name", "speed"])
        XCTAssertEqual(allRecords.map { $0["reason"] as? String }, ["rollback to 2", "rollback to 2"])
        XCTAssertEqual(allRecords.map { $0["actor"] as? String }, ["deploy-bot", "deploy-bot"])
        let map = try await send(.get, "/preferences", token: "read-secret")
        XCTAssertEqual(try JSONSerialization.jsonObject(with: Data(map.body)) as? NSDictionary,
                       try JSONSerialization.jsonObject(with: Data(at2)) as? NSDictionary)
        let revision = map.allHeaders[.tidingsRevision]
        XCTAssertEqual(revision, "8")

        let nothing = try await send(.post, "/preferences/rollback", body: #"{"revision": 2}"#)
        XCTAssertEqual(nothing.status, .ok)
        XCTAssertEqual((try json(nothing)["changes"] as? [Any])?.count, 0)
        XCTAssertEqual(nothing.allHeaders[.tidingsRevision], "8", "nothing to change: no new revision")

        let stale = try await send(.post, "/preferences/rollback", headers: [.ifMatch: #""7""#], body: #"{"revision": 0}"#)
        XCTAssertEqual(stale.status, .preconditionFailed)
        let current = try await send(.post, "/preferences/rollback", headers: [.ifMatch: #""8""#], body: #"{"revision": 0}"#)
        XCTAssertEqual(current.status, .ok)
        let defaults = try await send(.get, "/preferences/age", token: "read-secret")
        XCTAssertEqual(try json(defaults)["value"] as? Int, 5, "revision 0: every key at its default")

        let unknown = try await send(.post, "/preferences/rollback", body: #"{"revision": 1, "keys": ["nope"]}"#)
        XCTAssertEqual(unknown.status, .unprocessableContent)
        let future = try await send(.post, "/preferences/rollback", body: #"{"revision": 999}"#)
        XCTAssertEqual(future.status, .unprocessableContent)
        let reader = try await send(.post, "/preferences/rollback", token: "viewer-secret", body: #"{"revision": 1}"#)
        XCTAssertEqual(reader.status, .unauthorized, "a rollback is a write")

        _ = try await send(.put, "/things", body: #"{"things": ["a", "b"]}"#)
        let listed = try await send(.get, "/things", token: "read-secret")
        let listRevision = try XCTUnwrap(try json(listed)["revision"] as? Int)
        _ = try await send(.post, "/things", body: #"{"thing": "c"}"#)
        let things = try await send(.post, "/things/rollback", body: #"{"revision": \#(listRevision)}"#)
        XCTAssertEqual(things.status, .ok)
        let list = try await send(.get, "/things", token: "read-secret")
        XCTAssertEqual(try json(list)["things"] as? [String], ["A", "B"])
    }

    func testNamedCredentialsReloadAndABadFileKeepsTheOldSet() async throws {
        try writeTokens([["name": "new-bot", "role": "write", "token": "new-secret"]])
        XCTAssertTrue(app.reloadCredentials())
        let oldToken = try await send(.put, "/preferences/age", token: "bot-secret", body: #"{"value": 6}"#)
        XCTAssertEqual(oldToken.status, .unauthorized)
        let newToken = try await send(.put, "/preferences/age", token: "new-secret", body: #"{"value": 7}"#)
        XCTAssertEqual(newToken.status, .ok)
        try Data("[{\"name\": \"bad name!\", \"role\": \"write\", \"token\": \"x\"}]".utf8).write(to: tokensFile)
        XCTAssertFalse(app.reloadCredentials())
        let stillGood = try await send(.put, "/preferences/age", token: "new-secret", body: #"{"value": 8}"#)
        XCTAssertEqual(stillGood.status, .ok)
        let (records, _, _) = try await changes("/history")
        XCTAssertEqual(records.map { $0["actor"] as? String }, ["new-bot", "new-bot"])
    }

    func testATokensFileIsCheckedAtStartUp() throws {
        let bad: [(String, String)] = [
            (#"{"name": "x"}"#, "array"),
            (#"[{"name": "api", "role": "write", "token": "t"}]"#, "reserved"),
            (#"[{"name": "a", "role": "admin", "token": "t"}]"#, "role"),
            (#"[{"name": "a", "role": "read", "token": "t", "sha256": "00"}]"#, "exactly one"),
            (#"[{"name": "a", "role": "read", "sha256": "zz"}]"#, "64 hex"),
            (#"[{"name": "a", "role": "read", "token": "t"}, {"name": "a", "role": "write", "token": "u"}]"#, "more than once"),
            // One token under two names, whatever the roles: the actor would depend on the order.
            (#"[{"name": "intern", "role": "read", "token": "t"}, {"name": "admin", "role": "write", "token": "t"}]"#, "same token"),
            // ... also when one entry gives it as its digest.
            (#"[{"name": "b", "role": "write", "token": "t"}, {"name": "c", "role": "read", "sha256": "\#(Hex.string(SHA256.hash(Array("t".utf8))))"}]"#,
             "same token"),
            // ... or when it is the server's own --api-token.
            (#"[{"name": "d", "role": "read", "token": "server-token"}]"#, "--api-token"),
        ]
        for (text, expected) in bad {
            do {
                _ = try TokensFile.parse(Data(text.utf8), path: "tokens.json", serverTokens: ["server-token"])
                XCTFail("accepted \(text)")
            } catch {
                // substring: the start-up message is prose naming the entry and its problem among other words.
                XCTAssertTrue(error.description.contains(expected), "\(error.description) should say \(expected)")
                // substring: a token must appear nowhere in the message.
                XCTAssertFalse(error.description.contains("\"t\""), "never a token in a message")
            }
        }
        XCTAssertEqual(Hex.string(SHA256.hash(Array("abc".utf8))),
                       "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        XCTAssertEqual(Hex.string(SHA256.hash([])), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    }
}
