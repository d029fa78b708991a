/// The API's entity tags (openapi.yaml "Conventions"): strong, the opaque part a revision (or a fixed
/// version name), written quoted in `ETag` and matched against `If-Match` / `If-None-Match`.
struct EntityTag: Equatable, Sendable {
    /// The text between the quotes.
    let opaque: String

    init(_ opaque: String) { self.opaque = opaque }
    init(revision: UInt64) { opaque = String(revision) }

    /// The `ETag` header value: `"<opaque>"`.
    var header: String { "\"" + opaque + "\"" }

    /// Whether a conditional header's tags (``Request/entityTags(_:)``: quotes and `W/`
    /// removed) name this tag: `*` or the same opaque text.
    func isMatched(by tags: [String]) -> Bool { tags.contains("*") || tags.contains(opaque) }
}
