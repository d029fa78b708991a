public import Foundation

/// A configuration document's format on the wire.
public enum DocumentFormat: Sendable, Equatable {
    case json, yaml

    var mediaType: String { self == .yaml ? "application/yaml" : "application/json" }
}

extension TidingsClient {
    /// `GET /export` (or `/environments/{env}/export`): the configuration as a document, in
    /// `format`, as of `asOf` (a revision or an RFC 3339 time) when given. The bytes as served.
    public func export(format: DocumentFormat = .json, asOf: String? = nil,
                       environment: String? = nil) async throws(TidingsClientError) -> Data {
        let query = asOf.map { [("asOf", $0)] } ?? []
        return try await transport.expectSuccess("GET", Self.scoped(environment, ["export"]), query: query,
                                                 headers: ["Accept": format.mediaType]).body
    }

    /// `POST /apply`: makes the configuration match `document` (JSON or YAML) as one write;
    /// `dryRun`: only says what would change; `prune`: keys the document does not name go back
    /// to their defaults; `ifRevision`: only if the server is still at that global revision.
    /// Returns the server's JSON answer (the records made, or the dry run's changes).
    public func apply(_ document: Data, format: DocumentFormat = .json, dryRun: Bool = false, prune: Bool = false,
                      environment: String? = nil, reason: String? = nil,
                      ifRevision: UInt64? = nil) async throws(TidingsClientError) -> Data {
        var query: [(String, String)] = []
        if dryRun { query.append(("dryRun", "true")) }
        if prune { query.append(("prune", "true")) }
        var headers: [String: String] = [:]
        if let reason { headers["Tidings-Reason"] = reason }
        if let ifRevision { headers["If-Match"] = "\"\(ifRevision)\"" }
        return try await transport.expectSuccess("POST", Self.scoped(environment, ["apply"]), query: query, headers: headers,
                                                 json: document, contentType: format.mediaType).body
    }

    /// `segments` under `/environments/{env}` when an environment is named.
    static func scoped(_ environment: String?, _ segments: [String]) -> [String] {
        guard let environment, environment != "default" else { return segments }
        return ["environments", environment] + segments
    }
}
