import Foundation

/// The tests' one JSON value: a JSON document compared by value, so a test can assert an exact body
/// (`XCTAssertEqual(reply.value, ["key": "age", "value": 6])`) without `Any` casts, and tell
/// `1` from `true` and `"1"`. Integers and numbers compare by numeric value (`2 == 2.0`), as
/// JSON does.
public enum JSONValue: Equatable, Sendable, Decodable, CustomStringConvertible,
    ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral
{
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    public init(nilLiteral: ()) { self = .null }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(integerLiteral value: Int) { self = .number(Double(value)) }
    public init(floatLiteral value: Double) { self = .number(value) }
    public init(stringLiteral value: String) { self = .string(value) }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { $1 }))
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() { self = .null; return }
        if let value = try? container.decode(Bool.self) { self = .bool(value); return }
        if let value = try? container.decode(Double.self) { self = .number(value); return }
        if let value = try? container.decode(String.self) { self = .string(value); return }
        if let value = try? container.decode([JSONValue].self) { self = .array(value); return }
        self = .object(try container.decode([String: JSONValue].self))
    }

    /// Parses `bytes`; nil when they are not JSON.
    public static func parse(_ bytes: some Sequence<UInt8>) -> JSONValue? {
        try? JSONDecoder().decode(JSONValue.self, from: Data(bytes))
    }

    public subscript(key: String) -> JSONValue? {
        if case let .object(object) = self { return object[key] }
        return nil
    }

    public subscript(index: Int) -> JSONValue? {
        if case let .array(array) = self, array.indices.contains(index) { return array[index] }
        return nil
    }

    public var stringValue: String? { if case let .string(s) = self { s } else { nil } }
    public var numberValue: Double? { if case let .number(n) = self { n } else { nil } }
    public var intValue: Int? { numberValue.flatMap { $0 == $0.rounded() ? Int($0) : nil } }
    public var uint64Value: UInt64? { numberValue.flatMap { $0 >= 0 && $0 == $0.rounded() ? UInt64($0) : nil } }
    public var boolValue: Bool? { if case let .bool(b) = self { b } else { nil } }
    public var arrayValue: [JSONValue]? { if case let .array(a) = self { a } else { nil } }
    public var objectValue: [String: JSONValue]? { if case let .object(o) = self { o } else { nil } }
    /// The strings of an array of strings.
    public var strings: [String]? { arrayValue?.compactMap(\.stringValue) }

    public var description: String {
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
