import HTTPTypes

/// The header names of the API that swift-http-types does not name (API.md).
extension HTTPField.Name {
    /// The global revision every answer reports.
    static let tidingsRevision = HTTPField.Name("Tidings-Revision")!
    /// OFREP's API-key scheme, taken like `Authorization: Bearer`.
    static let xAPIKey = HTTPField.Name("X-API-Key")!
    /// Where a reconnecting event stream resumes.
    static let lastEventID = HTTPField.Name("Last-Event-ID")!
    /// Where the next page of a paged answer is (RFC 8288), for `GET /history`.
    static let link = HTTPField.Name("Link")!
    /// What a browser may tell other sites about the page it came from.
    static let referrerPolicy = HTTPField.Name("Referrer-Policy")!
}
