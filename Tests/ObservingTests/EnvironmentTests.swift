import XCTest
@testable import Observing

private enum GreetingKey: EnvironmentKey {
    static let defaultValue = "hello"
}

private enum VolumeKey: EnvironmentKey {
    static let defaultValue = 3
}

extension EnvironmentValues {
    fileprivate var greeting: String {
        get { self[GreetingKey.self] }
        set { self[GreetingKey.self] = newValue }
    }
    fileprivate var volume: Int {
        get { self[VolumeKey.self] }
        set { self[VolumeKey.self] = newValue }
    }
}

@MainActor
private final class Greeter: EnvironmentOwner {
    var environment = EnvironmentValues()
    @Environment(\.greeting) var greeting: String
    @Environment(\.volume) var volume: Int
}

/// Idea 6: typed keys with defaults, per-owner overrides, read when the owner is evaluated.
@MainActor
final class EnvironmentTests: XCTestCase {
    func testDefaultsAndPerOwnerOverrides() async {
        let plain = Greeter()
        let custom = Greeter()
        custom.environment.greeting = "moin"
        custom.environment.volume = 11
        plain.updateDynamicProperties()
        custom.updateDynamicProperties()
        XCTAssertEqual(plain.greeting, "hello")
        XCTAssertEqual(plain.volume, 3)
        XCTAssertEqual(custom.greeting, "moin")
        XCTAssertEqual(custom.volume, 11)
    }

    func testValuesAreReadAtEvaluationAndUpdateIsIdempotent() async {
        let owner = Greeter()
        owner.updateDynamicProperties()
        owner.environment.greeting = "servus"
        XCTAssertEqual(owner.greeting, "hello", "unchanged until the owner is evaluated again")
        owner.updateDynamicProperties()
        owner.updateDynamicProperties()
        XCTAssertEqual(owner.greeting, "servus")
    }

    func testOverridingTheHTTPClientOfALoaderAfterCreation() async {
        let loader = DataLoader<[Int]>(request: HTTPClientRequest(url: URL(string: "http://upstream.test/")!),
                                       policy: DataLoaderPolicy(retryBase: nil))
        loader.fetchDataIfNeeded()
        let unconfigured = await loader.settled()
        XCTAssertEqual(unconfigured.error, .connectionFailed("no HTTP client configured in the environment"))
        loader.environment.httpClient = ScriptedClient(upstream: ScriptedUpstream([.respond(ok("[1,2]"))]))
        loader.refresh()
        let state = await loader.settled()
        XCTAssertEqual(state.value, [1, 2])
    }
}
