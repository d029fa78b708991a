import Observing

/// A JSON object written member by member, for answers whose exact text matters: OFREP's, because
/// OpenFeature clients tell an integer from a float by the JSON text alone (Python's
/// `isinstance(v, float)`, Go's `json.Number`), so an `integer` preference is written `5` and a
/// `number` one always with a fraction, `2.0`, where `JSONEncoder` would write `2`; and the
/// preference schema's. Members keep the order they are added in.
struct JSONObjectWriter {
    private var text = "{"
    private var first = true

    /// A member whose value is already JSON text.
    mutating func raw(_ name: String, _ json: String) {
        text += (first ? "" : ",") + EventFrame.json(name) + ":" + json
        first = false
    }

    mutating func string(_ name: String, _ value: String) { raw(name, EventFrame.json(value)) }
    mutating func integer(_ name: String, _ value: UInt64) { raw(name, String(value)) }

    /// The finished object.
    var json: String { text + "}" }
    var bytes: [UInt8] { Array(json.utf8) }

    /// A preference value as OpenFeature clients read its type.
    static func value(_ value: PreferenceValue) -> String {
        switch value {
        case let .boolean(b): return b ? "true" : "false"
        case let .integer(i): return String(i)
        case let .number(d): return number(d)
        case let .string(s): return EventFrame.json(s)
        case let .object(o): return object(o)
        }
    }

    /// An object value, members in their (sorted) order, each written as above.
    static func object(_ object: PreferenceObject) -> String {
        var writer = JSONObjectWriter()
        for member in object.members { writer.raw(member.name, value(member.value)) }
        return writer.json
    }

    /// A finite double that always reads back as a float: `2.0`, `2.5`, `1e+16`. Swift's
    /// `description` is the shortest text that round-trips; it has a `.` or an exponent except
    /// for whole numbers below 2^53-ish, which get `.0`. (Values are finite: the declarations
    /// refuse NaN and infinities.)
    static func number(_ d: Double) -> String {
        guard d.isFinite else { return "0.0" }
        let text = d.description
        if text.contains(".") || text.contains("e") || text.contains("E") { return text }
        return text + ".0"
    }
}
