import Foundation
import TidingsStore
@testable import TidingsAPI
import XCTest

/// The webhook rules that need no receiver: the file's checks, the Standard Webhooks signature,
/// the address ranges refused, the retry schedule.
final class WebhookRulesTests: XCTestCase {
    private let secret = "whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="
    private let declared = ["age", "name", "theme"]

    private func parse(_ json: String) throws(WebhooksFile.Invalid) -> [WebhookDefinition] {
        try WebhooksFile.parse(Data(json.utf8), path: "hooks.json", declaredKeys: declared)
    }

    private func refusal(_ json: String) -> String {
        do {
            _ = try parse(json)
            return "accepted"
        } catch {
            return error.description
        }
    }

    func test_a_valid_file_gives_each_hook_its_url_key_and_coverage() throws {
        let hooks = try parse("""
            [{"name": "ci", "url": "https://user:pw@hooks.example.com/in?x=1", "secret": "\(secret)"},
             {"name": "audit.log", "url": "http://example.org/", "secret": "\(secret)", "topics": ["preferences"],
              "keys": ["theme", "age"], "environments": ["staging", "default", "staging"]}]
            """)
        XCTAssertEqual(hooks.map(\.name), ["ci", "audit.log"])
        XCTAssertEqual(hooks[0].key, Array(0..<32))
        XCTAssertEqual(hooks[0].displayURL, "https://hooks.example.com/in?x=1", "no user information")
        XCTAssertEqual(hooks[0].coverage, WebhookCoverage())
        XCTAssertNil(hooks[0].environments)
        XCTAssertEqual(hooks[1].coverage, WebhookCoverage(preferences: true, things: false, keys: ["age", "theme"],
                                                           environments: ["default", "staging"]))
        XCTAssertEqual(hooks[1].environments, ["default", "staging"])
        XCTAssertTrue(hooks[1].covers(Change(revision: 1, kind: .preference(key: "age", json: "1"), environment: "staging")))
        XCTAssertFalse(hooks[1].covers(Change(revision: 1, kind: .preference(key: "name", json: "1"), environment: "staging")))
        XCTAssertFalse(hooks[1].covers(Change(revision: 1, kind: .preference(key: "age", json: "1"), environment: "dev")))
        XCTAssertFalse(hooks[1].covers(Change(revision: 1, kind: .things(op: .add, thing: "X", list: ["X"]), environment: "default")))
        XCTAssertFalse(hooks[0].covers(Change(revision: 1, kind: .posts("{}"), environment: "default")))
    }

