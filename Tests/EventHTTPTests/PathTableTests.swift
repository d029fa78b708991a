import XCTest
@testable import EventHTTP

/// The router's resolved-path table: every stored path found again, nothing else found.
final class PathTableTests: XCTestCase {
    func testStoresFindsReplacesAndClears() {
        var table = PathTable<Int>()
        let paths = (0..<2_000).map { "/preferences/key-\($0)" } + ["", "/", "/é/ü", "/preferences/name"]
        for (index, path) in paths.enumerated() { table.set(index, for: path) }
        XCTAssertEqual(table.count, paths.count)
        for (index, path) in paths.enumerated() { XCTAssertEqual(table.value(for: path), index, path) }
        XCTAssertNil(table.value(for: "/preferences/key-2000"))
        XCTAssertNil(table.value(for: "/preferences/NAME"))
        XCTAssertNil(table.value(for: "/preferences/name/"))

        table.set(-1, for: "/preferences/name")
        XCTAssertEqual(table.value(for: "/preferences/name"), -1)
        XCTAssertEqual(table.count, paths.count)

        // A key built from other storage (a substring, a bridged copy) is the same key.
        let built = String("x/preferences/key-7".dropFirst())
        XCTAssertEqual(table.value(for: built), 7)

        table.removeAll()
        XCTAssertEqual(table.count, 0)
        XCTAssertNil(table.value(for: "/preferences/key-1"))
        table.set(3, for: "/a")
        XCTAssertEqual(table.value(for: "/a"), 3)
    }
}
