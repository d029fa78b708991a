import HTTPTypes

/// HTTP as caches, proxies and browsers expect it: router-wide middleware that gives every
/// answer its validator, cache policy and content coding, and answers conditional requests.
///
/// On every answer, in this order:
/// 1. `Cache-Control: no-cache` on answers to reads that set none (a cache must revalidate a
///    live resource; routes that know better set their own).
/// 2. `Vary: Accept-Encoding` on every answer of a compressible type (JSON, YAML, HTML, text,
///    event streams), compressed or not, so a cache keys on the request's codings.
/// 3. The coding: br or gzip, whichever the request prefers (`AcceptEncoding`), when the body
///    is over `threshold` bytes (or identity was refused outright). Event streams are gzip
///    whenever the request accepts it: the head says so and the stream worker compresses (see
///    `HTTPServer.handOffStream`).
/// 4. The validator: a `200` to `GET`/`HEAD` without an `ETag` gets a strong one from its
///    content (`ContentTag`). A coded representation's tag is the identity tag with `-gzip` or
///    `-br` (`"5"` → `"5-gzip"`): two representations of one resource must not share a strong tag.
/// 5. Conditions (RFC 9110 §13.2.2) on `200` answers to reads with a tag: `If-Match` that fails
///    (strong comparison) → `412`; `If-None-Match` that matches (weak comparison, `*`, lists) →
///    `304`; without `If-None-Match`, `If-Modified-Since` not older than `Last-Modified` → `304`.
///    A `304` keeps the `200`'s fields (validator, `Cache-Control`, `Vary`) but no body.
/// 6. The body is compressed — once per representation: compressions of tagged answers are
///    kept by path, tag and media type (bounded; see ``representationKey(_:tag:contentType:)``),
///    so fixed answers (the contract, the page) and answers reused per revision are compressed
///    once, whatever query parameters a client adds, and `HEAD` gets the same `Content-Length`.
///
/// `HEAD` runs the `GET` handler, so it passes through the same steps and carries the same
/// fields. `conditionalPostRoutes` names routes whose `POST` is a read answered with a
/// validator (OFREP's bulk evaluation): `If-None-Match` applies to them too.
///
/// Loop-thread confined, like all middleware.
public final class HTTPCaching: Middleware {
    public let threshold: Int
    private let conditionalPostList: [(route: String, length: Int)]
    private var compressed: [String: [UInt8]] = [:]
    private var compressedBytes = 0
    private let cacheLimit: Int
    /// gzip and br answers sent, and how many had to be compressed (the rest came from the cache).
    public private(set) var gzipAnswers = 0
    public private(set) var brAnswers = 0
    public private(set) var compressions = 0

    static let varyField = HTTPField(name: .vary, value: "Accept-Encoding")
    static let noCacheField = HTTPField(name: .cacheControl, value: "no-cache")

    /// Whether event streams are compressed for requests that accept gzip.
    public var compressesEventStreams = false

    public init(threshold: Int = 1_024, conditionalPostRoutes: Set<String> = [], cacheLimit: Int = 32 << 20) {
        self.threshold = threshold
        conditionalPostList = conditionalPostRoutes.map { ($0, $0.utf8.count) }
        self.cacheLimit = cacheLimit
    }

