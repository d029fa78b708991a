import Foundation
import Synchronization
import Logging
import TestFixtures
import XCTest
@testable import TidingsStore

/// Base class: one throwaway PostgreSQL cluster per test class (started in `setUp()` of the
/// class, stopped in its `tearDown()`, which XCTest runs also when tests fail), and a fresh
/// database per test.
class PostgresTestCase: XCTestCase {
    nonisolated(unsafe) static var sharedCluster: PostgresCluster?
    nonisolated(unsafe) static var clusterError: (any Error)?

    override class func setUp() {
        super.setUp()
        do {
            sharedCluster = try PostgresCluster()
        } catch {
            clusterError = error
        }
    }

    override class func tearDown() {
        sharedCluster?.destroy()
        sharedCluster = nil
        super.tearDown()
    }

    /// The class's cluster (fails the test if it could not start).
    func cluster() throws -> PostgresCluster {
        if let cluster = Self.sharedCluster { return cluster }
        throw Self.clusterError ?? FixtureProcess.Failure(command: "PostgresCluster", status: nil, output: "not started")
    }

    /// A fresh, empty database on the class's cluster; its URL.
    func makeDatabase() throws -> String {
        let cluster = try cluster()
        let name = "t_\(UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased().prefix(16))"
        try cluster.psql("CREATE DATABASE \(name)", database: "postgres")
        return "postgres://postgres@127.0.0.1:\(cluster.port)/\(name)"
    }

    /// An opened store on `url`, closed when the test ends.
    func makeStore(
        _ url: String, limits: ChangeStoreLimits = ChangeStoreLimits(), options: PostgresStoreOptions = .testing
    ) async throws -> PostgresStore {
        let store = try PostgresStore(url: url, limits: limits, logger: Logger.testing, options: options)
        addTeardownBlock { await store.close() }
        try await store.open()
        return store
    }
}

extension PostgresStoreOptions {
    /// Short timeouts, so outage tests finish quickly.
    static var testing: PostgresStoreOptions {
        var options = PostgresStoreOptions()
        options.connectTimeout = .seconds(2)
        options.queryTimeout = .seconds(5)
        options.pollInterval = .milliseconds(500)
        options.reconnectDelay = .milliseconds(50) ... .milliseconds(500)
        options.startupTimeout = .seconds(10)
        return options
    }
}

extension Logger {
    /// Warnings and errors go to stderr (visible in a failing test's output).
    static var testing: Logger {
        var logger = Logger(label: "tidings.test.postgres") { StreamLogHandler.standardError(label: $0) }
        logger.logLevel = ProcessInfo.processInfo.environment["TIDINGS_TEST_LOG"] .flatMap { Logger.Level(rawValue: $0) } ?? .warning
        return logger
    }
}

/// Counts doorbell rings (thread-safe).
final class RingCounter: Sendable {
    private let rings = Mutex(0)
    var count: Int { rings.withLock { $0 } }
    func ring() { rings.withLock { $0 += 1 } }
}

/// Waits (polling every 10 ms, with a deadline) until `condition` holds; fails the test if not.
func waitUntil(
    _ what: String, timeout: TimeInterval = 10, file: StaticString = #filePath, line: UInt = #line,
    _ condition: () async throws -> Bool
) async rethrows {
    if try await !eventually(within: timeout, condition) {
        XCTFail("timed out after \(timeout) s waiting for \(what)", file: file, line: line)
    }
}

/// The error `body` throws as a StoreError (nil when it returns normally).
func storeError<T>(_ body: () async throws -> T) async -> StoreError? {
    do {
        _ = try await body()
        return nil
    } catch let error as StoreError {
        return error
    } catch {
        return .database("not a StoreError: \(error)")
    }
}

func set(_ key: String, _ json: String?, default defaultJSON: String = "null") -> WriteOperation {
    .setPreference(key: key, json: json, defaultJSON: defaultJSON)
}

extension Change {
    /// What an event needs (revision and kind), without the record's when, who and why.
    var event: Change { Change(revision: revision, kind: kind) }
}
