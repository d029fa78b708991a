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
        // A probe stops after `maxProbe` slots; a path that found none there grows the table,
        // so every path is cached (refused, a few in a hundred stayed uncached for good:
        // `/preferences/name` walked the route tree on every request in some process starts).
        XCTAssertEqual(found, paths.count)
        XCTAssertEqual(table.count, found)
        XCTAssertNil(table.value(for: "/preferences/key-2000"))
        XCTAssertNil(table.value(for: "/preferences/NAME"))
        XCTAssertNil(table.value(for: "/preferences/name/"))

        table.set(-1, for: "/preferences/name")
        XCTAssertEqual(table.value(for: "/preferences/name"), -1)
        XCTAssertEqual(table.count, found)

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

extension PathTableTests {
    /// Runs of taken slots longer than a probe go (the basis is random, so each table here is
    /// another draw): a table filled the way the router fills it — a few dozen routes, then
    /// paths as clients ask for them — keeps every one, and stays within `sparsest` slots an entry.
    func testEveryPathFindsASlotInManyDraws() {
        var missing = 0
        for draw in 0..<200 {
            var table = PathTable<Int>()
            let paths = (0..<60).map { "/route-\(draw)/\($0)" }
            for (index, path) in paths.enumerated() { table.set(index, for: path) }
            missing += paths.indices.filter { table.value(for: paths[$0]) != $0 }.count
            XCTAssertEqual(table.count, paths.count)
        }
        XCTAssertEqual(missing, 0)
    }
}
