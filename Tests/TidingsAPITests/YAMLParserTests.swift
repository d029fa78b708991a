import XCTest
@testable import TidingsAPI

/// YAMLParser reads what YAMLEmitter writes (and the hand-written `openapi.base.yaml`), and
/// refuses, with its line, what it does not read rather than guessing.
final class YAMLParserTests: XCTestCase {
    private func parse(_ text: String) throws -> YAMLNode { try YAMLParser.parse(text) }

    private func assertRefused(_ text: String, line: Int, _ words: String, file: StaticString = #filePath, lineNumber: UInt = #line) {
        XCTAssertThrowsError(try parse(text), file: file, line: lineNumber) { error in
            guard let failure = error as? YAMLParser.Failure else { return XCTFail("\(error)", file: file, line: lineNumber) }
            XCTAssertEqual(failure.line, line, "\(failure)", file: file, line: lineNumber)
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
        XCTAssertEqual(try parse(#"k: "a\"b\\c\n\t\u00e9\u2028\U0001F600\x41\/""#)["k"],
                       .string("a\"b\\c\n\té\u{2028}😀A/"))
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
                                   .number(1e300), .number(5e-324), .number(.infinity), .number(-.infinity)])),
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
        assertRefused("a: 1\nb:\n  c: 1\n   d: 2\n", line: 4, "indentation")
        assertRefused("a: 1\na: 2\n", line: 2, "duplicate")
        assertRefused("a: { x: 1, x: 2 }\n", line: 1, "duplicate")
        assertRefused("a: yes\n", line: 1, "quoted")
        assertRefused("a: 1e5\n", line: 1, "quoted")
        assertRefused("200: x\n", line: 1, "key")
        assertRefused("a: 99999999999999999999\n", line: 1, "out of range")
        assertRefused("a: >\n  folded\n", line: 1, "folded")
        assertRefused("a: &x 1\n", line: 1, "anchors")
        assertRefused("a: \"open\n  close\"\n", line: 1, "end on its line")
        assertRefused("a: [1,\n  2]\n", line: 1, "end on its line")
        assertRefused("---\na: 1\n", line: 1, "document markers")
        assertRefused("a:\tb\n", line: 1, "tab")
        assertRefused("a: 1\r\n", line: 1, "control character")
        assertRefused("a: b: c\n", line: 1, "quoted")
        assertRefused("a: b\nplain continuation\n", line: 2, "key")
        assertRefused("a: \"x\" y\n", line: 1, "after a value")
        assertRefused("a: \"\\q\"\n", line: 1, "escape")
        assertRefused("a: \"\\uD800\"\n", line: 1, "surrogate")
        assertRefused("a: |+\n  x\n", line: 1, "literal")
        assertRefused("", line: 1, "no content")
        assertRefused("a: " + String(repeating: "[", count: 100) + "\n", line: 1, "nested")
        XCTAssertThrowsError(try YAMLParser.parse([0x61, 0x3A, 0x20, 0xFF]))
    }
}
