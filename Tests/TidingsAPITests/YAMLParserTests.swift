import XCTest
@testable import TidingsAPI

/// YAMLParser (Yams underneath) reads what YAMLEmitter writes (and the hand-written
/// `openapi.base.yaml`) back to the same tree, and refuses, with its line, what it does not read.
final class YAMLParserTests: XCTestCase {
    private func parse(_ text: String) throws -> YAMLNode { try YAMLParser.parse(text) }

    private func assertRefused(_ text: String, line: Int, _ words: String, file: StaticString = #filePath, lineNumber: UInt = #line) {
        XCTAssertThrowsError(try parse(text), file: file, line: lineNumber) { error in
            guard let failure = error as? YAMLParser.Failure else { return XCTFail("\(error)", file: file, line: lineNumber) }
            XCTAssertEqual(failure.line, line, "\(failure)", file: file, line: lineNumber)
            // substring: the message is libyaml's wording around the words that name the problem.
            XCTAssertTrue(failure.message.contains(words), "\(failure)", file: file, line: lineNumber)
        }
    }

    func testReadsTheEmittersBlockAndFlowStyles() throws {
        let text = """
            # a comment
            openapi: "3.1.0"
            info:
              title: Tidings  # trailing comment
              version: 2
              ratio: -2.5
              big: 1.0e+16
              flag: true
              nothing: null
              empty:
              tags: [a, "b c", 'it''s', C#]
              ref: { $ref: "#/components/x", num: 5 }
              nested: [[1, 2], { a: [] }, {}]
              description: |
                Line one,
                  indented line.

                Last line.
              stripped: |-
                no newline
            paths:
            - a
            - key: value
              other: 1
            -
              deeper: x
            - - inner
              - inner2
            compact:
            - x
            "200": { description: ok }
            """
        let node = try parse(text)
        XCTAssertEqual(node["openapi"], .string("3.1.0"))
        XCTAssertEqual(node["info"]?["title"], .string("Tidings"))
        XCTAssertEqual(node["info"]?["version"], .integer(2))
        XCTAssertEqual(node["info"]?["ratio"], .number(-2.5))
        XCTAssertEqual(node["info"]?["big"], .number(1e16))
        XCTAssertEqual(node["info"]?["flag"], .boolean(true))
        XCTAssertEqual(node["info"]?["nothing"], .null)
        XCTAssertEqual(node["info"]?["empty"], .null)
        XCTAssertEqual(node["info"]?["tags"], .strings(["a", "b c", "it's", "C#"]))
        XCTAssertEqual(node["info"]?["ref"], .map([("$ref", .string("#/components/x")), ("num", .integer(5))]))
        XCTAssertEqual(node["info"]?["nested"], .sequence([
            .sequence([.integer(1), .integer(2)]), .map([("a", .sequence([]))]), .map([]),
        ]))
        XCTAssertEqual(node["info"]?["description"], .string("Line one,\n  indented line.\n\nLast line.\n"))
        XCTAssertEqual(node["info"]?["stripped"], .string("no newline"))
        XCTAssertEqual(node["paths"], .sequence([
            .string("a"),
            .map([("key", .string("value")), ("other", .integer(1))]),
            .map([("deeper", .string("x"))]),
            .strings(["inner", "inner2"]),
        ]))
        XCTAssertEqual(node["compact"], .strings(["x"]))
        XCTAssertEqual(node["200"], .map([("description", .string("ok"))]))
    }

    func testDoubleQuotedEscapes() throws {
        XCTAssertEqual(try parse(#"k: "a\"b\\c\n\t\u00e9\u2028\U0001F600\x41""#)["k"],
                       .string("a\"b\\c\n\té\u{2028}😀A"))
    }

    /// Everything the emitter writes reads back as the same tree, also the strings it must quote.
    func testEmittedTreesReadBack() throws {
        let awkward = ["", " lead", "trail ", "yes", "No", "~", "null", "3.1.0", "0x1F", "1e5", "-5", "+5", ".5",
                       "a: b", "a #b", "#x", "- x", "[x]", "{x}", "x,y", "é", "tab\there", "bell\u{07}", "nel\u{85}",
                       "bom\u{FEFF}", "line\u{2028}sep", "back\\slash", "quote\"d", "it's", "ends:", "a:b", "%x", "@x",
                       "two\n\nnewlines at end\n\n", "\nleading newline", " spaced\nblock", "multi\nline", "multi\nline\n",
                       "in block\twith tab\n"]
        var members: [(String, YAMLNode)] = awkward.enumerated().map { ("k\($0.offset)", .string($0.element)) }
        members += awkward.map { ($0, .integer(1)) }
        members += [
            ("numbers", .sequence([.integer(Int.min), .integer(Int.max), .integer(0), .number(0), .number(-0.5),
                                   .number(1e300), .number(.leastNonzeroMagnitude), .number(.infinity), .number(-.infinity)])),
            ("flow", .sequence(awkward.map(YAMLNode.string))),
            ("map", .map(awkward.map { ($0, .string($0)) })),
            ("deep", .sequence([.map([("a", .sequence([.map([("b", .strings(["c"]))])]))])])),
            ("nulls", .sequence([.null, .boolean(false), .map([("x", .null)])])),
        ]
        let tree = YAMLNode.map(members)
        let text = YAMLEmitter.document(tree)
        XCTAssertEqual(try parse(text), tree, text)
    }

    func testRefusesWhatItDoesNotRead() {
        assertRefused("a: 1\na: 2\n", line: 1, "duplicate")
        assertRefused("a: { x: 1, x: 2 }\n", line: 1, "duplicate")
        assertRefused("a: 99999999999999999999\n", line: 1, "out of range")
        assertRefused("a: &x 1\n", line: 1, "anchors")
        assertRefused("a: b: c\n", line: 1, "mapping values")
        assertRefused("a: 1\nb: [1,\n", line: 3, "expected")
        // libyaml's scanner meets flow openers ahead of its events: its own limit (1,000) says so.
        assertRefused("a: " + String(repeating: "[", count: 3_000) + "\n", line: 1, "nest")
        XCTAssertThrowsError(try YAMLParser.parse([0x61, 0x3A, 0x20, 0xFF]))
        assertRefused("a: *x\n", line: 1, "anchors")
        assertRefused("a: [1, &x 2]\n", line: 1, "anchors")
        assertRefused("- &x {a: 1}\n- *x\n", line: 1, "anchors")
        let deepBlock = (0..<600).map { String(repeating: " ", count: $0) + "k:" }.joined(separator: "\n") + " 1\n"
        assertRefused(deepBlock, line: 1, "nests")
    }

    /// An ampersand inside a scalar is text, not an anchor: the fuzzer found the emitter's own
    /// `".inf,&"` and `'SuStgit00":&'` refused by the earlier textual scan.
    func testAnAmpersandInsideAScalarIsText() throws {
        for text in [".inf,&", "SuStgit00\":&", "R & D", "R&D", "a :&b", "x, &y", "[&]", "{&: 1}"] {
            let tree = YAMLNode.map([("a", .string(text))])
            let written = YAMLEmitter.document(tree)
            XCTAssertEqual(try parse(written), tree, written)
        }
        XCTAssertEqual(try parse("a: R&D\nb: x &y\n"), .map([("a", .string("R&D")), ("b", .string("x &y"))]))
    }
}