    public func finish(_ request: Request, _ response: inout Response) {
        let method = request.method
        let isRead = method == .get || method == .head
        // One pass over the answer's fields (most are told apart by their name's length alone).
        let fields = ResponseFields(response.headers)
        let kind = Self.kind(of: fields.contentType)
        if kind == .eventStream { return finishEventStream(request, &response) }
        if isRead, !fields.hasCacheControl {
            (kind == .compressible ? appendNoCacheAndVary : appendNoCache).append(to: &response.addedFields)
        } else if kind == .compressible, response.status != .notModified {
            appendVary.append(to: &response.addedFields)
        }
        guard response.status != .notModified else { return }

        var coding: AcceptEncoding.Coding?
        if kind == .compressible, !response.status.forbidsBody, !fields.hasContentEncoding,
           let acceptEncoding = request.headers.first(.acceptEncoding) {
            let accepted = AcceptEncoding(acceptEncoding)
            if response.body.count > threshold || !accepted.acceptsIdentity { coding = accepted.preferred() }
        }

        let conditional = isRead || (method == .post && isConditionalPost(request.route))
        if conditional, response.status == .ok {
            var identityTag = fields.eTag
            if identityTag == nil, isRead {
                // Added after the route's fields: assigning into `headers` would copy them
                // (a cached answer's are shared) on every request.
                identityTag = ContentTag.of(response.body)
                if coding == nil { response.addedFields.append(HTTPField(name: .eTag, value: identityTag!)) }
            }
            if let identityTag {
                let tag = coding.map { EntityTagList.variant(of: identityTag, coding: $0) } ?? identityTag
                if coding != nil { response.headers[.eTag] = tag }
                if let answer = Self.evaluateConditions(request, response, etag: tag, isRead: isRead,
                                                        lastModified: fields.lastModified) {
                    response = answer
                    return
                }
                if let coding { compress(&response, coding, key: Self.representationKey(request, tag: tag, contentType: fields.contentType)) }
                return
            }
        }
        if let coding { compress(&response, coding, key: nil) }
    }

    private let appendNoCacheAndVary = AppendedFields([HTTPCaching.noCacheField, HTTPCaching.varyField])
    private let appendNoCache = AppendedFields([HTTPCaching.noCacheField])
    private let appendVary = AppendedFields([HTTPCaching.varyField])

    /// Whether `route` is one of `conditionalPostRoutes`: a handful, compared (a different
    /// length decides at once) rather than hashed, which cost ~400 instructions a POST.
    private func isConditionalPost(_ route: String?) -> Bool {
        guard let route else { return false }
        let length = route.utf8.count
        for (candidate, candidateLength) in conditionalPostList where candidateLength == length && candidate == route { return true }
        return false
    }

    /// What names one compressed representation: the path (not the target: a query parameter
    /// the route does not read must not make every request a new compression), its tag (which
    /// carries the coding, and either the revision the resource was read at or a hash of the
    /// content), and its media type (one tag may be served as JSON and as YAML).
    static func representationKey(_ request: Request, tag: String, contentType: String?) -> String {
        request.path + "\u{0}" + tag + "\u{0}" + (contentType ?? "")
    }

    /// The fields of an answer this middleware reads, found in one pass.
    struct ResponseFields {
        var contentType: String?
        var eTag: String?
        var lastModified: String?
        var hasCacheControl = false
        var hasContentEncoding = false

        private static let contentTypeLength = HTTPField.Name.contentType.canonicalName.utf8.count
        private static let eTagLength = HTTPField.Name.eTag.canonicalName.utf8.count
        private static let cacheControlLength = HTTPField.Name.cacheControl.canonicalName.utf8.count
        private static let contentEncodingLength = HTTPField.Name.contentEncoding.canonicalName.utf8.count

        init(_ headers: HTTPFields) {
            for field in headers {
                let name = field.name
                switch name.canonicalName.utf8.count {
                case Self.contentTypeLength where contentType == nil && name == .contentType: contentType = field.value
                case Self.eTagLength where eTag == nil && name == .eTag: eTag = field.value
                case Self.cacheControlLength:   // also Last-Modified's length
                    if name == .cacheControl { hasCacheControl = true } else if lastModified == nil, name == .lastModified { lastModified = field.value }
                case Self.contentEncodingLength where name == .contentEncoding: hasContentEncoding = true
                default: continue
                }
            }
        }
    }

    // MARK: Conditions

