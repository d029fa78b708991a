import EventHTTP
import Observing
import HTTPTypes

/// What makes a body an OFREP evaluation request: a JSON object whose `context`, when present,
/// is an object. Everything inside the context is accepted and ignored (preferences are
/// settings, not targeted flags), so a missing `targetingKey` is fine; so is a missing `context`,
/// which is what the Python provider sends without an evaluation context (`{}`).
enum OFREPRequest {
    private struct Body: Decodable {
        /// nil when absent; `.null` when sent as `null` (which is not a context).
        let context: JSONValue?

        private enum CodingKeys: String, CodingKey { case context }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            context = container.contains(.context) ? try container.decode(JSONValue.self, forKey: .context) : nil
        }
    }

    /// nil when `request` is an evaluation request, else why not (for `PARSE_ERROR`). The body
    /// goes through the API's one JSON decoder (same rules for what is JSON); a Content-Type that
    /// cannot carry JSON is the API's usual 415 problem (thrown).
    static func problem(_ request: Request) throws(ProblemDetails) -> String? {
        try request.checkJSONContentType()
        let body: Body
        do {
            body = try request.decode(Body.self)
        } catch {
            if error.status == .unsupportedMediaType { throw error }
            return error.detail + " An evaluation request is a JSON object {\"context\": {...}}."
        }
        switch body.context {
        case nil:
            return nil
        case let .object(context)?:
            // OpenFeature's targeting key is a string; another kind means a client bug worth saying.
            if let targetingKey = context["targetingKey"], case .string = targetingKey { return nil }
            return context["targetingKey"] == nil ? nil : "'context.targetingKey' must be a string."
        default:
            return "'context' must be a JSON object."
        }
    }
}
