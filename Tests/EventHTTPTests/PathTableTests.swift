import XCTest
@testable import EventHTTP

/// The router's resolved-path cache: a path finds its own value or nothing, never another's.
final class PathTableTests: XCTestCase {
    func testStoresFindsReplacesAndClears() {
        var table = PathTable<Int>()
        let paths = (0..<2_000).map { "/preferences/key-\($0)" } + ["", "/", "/é/ü", "/preferences/name"]
        for (index, path) in paths.enumerated() { table.set(index, for: path) }
        var found = 0
        for (index, path) in paths.enumerated() {
            guard let value = table.value(for: path) else { continue }
            XCTAssertEqual(value, index, path)
            found += 1
        }
        // A probe stops after `maxProbe` slots, so a few paths may stay uncached; nearly all fit.
        XCTAssertGreaterThan(found, paths.count * 95 / 100)
        XCTAssertEqual(table.count, found)
        XCTAssertNil(table.value(for: "/preferences/key-2000"))
        XCTAssertNil(table.value(for: "/preferences/NAME"))
        XCTAssertNil(table.value(for: "/preferences/name/"))

        if table.value(for: "/preferences/name") != nil {
            table.set(-1, for: "/preferences/name")
            XCTAssertEqual(table.value(for: "/preferences/name"), -1)
            XCTAssertEqual(table.count, found)
        }

        // A key built from other storage (a substring) is the same key.
        let built = String("x/preferences/key-7".dropFirst())
        XCTAssertEqual(table.value(for: built), table.value(for: "/preferences/key-7"))

        table.removeAll()
        XCTAssertEqual(table.count, 0)
        XCTAssertNil(table.value(for: "/preferences/key-1"))
        XCTAssertTrue(table.set(3, for: "/a"))
        XCTAssertEqual(table.value(for: "/a"), 3)
    }
}
