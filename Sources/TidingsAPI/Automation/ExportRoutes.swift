import EventHTTP
import Foundation
import HTTPTypes
import Observing
import TidingsStore
import Yams

/// `GET /export` (API.md "Changes as code"): the configuration as one document,
/// `{"preferences": {every declared key}, "things": [...], "revision": R}` — JSON, or YAML with
/// `Accept: application/yaml` — that `POST /apply` takes back. `?asOf=R` (a revision or an RFC
/// 3339 time) exports the state as of R, read from the history like `GET /preferences?asOf=`.
@MainActor
struct ExportRoutes {
    let state: TidingsState
    let store: any ChangeStore

    /// What an export holds, whatever it is written as.
    struct Document {
        let preferences: [(key: String, value: PreferenceValue)]
        let things: [String]
        let revision: UInt64

        var json: [UInt8] {
            var text = #"{"preferences":{"#
            text += preferences.map { EventFrame.json($0.key) + ":" + EventFrame.json($0.value) }.joined(separator: ",")
            text += #"},"things":"# + EventFrame.json(things) + #","revision":"# + String(revision) + "}"
            return Array(text.utf8)
        }

        var yaml: String? {
            YAMLDocumentWriter.text(YAMLDocumentWriter.mapping([
                ("preferences", YAMLDocumentWriter.mapping(preferences.map { ($0.key, YAMLDocumentWriter.value($0.value)) })),
                ("things", YAMLDocumentWriter.sequence(things.map(YAMLDocumentWriter.string))),
                ("revision", YAMLDocumentWriter.integer(revision)),
            ]))
        }
    }

    func register(on router: any RouteRegistrar) {
        router.get("/export") { request, responder in
            let yaml = MediaTypes.prefersYAML(request.headers[.accept])
            if let raw = request.query("asOf") {
                let point = try AsOfReads.point(raw)
                Task { @MainActor in
                    do {
                        let past = try await store.state(asOf: point, environment: state.environment)
                        responder.send(answer(document(past), yaml: yaml))
                    } catch {
                        responder.send(HistoryProblems.forStore(error))
                    }
                }
                return
            }
            responder.send(answer(currentDocument(), yaml: yaml))
        }
    }

    /// The state in memory now.
    func currentDocument() -> Document {
        Document(preferences: state.preferences.declarations.map { ($0.key, state.preferences.value(forKey: $0.key)!) },
                 things: state.things.things, revision: state.revision)
    }

    private func document(_ past: HistoricalState) -> Document {
        Document(preferences: state.preferences.declarations.map { declaration in
            // A stored value that no longer fits the declaration reads as the default (as-of reads do the same).
            let value = past.preferences[declaration.key]?.json.flatMap { TidingsState.preferenceValue(json: $0, declaration: declaration) }
            return (declaration.key, value ?? declaration.defaultValue)
        }, things: past.things, revision: past.revision)
    }

    private func answer(_ document: Document, yaml: Bool) -> Response {
        var headers: HTTPFields = [.vary: "Accept", .cacheControl: "no-cache", .tidingsRevision: String(document.revision)]
        guard yaml else { return .json(bytes: document.json, headers: headers) }
        guard let text = document.yaml else {
            return .problem(status: .internalServerError, detail: "The export could not be written as YAML; ask for JSON.")
        }
        headers[.contentType] = MediaTypes.yaml
        return Response(status: .ok, headers: headers, body: Array(text.utf8))
    }
}

/// The YAML media types a request may name, and the choice between YAML and JSON.
enum MediaTypes {
    /// What YAML answers carry (RFC 9512).
    static let yaml = "application/yaml"
    private static let yamlTypes: Set<String> = ["application/yaml", "application/x-yaml", "text/yaml", "text/x-yaml"]

    /// Whether a Content-Type names YAML.
    static func isYAML(_ contentType: String?) -> Bool {
        guard let contentType else { return false }
        let type = contentType.split(separator: ";", maxSplits: 1).first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
        return yamlTypes.contains(type)
    }

    /// Whether an `Accept` header asks for YAML rather than JSON: it names a YAML type with a
    /// non-zero quality at least as high as any JSON type it names.
    static func prefersYAML(_ accept: String?) -> Bool {
        guard let accept else { return false }
        var yamlQuality = 0.0, jsonQuality = 0.0
        for range in accept.split(separator: ",") {
            let parts = range.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            guard let type = parts.first else { continue }
            let quality = parts.dropFirst().compactMap { $0.hasPrefix("q=") ? Double($0.dropFirst(2)) : nil }.first ?? 1
            if yamlTypes.contains(type) { yamlQuality = max(yamlQuality, quality) }
            if type == "application/json" { jsonQuality = max(jsonQuality, quality) }
        }
        return yamlQuality > 0 && yamlQuality >= jsonQuality
    }
}