    /// The `304` or `412` the request's conditions call for, or nil to send `response`.
    static func evaluateConditions(_ request: Request, _ response: Response, etag: String, isRead: Bool,
                                   lastModified: String?) -> Response? {
        // Requests without conditions (nearly all) are told so in one pass over their fields.
        guard hasConditions(request.headers) else { return nil }
        if isRead, let ifMatch = request.headers.first(.ifMatch), !EntityTagList(ifMatch).matchesStrongly(etag) {
            var failed = Response.problem(status: .preconditionFailed,
                                          detail: "If-Match names no current representation of this resource (its ETag is \(etag)).")
            failed.headers[.eTag] = etag
            failed.addedFields = response.addedFields.filter { $0.name != .eTag }
            return failed
        }
        if let ifNoneMatch = request.headers.first(.ifNoneMatch) {
            return EntityTagList(ifNoneMatch).matchesWeakly(etag) ? notModified(response) : nil
        }
        if isRead, let since = request.headers.first(.ifModifiedSince).flatMap(HTTPDate.seconds),
           let modified = lastModified.flatMap(HTTPDate.seconds), modified <= since {
            return notModified(response)
        }
        return nil
    }

    /// Whether `headers` has `If-Match`, `If-None-Match` or `If-Modified-Since` (names of
    /// other lengths are passed over without a comparison).
    static func hasConditions(_ headers: HTTPFields) -> Bool {
        for field in headers {
            switch field.name.canonicalName.utf8.count {
            case 8, 13, 17:
                if field.name == .ifMatch || field.name == .ifNoneMatch || field.name == .ifModifiedSince { return true }
            default: continue
            }
        }
        return false
    }

    /// `304`: the answer's fields without its body and the fields that describe one.
    static func notModified(_ response: Response) -> Response {
        var answer = Response(status: .notModified, headers: response.headers)
        answer.headers[.contentType] = nil
        answer.headers[.contentLength] = nil
        answer.addedFields = response.addedFields
        return answer
    }

    // MARK: Coding

    private func compress(_ response: inout Response, _ coding: AcceptEncoding.Coding, key: String?) {
        if let key, let cached = compressed[key] {
            response.body = cached
        } else {
            let made = coding == .br ? Brotli.compress(response.body) : Gzip.compress(response.body)
            guard let body = made else { return }
            compressions += 1
            if let key, body.count <= cacheLimit / 8 {
                if compressedBytes + body.count > cacheLimit {
                    compressed.removeAll()
                    compressedBytes = 0
                }
                compressed[key] = body
                compressedBytes += body.count
            }
            response.body = body
        }
        if coding == .br { brAnswers += 1 } else { gzipAnswers += 1 }
        response.headers[.contentEncoding] = coding.rawValue
    }

    /// An event stream's head (or a refused stream's short answer): gzip when accepted at all.
    private func finishEventStream(_ request: Request, _ response: inout Response) {
        response.addedFields.append(Self.varyField)
        guard compressesEventStreams, AcceptEncoding(request.headers.first(.acceptEncoding)).prefersGzip else { return }
        response.headers[.contentEncoding] = "gzip"
        if !response.body.isEmpty, let body = Gzip.compress(response.body) { response.body = body }
    }

    // MARK: Types

    enum Kind { case compressible, eventStream, other }

    static func kind(of contentType: String?) -> Kind {
        guard let contentType else { return .other }
        // The API's own types, as its routes spell them, without lowercasing a copy.
        if contentType == "application/json" || contentType == "application/problem+json" { return .compressible }
        let type = contentType.lowercased()
        if type.hasPrefix("text/event-stream") { return .eventStream }
        if type.hasPrefix("text/") || type.hasPrefix("application/json") || type.hasPrefix("application/problem+json")
            || type.hasPrefix("application/yaml") || type.hasPrefix("application/javascript")
            || type.hasPrefix("image/svg+xml") { return .compressible }
        if let semicolon = type.firstIndex(of: ";") {
            return type[..<semicolon].hasSuffix("+json") ? .compressible : .other
        }
        return type.hasSuffix("+json") ? .compressible : .other
    }
}