    func test_every_mistake_is_named_and_no_message_shows_the_secret() {
        // Each message is compared whole, so none can hold the secret (or any part of it).
        let mustBeSecret = #"entry 1 (a): "secret" must be "whsec_" followed by the base64 of 24 to 1024 bytes"#
        let cases: [(String, String)] = [
            ("{}", "expected a JSON array of webhooks"),
            ("[1]", "entry 1 is not an object"),
            (#"[{"name": "bad name", "url": "http://a.b/", "secret": "\#(secret)"}]"#, #"entry 1: "name" must match ^[A-Za-z0-9_.-]{1,64}$"#),
            (#"[{"name": "a", "url": "http://a.b/", "secret": "\#(secret)"}, {"name": "a", "url": "http://a.b/", "secret": "\#(secret)"}]"#,
             "entry 2 (a): the name appears more than once"),
            (#"[{"name": "a", "url": "ftp://a.b/", "secret": "\#(secret)"}]"#, #"entry 1 (a): "url" must be an absolute http or https URL with a host"#),
            (#"[{"name": "a", "url": "/relative", "secret": "\#(secret)"}]"#, #"entry 1 (a): "url" must be an absolute http or https URL with a host"#),
            (#"[{"name": "a", "url": "http://a.b/", "secret": "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="}]"#, mustBeSecret),
            (#"[{"name": "a", "url": "http://a.b/", "secret": "whsec_c2hvcnQ="}]"#, mustBeSecret),
            (#"[{"name": "a", "url": "http://a.b/", "secret": "whsec_not base64!"}]"#, mustBeSecret),
            (#"[{"name": "a", "url": "http://a.b/", "secret": "\#(secret)", "topics": ["posts"]}]"#,
             #"entry 1 (a): "topics" must be a non-empty array of "preferences" and "things""#),
            (#"[{"name": "a", "url": "http://a.b/", "secret": "\#(secret)", "keys": ["nope"]}]"#,
             #"entry 1 (a): "keys" names "nope", which is not a declared preference"#),
            (#"[{"name": "a", "url": "http://a.b/", "secret": "\#(secret)", "environments": ["Prod"]}]"#,
             #"entry 1 (a): "environments" must be a non-empty array of names matching ^[a-z][a-z0-9-]{0,31}$"#),
            (#"[{"name": "a", "url": "http://a.b/", "secret": "\#(secret)", "sercet": 1}]"#, #"entry 1 (a): unknown member "sercet""#),
        ]
        for (json, expected) in cases {
            XCTAssertEqual(refusal(json), "invalid --webhooks file hooks.json: \(expected)", json)
        }
    }

    func test_the_signature_is_the_one_the_reference_library_makes() {
        // `standardwebhooks` 1.1.0 (Python): Webhook(secret).sign("default-42", 1700000000, body).
        let body = Array(#"{"type":"change","data":{}}"#.utf8)
        let key = WebhooksFile.key(ofSecret: secret)!
        XCTAssertEqual(WebhookSignature.sign(id: "default-42", timestamp: 1_700_000_000, body: body, key: key),
                       "v1,PkeJmRR/veaQdmEZi/NWhJ23TDTBNxxHXOPhs7uR+Uo=")
    }

    func test_loopback_private_and_link_local_addresses_are_refused_and_public_ones_are_not() {
        func v4(_ a: UInt8, _ b: UInt8, _ c: UInt8, _ d: UInt8) -> IPAddress { IPAddress(bytes: [a, b, c, d]) }
        func v6(_ groups: [UInt16]) -> IPAddress { IPAddress(bytes: groups.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }) }
        let refused: [IPAddress] = [
            v4(127, 0, 0, 1), v4(127, 255, 1, 2), v4(10, 1, 2, 3), v4(172, 16, 0, 1), v4(172, 31, 255, 255), v4(192, 168, 1, 1),
            v4(169, 254, 169, 254), v4(0, 0, 0, 0), v4(100, 64, 0, 1), v4(224, 0, 0, 1), v4(255, 255, 255, 255),
            v6([0, 0, 0, 0, 0, 0, 0, 1]), v6([0, 0, 0, 0, 0, 0, 0, 0]), v6([0xfe80, 0, 0, 0, 0, 0, 0, 1]),
            v6([0xfd00, 0, 0, 0, 0, 0, 0, 1]), v6([0, 0, 0, 0, 0, 0xffff, 0x7f00, 0x0001]), v6([0x64, 0xff9b, 0, 0, 0, 0, 0x0a00, 1]),
        ]
        for address in refused {
            XCTAssertNotNil(WebhookAddressRule.refusal(address), "\(address) should be refused")
        }
        XCTAssertEqual(WebhookAddressRule.refusal(v4(127, 0, 0, 1)),
                       "127.0.0.1 is a loopback address (refused unless --webhook-allow-private is set)")
        XCTAssertEqual(WebhookAddressRule.refusal(v4(192, 168, 1, 1)),
                       "192.168.1.1 is a private address (refused unless --webhook-allow-private is set)")
        let allowed: [IPAddress] = [
            v4(93, 184, 216, 34), v4(8, 8, 8, 8), v4(172, 32, 0, 1), v4(100, 128, 0, 1), v4(192, 169, 0, 1),
            v6([0x2606, 0x2800, 0x220, 1, 0x248, 0x1893, 0x25c8, 0x1946]), v6([0, 0, 0, 0, 0, 0xffff, 0x5db8, 0xd822]),
        ]
        for address in allowed {
            XCTAssertNil(WebhookAddressRule.refusal(address), "\(address) should be allowed")
        }
    }

    func test_the_retry_schedule_follows_the_contract_with_jitter() {
        let timing = WebhookTiming()
        XCTAssertEqual((1...7).map { timing.delay(afterFailures: $0, jitter: 1) },
                       [.seconds(5), .seconds(30), .seconds(120), .seconds(600), .seconds(3600), .seconds(3600), .seconds(3600)])
        XCTAssertEqual(timing.delay(afterFailures: 1, jitter: 0.8), .seconds(4))
        XCTAssertEqual(timing.giveUpAfter, .seconds(86_400))
        XCTAssertEqual(timing.attemptTimeout, .seconds(10))
        XCTAssertEqual(timing.connectTimeout, .seconds(5))
        XCTAssertGreaterThan(timing.lease - timing.leaseMargin, .zero)
        XCTAssertGreaterThanOrEqual(timing.leaseMargin, timing.attemptTimeout, "the lease outlasts an attempt")
        let test = WebhookTiming.fromEnvironment(["TIDINGS_TEST_WEBHOOK_BACKOFF": "0.2, 1", "TIDINGS_TEST_WEBHOOK_TIMEOUT": "1"])
        XCTAssertEqual(test.backoff, [.milliseconds(200), .seconds(1)])
        XCTAssertEqual(test.attemptTimeout, .seconds(1))
        XCTAssertEqual(test.connectTimeout, .seconds(1))
    }
}
