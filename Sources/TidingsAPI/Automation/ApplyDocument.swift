import EventHTTP
import Foundation
import HTTPTypes
import Observing
import TidingsModel

/// The body of `POST /apply` (what `GET /export` writes): `{"preferences"?: {key: value},
/// "things"?: [...], "revision"?: ignored}`. Any other member is refused (422): a misspelt
/// `preferences` applied with `?prune=true` would otherwise reset every key. `revision` is
/// ignored but must still be what the contract's schema allows (a whole number, at least 0):
/// anything else is refused (422 naming it), as a schedule's `rollback` is.
///
/// Read off the loop (``read(_:textCase:)``): JSON, or YAML turned into JSON first, then the
/// thing list normalised and checked, so the loop only checks values against declarations.
struct ApplyDocument: Sendable {
    /// The preferences named (a `null` value resets its key).
    var preferences: PreferencePatch
    /// The new list, normalised and checked (nil: leave the list alone).
    var things: [String]?
    /// Why the list was refused (reported with every bad key, nothing written).
    var thingsProblem: ThingError?

    init(preferences: PreferencePatch = PreferencePatch([:]), things: [String]? = nil, thingsProblem: ThingError? = nil) {
        self.preferences = preferences
        self.things = things
        self.thingsProblem = thingsProblem
    }

    /// The members as sent.
    struct Body: Decodable {
        var preferences: PreferencePatch?
        var things: [String]?
        /// The first member that is none of these (refused after decoding, with its name).
        var unknown: String?
        /// Whether `revision` is present and not a whole number from 0 (refused after decoding).
        var badRevision = false
        /// The first member that is `null` (refused after decoding, with its name): the contract's
        /// schema gives none of them a null, and read as "absent" a `"things": null` silently
        /// left the list alone where its writer may have meant to empty it.
        var null: String?

        private struct Member: CodingKey {
            var stringValue: String
            var intValue: Int? { nil }
            init(stringValue: String) { self.stringValue = stringValue }
            init?(intValue: Int) { nil }
        }

        static let members: Set<String> = ["preferences", "things", "revision"]

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: Member.self)
            unknown = container.allKeys.map(\.stringValue).sorted().first { !Self.members.contains($0) }
            null = ["preferences", "things", "revision"].first { name in
                let key = Member(stringValue: name)
                return container.contains(key) && (try? container.decodeNil(forKey: key)) == true
            }
            guard null == nil else { return }
            preferences = try container.decodeIfPresent(PreferencePatch.self, forKey: Member(stringValue: "preferences"))
            things = try container.decodeIfPresent([String].self, forKey: Member(stringValue: "things"))
            // Decoded only to check it (the value is ignored).
            let revision = Member(stringValue: "revision")
            if container.contains(revision) {
                badRevision = (try? container.decode(UInt64.self, forKey: revision)) == nil
            }
        }
    }

    /// The document in `request`'s body: YAML for a YAML Content-Type, else JSON by the API's
    /// rules (415 for other types). `declared`: how many keys a document may name at most.
    static func read(_ request: Request, textCase: TextCase, declared: Int) async -> Result<ApplyDocument, ProblemDetails> {
        let yaml = MediaTypes.isYAML(request.headers[.contentType])
        let work: @Sendable () -> Result<ApplyDocument, ProblemDetails> = {
            do throws(ProblemDetails) {
                var json = request
                if yaml {
                    guard !request.body.isEmpty else {
                        throw ProblemDetails(status: .badRequest, detail: "The request body is empty; a YAML document was expected.")
                    }
                    do throws(YAMLRules.Refusal) {
                        let bytes = try YAMLDocumentReader.json(fromYAML: request.body)
                        json = Request(method: request.method, target: request.target,
                                       headers: [.contentType: "application/json"], body: bytes)
                    } catch {
                        throw ProblemDetails(status: .badRequest, detail: error.detail)
                    }
                }
                let body = try json.decode(Body.self)
                return .success(try document(body, textCase: textCase, declared: declared))
            } catch {
                return .failure(error)
            }
        }
        // YAML is composed recursively by Yams: on a thread with a stack for the nesting allowed.
        return await withCheckedContinuation { continuation in
            let thread = Thread { continuation.resume(returning: work()) }
            thread.stackSize = YAMLDocumentReader.stackBytes
            thread.name = "apply-document"
            thread.start()
        }
    }

    private static func document(_ body: Body, textCase: TextCase, declared: Int) throws(ProblemDetails) -> ApplyDocument {
        if let unknown = body.unknown {
            let shown = unknown.unicodeScalars.count > 64 ? String(String.UnicodeScalarView(unknown.unicodeScalars.prefix(64))) + "…" : unknown
            throw Problems.invalid("'\(shown)' is not a member of a configuration document (preferences, things, revision).",
                                   errors: [.init(key: shown, detail: "unknown member")])
        }
        if let null = body.null {
            throw Problems.invalid("'\(null)' is null: leave a member out to leave what it names alone\(null == "things" ? ", or give [] to empty the list" : "").",
                                   errors: [.init(key: null, detail: "must not be null")])
        }
        if body.badRevision {
            throw Problems.invalid("'revision' must be a whole number from 0 (it is ignored, but a document's revision is never negative).",
                                   errors: [.init(key: "revision", detail: "must be a whole number, at least 0")])
        }
        let preferences = body.preferences ?? PreferencePatch([:])
        if preferences.entries.count > declared {
            throw Problems.invalid("A document names at most \(declared) preferences (one per declared key); this one names \(preferences.entries.count).")
        }
        var document = ApplyDocument(preferences: preferences)
        if let raws = body.things {
            do throws(ThingError) {
                document.things = try ThingRules.validateList(raws, textCase: textCase)
            } catch {
                document.thingsProblem = error
            }
        }
        return document
    }
}
