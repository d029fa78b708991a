/// Any JSON value, decoded without a schema so that errors can name the key and the problem
/// instead of failing the whole document (used by schema files and merge patches).
enum LooseJSON: Decodable, Sendable {
    case null
    case scalar(PreferenceValue)
    case array([LooseJSON])
    case object([String: LooseJSON])

    init(from decoder: any Decoder) throws {
        let single = try decoder.singleValueContainer()
        if single.decodeNil() {
            self = .null
        } else if let v = try? single.decode(PreferenceValue.self) {
            self = .scalar(v)
        } else if let a = try? single.decode([LooseJSON].self) {
            self = .array(a)
        } else {
            self = .object(try single.decode([String: LooseJSON].self))
        }
    }

    var kindName: String {
        switch self {
        case .null: "null"
        case let .scalar(v): v.type.rawValue
        case .array: "array"
        case .object: "object"
        }
    }
}
