import Foundation
import TestFixtures
import Observing
import OpenCombine
import TidingsClient
import XCTest

/// A program's settings, declared once with the library's wrappers (as a user of the client
/// would), backed by whatever store it is given.
@MainActor
final class AppSettings: PreferencesBacked {
    @CloudStorage("name") var name = "fat"
    @CloudStorage("age") var age = 5
    @CloudStorage("speed") var speed = 0.0

    private let store: any KeyValueStore
    private(set) lazy var preferences: Preferences<Never> = .declared(by: self, store: store)

    init(store: any KeyValueStore) { self.store = store }
}

/// A reader of those settings through `@Preference` (value, binding, per-key publisher).
@MainActor
final class Screen: PreferencesReader {
    let preferenceSource: AppSettings
    @Preference(\AppSettings.name) var name
    @Preference(\AppSettings.age) var age
    @Preference(\AppSettings.speed) var speed

    init(_ settings: AppSettings) { preferenceSource = settings }
}

extension XCTestCase {
    /// A client of `server` with a quick reconnect (tests should not wait out 3 s back-offs),
    /// connected, its first snapshot applied.
    @MainActor
    func connectedClient(_ server: TidingsProcess, credentials: TidingsCredentials = .none, keys: [String]? = nil,
                         file: StaticString = #filePath, line: UInt = #line) async -> TidingsClient {
        let client = TidingsClient(configuration: .init(
            url: server.url, credentials: credentials, preferenceKeys: keys,
            reconnect: ReconnectPolicy(initialDelay: .milliseconds(100), maxDelay: .milliseconds(400))))
        client.connect()
        await eventually("the first snapshot", file: file, line: line) { client.resumeRevision != nil }
        return client
    }
}
