/// The value of an `object` preference: named members, each a ``PreferenceValue`` (a scalar or
/// an object again), kept sorted by the UTF-8 bytes of their names, so that one object has one
/// order (its encodings, hashes and comparisons agree on every instance).
///
/// Names compare by their bytes, as ``PreferenceValue``'s strings do (JSON's equality, linear).
///
/// ```swift
/// let theme = PreferenceObject(["color": .string("red"), "size": .integer(3)])
/// theme["color"] // .string("red")
/// ```
public struct PreferenceObject: Sendable, Hashable, Codable, CustomStringConvertible {
    /// One named member.
    public struct Member: Sendable, Hashable {
        public let name: String
        public let value: PreferenceValue

        public init(name: String, value: PreferenceValue) {
            self.name = name
            self.value = value
        }

        public static func == (lhs: Member, rhs: Member) -> Bool {
            lhs.name.hasSameUTF8(as: rhs.name) && lhs.value == rhs.value
        }

        public func hash(into hasher: inout Hasher) {
            hasher.combine(PreferenceValue.string(name))
            hasher.combine(value)
        }
    }

    /// The members, sorted by name (UTF-8 bytes), names unique.
    public let members: [Member]

    /// An object of `values` (a dictionary: names are unique).
    public init(_ values: [String: PreferenceValue] = [:]) {
        self.init(sorting: values.map { Member(name: $0.key, value: $0.value) })
    }

    /// Members already unique by name, in any order.
    init(sorting members: [Member]) {
        self.members = members.sorted { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
    }

    /// The member named `name`, or nil.
    public subscript(name: String) -> PreferenceValue? {
        members.first { $0.name.hasSameUTF8(as: name) }?.value
    }

    public var isEmpty: Bool { members.isEmpty }

    /// Compact JSON-like text for messages: `{"color": "red", "size": 3}`.
    public var description: String {
        "{" + members.map { "\"\($0.name)\": \($0.value)" }.joined(separator: ", ") + "}"
    }

    private struct Name: CodingKey {
        let stringValue: String
        init(stringValue: String) { self.stringValue = stringValue }
        var intValue: Int? { nil }
        init?(intValue: Int) { nil }
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Name.self)
        var members: [Member] = []
        members.reserveCapacity(container.allKeys.count)
        for key in container.allKeys {
            let value = try PreferenceValue(decodingFrom: container.superDecoder(forKey: key))
            members.append(Member(name: key.stringValue, value: value))
        }
        self.init(sorting: members)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Name.self)
        for member in members { try container.encode(member.value, forKey: Name(stringValue: member.name)) }
    }
}

extension PreferenceObject {
    /// The bytes this object takes as compact JSON, counting every escape at its longest
    /// (`\u0000`, 6 bytes), so never less than the text the server writes; the count stops once
    /// it passes `limit` (a caller only asks whether it fits).
    func jsonByteCount(limit: Int) -> Int {
        var count = 2 + max(members.count - 1, 0)  // braces, commas
        for member in members {
            count += Self.stringByteCount(member.name) + 1
            switch member.value {
            case let .boolean(b): count += b ? 4 : 5
            case let .integer(i): count += String(i).utf8.count
            case let .number(d): count += d.description.utf8.count + 2
            case let .string(s): count += Self.stringByteCount(s)
            case let .object(o): count += o.jsonByteCount(limit: limit - count)
            }
            if count > limit { return count }
        }
        return count
    }

    private static func stringByteCount(_ s: String) -> Int {
        var count = 2
        for byte in s.utf8 {
            count += byte < 0x20 ? 6 : (byte == 0x22 || byte == 0x5C) ? 2 : 1
        }
        return count
    }
}
