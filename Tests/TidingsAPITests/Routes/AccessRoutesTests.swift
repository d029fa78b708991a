import Foundation
import TestFixtures
import TidingsAPI
import TidingsTesting
import XCTest

/// openapi.yaml "Access": `--api-token`, `--read-token` and the order of checks, in-process (see
/// `InProcessTidings`). Tokens from the environment and the process log are
/// `EndToEndTests.AccessTests`; stream tickets `AccessTicketTests`.
final class AccessRoutesTests: XCTestCase {
    private let api = "api-secret-0123456789"
    private let reader = "read-secret-9876543210"

    private func bearer(_ token: String) -> [String: String] { ["Authorization": "Bearer \(token)"] }

    func testWritesNeedTheApiToken() throws {
        let server = try InProcessTidings { $0.apiTokens.append(api) }
        defer { server.stop() }

        // No credential: 401 problem with a plain Bearer challenge.
        let missing = try server.request("PUT", "/preferences/age", json: ["value": 6])
        XCTAssertEqual(missing.status, 401)
        XCTAssertEqual(missing.header("Content-Type"), "application/problem+json")
        XCTAssertEqual(missing.json?["status"] as? Int, 401)
        // No token sent, so no invalid_token.
        XCTAssertEqual(missing.challenge()?.scheme, "Bearer")
        XCTAssertEqual(missing.challenge()?.parameters, ["realm": "tidings"])

        // A wrong token: invalid_token.
        let wrong = try server.request("PUT", "/preferences/age", headers: bearer("nope"), json: ["value": 6])
        XCTAssertEqual(wrong.status, 401)
        XCTAssertEqual(wrong.challenge()?.parameters["error"], "invalid_token")
        // A prefix of the right token, and another scheme, are wrong too.
        XCTAssertEqual(try server.request("PUT", "/preferences/age", headers: bearer(String(api.dropLast())), json: ["value": 6]).status, 401)
        XCTAssertEqual(try server.request("PUT", "/preferences/age", headers: bearer(api + "x"), json: ["value": 6]).status, 401)
        XCTAssertEqual(try server.request("PUT", "/preferences/age", headers: ["Authorization": "Basic \(api)"], json: ["value": 6]).status, 401)
        // Nothing was applied by the refused writes.
        XCTAssertEqual(try server.get("/preferences/age").json?["value"] as? Int, 5)

        // Every write method is covered.
        XCTAssertEqual(try server.request("POST", "/things", json: ["thing": "yolo"]).status, 401)
        XCTAssertEqual(try server.request("PATCH", "/preferences", json: ["age": 7]).status, 401)
        XCTAssertEqual(try server.request("DELETE", "/preferences/age").status, 401)

        // The right token (scheme case-insensitive).
        let right = try server.request("PUT", "/preferences/age", headers: ["Authorization": "bearer \(api)"], json: ["value": 6])
        XCTAssertEqual(right.status, 200)
        XCTAssertEqual(right.json?["value"] as? Int, 6)
        XCTAssertEqual(try server.request("POST", "/things", headers: bearer(api), json: ["thing": "yolo"]).status, 201)

        // Reads stay open without --read-token; a wrong token on an open read is ignored.
        XCTAssertEqual(try server.get("/preferences").status, 200)
        XCTAssertEqual(try server.get("/things", headers: bearer("whatever")).status, 200)

        // Order of checks: route (404/405) before credentials.
        XCTAssertEqual(try server.request("PUT", "/no/such/thing", json: ["value": 1]).status, 404)
        XCTAssertEqual(try server.request("POST", "/preferences/age", json: ["value": 1]).status, 405)
        // An over-limit body is refused as at its head, before anything else (API.md "Refused at
        // the head"): a 1.5 MiB upload is a 413 with or without the credential.
        let big = [UInt8](repeating: UInt8(ascii: " "), count: 3 << 19)
        XCTAssertEqual(try server.request("PUT", "/preferences/age", body: big).status, 413)
        XCTAssertEqual(try server.request("PUT", "/preferences/age", headers: bearer(api), body: big).status, 413)
    }

    func testReadTokenGuardsEverythingButTheProbes() throws {
        let server = try InProcessTidings { $0.apiTokens.append(api); $0.readToken = reader }
        defer { server.stop() }

        let missing = try server.get("/preferences")
        XCTAssertEqual(missing.status, 401)
        XCTAssertEqual(missing.challenge()?.scheme, "Bearer")
        XCTAssertEqual(try server.get("/preferences", headers: bearer("wrong")).status, 401)
        XCTAssertEqual(try server.request("HEAD", "/preferences").status, 401)
        XCTAssertEqual(try server.get("/things").status, 401)
        XCTAssertEqual(try server.get("/metrics").status, 401)
        XCTAssertEqual(try server.get("/events").status, 401)

        // The read token reads; the api token reads too.
        XCTAssertEqual(try server.get("/preferences", headers: bearer(reader)).status, 200)
        XCTAssertEqual(try server.get("/preferences/age", headers: bearer(api)).status, 200)
        XCTAssertEqual(try server.request("HEAD", "/things", headers: bearer(reader)).status, 200)

        // The read token does not write.
        let readerWrite = try server.request("PUT", "/preferences/age", headers: bearer(reader), json: ["value": 9])
        XCTAssertEqual(readerWrite.status, 401)
        XCTAssertEqual(readerWrite.challenge()?.parameters["error"], "invalid_token")
        XCTAssertEqual(try server.request("PUT", "/preferences/age", headers: bearer(api), json: ["value": 9]).status, 200)

        // Probes need nothing, also with a wrong token.
        XCTAssertEqual(try server.get("/healthz").status, 200)
        XCTAssertEqual(try server.get("/readyz").status, 200)
        XCTAssertEqual(try server.get("/healthz", headers: bearer("wrong")).status, 200)
        // The dashboard page is static and asks for the token itself; the contract is a read.
        XCTAssertEqual(try server.get("/").status, 200)
        XCTAssertEqual(try server.get("/openapi.yaml").status, 401)

        // A CORS preflight carries no credentials and is not refused; a plain OPTIONS is a read.
        let preflight = try server.request("OPTIONS", "/preferences/age",
                                           headers: ["Origin": "https://a.example", "Access-Control-Request-Method": "PUT"])
        XCTAssertEqual(preflight.status, 204)
        XCTAssertEqual(try server.request("OPTIONS", "/preferences/age").status, 401)
        XCTAssertEqual(try server.request("OPTIONS", "/preferences/age", headers: bearer(reader)).status, 204)

        // Unknown paths are 404 before credentials.
        XCTAssertEqual(try server.get("/no/such/thing").status, 404)
    }

    func testReadTokenAloneAlsoGuardsWrites() throws {
        let server = try InProcessTidings { $0.readToken = reader }
        defer { server.stop() }
        XCTAssertEqual(try server.request("PUT", "/preferences/age", json: ["value": 8]).status, 401)
        XCTAssertEqual(try server.request("PUT", "/preferences/age", headers: bearer("x"), json: ["value": 8]).status, 401)
        XCTAssertEqual(try server.request("PUT", "/preferences/age", headers: bearer(reader), json: ["value": 8]).status, 200)
        XCTAssertEqual(try server.get("/preferences/age", headers: bearer(reader)).json?["value"] as? Int, 8)
    }

}
