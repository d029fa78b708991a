import XCTest
@testable import TidingsStore

final class PostgresURLTests: XCTestCase {
    func testParsesTheDocumentedForms() throws {
        var url = try PostgresURL("postgres://tidings:s%40cret@db.example:6543/tidings")
        XCTAssertEqual([url.host, "\(url.port)", url.user, url.password, url.database], ["db.example", "6543", "tidings", "s@cret", "tidings"])
        XCTAssertEqual(url.redacted, "postgres://tidings@db.example:6543/tidings")
        url = try PostgresURL("postgresql://me@127.0.0.1/app?sslmode=disable")
        XCTAssertEqual([url.host, "\(url.port)", url.user, url.password, url.database], ["127.0.0.1", "5432", "me", nil, "app"])
        url = try PostgresURL("postgres://me@[::1]:5433/app")
        XCTAssertEqual(url.host, "::1")
    }

    func testRefusesWhatItCannotHonour() {
        for text in [
            "", "http://me@host/db", "postgres://host/db", "postgres://me@/db", "postgres://me@host",
            "postgres://me@host/", "postgres://me@host/a/b", "postgres://me@host:0/db",
            "postgres://me@host/db?sslmode=require", "postgres://me@host/db?application=x",
        ] {
            XCTAssertThrowsError(try PostgresURL(text), text) { error in
                guard case StoreError.database = error else { return XCTFail("\(text): \(error)") }
            }
        }
    }

    func testStoreInitRefusesABadURLWithoutConnecting() {
        XCTAssertThrowsError(try PostgresStore(url: "postgres://nobody")) { error in
            guard case StoreError.database = error else { return XCTFail("\(error)") }
        }
    }
}
