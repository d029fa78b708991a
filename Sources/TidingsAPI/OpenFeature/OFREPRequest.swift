import EventHTTP
import HTTPTypes

/// What makes a body an OFREP evaluation request: a JSON object whose `context`, when present,
/// is an object. Everything inside the context is accepted and ignored (preferences are
/// settings, not targeted flags), so a missing `targetingKey` is fine; so is a missing `context`,
/// which is what the Python provider sends without an evaluation context (`{}`).
///
/// Only that shape is decoded: the context's members are never turned into values (a context of
/// 60,000 members cost the loop 0.2–0.5 s per evaluation when it was), and a large body is
/// checked off the loop (``Request/process(_:_:then:)``).
enum OFREPRequest {
    private struct Body: Decodable {
        /// Why the body is not an evaluation request, or nil when it is one.
        let problem: String?

        private enum CodingKeys: String, CodingKey { case context }
        private enum ContextKeys: String, CodingKey { case targetingKey }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            guard container.contains(.context) else {
                problem = nil
                return
            }
            guard try !container.decodeNil(forKey: .context),
                  let context = try? container.nestedContainer(keyedBy: ContextKeys.self, forKey: .context) else {
                problem = "'context' must be a JSON object."
                return
            }
            // OpenFeature's targeting key is a string; another kind means a client bug worth saying.
            if context.contains(.targetingKey), (try? context.decode(String.self, forKey: .targetingKey)) == nil {
                problem = "'context.targetingKey' must be a string."
            } else {
                problem = nil
            }
        }
    }

    /// Checks `request`'s body (off the loop when it is large), then calls `then` on the loop
    /// with nil when it is an evaluation request, else why not (for `PARSE_ERROR`). The body goes
    /// through the API's one JSON decoder (same rules for what is JSON); a Content-Type that
    /// cannot carry JSON is the API's usual 415 problem (thrown at once).
    @MainActor
    static func check(_ request: Request, _ responder: Responder, then: @escaping @MainActor (String?) -> Void) throws(ProblemDetails) {
        try request.checkJSONContentType()
        request.process(responder, { () throws(ProblemDetails) -> String? in
            do throws(ProblemDetails) {
                return try request.decode(Body.self).problem
            } catch {
                if error.status == .unsupportedMediaType { throw error }
                return error.detail + " An evaluation request is a JSON object {\"context\": {...}}."
            }
        }, then: then)
    }
}
