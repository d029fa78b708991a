import Foundation
import XCTest
@testable import TidingsStore

/// Server secrets (``ServerSecretStore``): the stream tickets' key is made once per database —
/// by whichever instance asks first, also when several ask at the same moment — and is the same
/// for every instance and after reopening; another database has another.
extension ChangeStoreConformance {
    static func theStreamTicketSecretIsOnePerDatabase(_ maker: some ChangeStoreMaker) async throws {
        let database = try maker.newDatabase()
        let instances = try await [maker.open(database, limits: ChangeStoreLimits()), maker.open(database, limits: ChangeStoreLimits()),
                                   maker.open(database, limits: ChangeStoreLimits())]
            .map { try XCTUnwrap($0 as? any ChangeStore & ServerSecretStore) }
        // All at once: the row made once, every instance reading the one made.
        let secrets = try await withThrowingTaskGroup(of: [UInt8].self) { group in
            for instance in instances { for _ in 0..<3 { group.addTask { try await instance.streamTicketSecret() } } }
            return try await group.reduce(into: [[UInt8]]()) { $0.append($1) }
        }
        XCTAssertEqual(secrets.count, 9)
        XCTAssertEqual(Set(secrets).count, 1, "one secret for every instance: \(secrets.map(Hex.string))")
        let secret = try XCTUnwrap(secrets.first)
        XCTAssertEqual(secret.count, ServerSecret.byteCount)
        XCTAssertNotEqual(secret, [UInt8](repeating: 0, count: ServerSecret.byteCount))
        for instance in instances { await instance.close() }

        let opened = try await maker.open(database, limits: ChangeStoreLimits())
        let reopened = try XCTUnwrap(opened as? any ChangeStore & ServerSecretStore)
        let again = try await reopened.streamTicketSecret()
        XCTAssertEqual(again, secret, "reopening keeps it")
        let fresh = try await maker.freshStore()
        let other = try XCTUnwrap(fresh as? any ChangeStore & ServerSecretStore)
        let elsewhere = try await other.streamTicketSecret()
        XCTAssertNotEqual(elsewhere, secret, "another database has another")
    }
}
