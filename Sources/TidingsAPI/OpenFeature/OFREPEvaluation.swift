import HTTPTypes
import EventHTTP
import Observing

/// The evaluation answers of OFREP 0.3.0 for declared preferences: a preference is a flag with a
/// static value, so every evaluation has reason `STATIC` and variant `default` (the value is the
/// declared default) or `set` (it was changed); the evaluation context never changes the value.
@MainActor
enum OFREPEvaluation {
    /// One flag's success object: `{"key","value","reason","variant","metadata":{"revision","type"}}`.
    static func success(_ key: String, state: TidingsState) -> String? {
        guard let declaration = state.preferences.declaration(forKey: key),
              let value = state.preferences.value(forKey: key) else { return nil }
        var metadata = JSONObjectWriter()
        metadata.integer("revision", state.revision(ofPreference: key))
        metadata.string("type", declaration.type.rawValue)
        var object = JSONObjectWriter()
        object.string("key", key)
        object.raw("value", JSONObjectWriter.value(value))
        object.string("reason", "STATIC")
        object.string("variant", value == declaration.defaultValue ? "default" : "set")
        object.raw("metadata", metadata.json)
        return object.json
    }

    /// `404 {"key","errorCode":"FLAG_NOT_FOUND","errorDetails"}`.
    static func flagNotFound(_ key: String) -> Response {
        var object = JSONObjectWriter()
        object.string("key", key)
        object.string("errorCode", "FLAG_NOT_FOUND")
        object.string("errorDetails", "There is no preference '\(key)'.")
        return .json(bytes: object.bytes, status: .notFound)
    }

    /// `400 {"key"?,"errorCode":"PARSE_ERROR","errorDetails"}` (the bulk answer has no key).
    static func parseError(_ detail: String, key: String?) -> Response {
        var object = JSONObjectWriter()
        if let key { object.string("key", key) }
        object.string("errorCode", "PARSE_ERROR")
        object.string("errorDetails", detail)
        return .json(bytes: object.bytes, status: .badRequest)
    }

    /// The bulk ETag: the revision of the latest preference change (`"0"` when none was ever
    /// made), quoted like every other ETag of the API.
    static func latestPreferenceRevision(_ state: TidingsState) -> UInt64 {
        state.latestPreferenceRevision
    }
}
