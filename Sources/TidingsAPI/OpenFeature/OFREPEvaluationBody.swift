/// The full reading of an OFREP evaluation body: a JSON object whose `context`, when present, is
/// an object whose `targetingKey`, when present, is a string. Only that shape is decoded; the
/// context's members are never turned into values. `OFREPRequest` decodes it for the bodies the
/// one-pass check (``OFREPBodyScan``) leaves to it, and the `body` fuzz target holds that check to
/// this reading (it compiles this file on its own: keep it free of the module's other types).
struct OFREPEvaluationBody: Decodable {
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
