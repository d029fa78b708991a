import Foundation

/// A JSON document compared by value, so a test can assert an exact body
/// (`XCTAssertEqual(reply.value, ["key": "age", "value": 6])`) without `Any` casts, and tell
/// `1` from `true` and `"1"`. Integers and numbers compare by numeric value (`2 == 2.0`), as
/// JSON does.
enum JSONValue: Equatable, Decodable, CustomStringConvertible,
    ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral
{
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    init(nilLiteral: ()) { self = .null }
    init(booleanLiteral value: Bool) { self = .bool(value) }
    init(integerLiteral value: Int) { self = .number(Double(value)) }
    init(floatLiteral value: Double) { self = .number(value) }
    init(stringLiteral value: String) { self = .string(value) }
    init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { $1 }))
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() { self = .null; return }
        if let value = try? container.decode(Bool.self) { self = .bool(value); return }
        if let value = try? container.decode(Double.self) { self = .number(value); return }
        if let value = try? container.decode(String.self) { self = .string(value); return }
        if let value = try? container.decode([JSONValue].self) { self = .array(value); return }
        self = .object(try container.decode([String: JSONValue].self))
    }

    /// Parses `bytes`; nil when they are not JSON.
    static func parse(_ bytes: some Sequence<UInt8>) -> JSONValue? {
        try? JSONDecoder().decode(JSONValue.self, from: Data(bytes))
    }

    subscript(key: String) -> JSONValue? {
        if case let .object(object) = self { return object[key] }
        return nil
    }

    subscript(index: Int) -> JSONValue? {
        if case let .array(array) = self, array.indices.contains(index) { return array[index] }
        return nil
    }

    var stringValue: String? { if case let .string(s) = self { s } else { nil } }
    var numberValue: Double? { if case let .number(n) = self { n } else { nil } }
    var intValue: Int? { numberValue.flatMap { $0 == $0.rounded() ? Int($0) : nil } }
    var uint64Value: UInt64? { numberValue.flatMap { $0 >= 0 && $0 == $0.rounded() ? UInt64($0) : nil } }
    var boolValue: Bool? { if case let .bool(b) = self { b } else { nil } }
    var arrayValue: [JSONValue]? { if case let .array(a) = self { a } else { nil } }
    var objectValue: [String: JSONValue]? { if case let .object(o) = self { o } else { nil } }
    /// The strings of an array of strings.
    var strings: [String]? { arrayValue?.compactMap(\.stringValue) }

    var description: String {
        switch self {
        case .null: "null"
        case let .bool(b): "\(b)"
        case let .number(n): n == n.rounded() && abs(n) < 1e15 ? String(Int64(n)) : "\(n)"
        case let .string(s): "\"\(s)\""
        case let .array(a): "[" + a.map(\.description).joined(separator: ",") + "]"
        case let .object(o): "{" + o.keys.sorted().map { "\"\($0)\":\(o[$0]!)" }.joined(separator: ",") + "}"
        }
    }
}

extension HTTPReply {
    /// The body as a ``JSONValue`` (nil when it is not JSON).
    var value: JSONValue? { JSONValue.parse(body) }
}

extension EventStreamReader.Event {
    /// `data` as a ``JSONValue``.
    var value: JSONValue? { JSONValue.parse(Array(data.utf8)) }
}
