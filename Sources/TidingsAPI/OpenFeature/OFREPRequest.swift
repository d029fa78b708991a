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
    private static let shapeHint = " An evaluation request is a JSON object {\"context\": {...}}."

    /// What the check decided at once.
    enum Verdict {
        case evaluation
        /// Not an evaluation request: why (for `PARSE_ERROR`).
        case notEvaluation(String)
    }

    /// Checks `request`'s body at once when it can be decided here: the content type (a type that
    /// cannot carry JSON is the API's usual 415 problem, thrown), then the body — a body already
    /// checked and found an evaluation request (``OFREPCheckedBodies``), else the one-pass scan.
    /// nil: the full reading decides (``check(_:_:then:)``).
    @MainActor
    static func verdictAtOnce(_ request: Request) throws(ProblemDetails) -> Verdict? {
        try request.checkJSONContentType()
        let body = request.body
        // The bodies providers send are decided in one pass without building a value; the rest
        // (large, non-ASCII, escaped names, ...) take the full reading.
        guard body.count <= Request.offLoopBodyThreshold else { return nil }
        if OFREPCheckedBodies.contains(body) { return .evaluation }
        switch OFREPBodyScan.verdict(body) {
        case .evaluation:
            OFREPCheckedBodies.remember(body)
            return .evaluation
        case let .notEvaluation(problem): return .notEvaluation(problem)
        // Why a body is not JSON is the full reading's to say: it looks at UTF-8 (and NUL
        // bytes) before syntax, so a body broken both ways is "not UTF-8 JSON" there, and
        // the scan, which stops at the first syntax error, would have said otherwise.
        case .malformed, .unsure: return nil
        }
    }

    /// Checks `request`'s body (off the loop when it is large), then calls `then` on the loop
    /// with nil when it is an evaluation request, else why not (for `PARSE_ERROR`). The body goes
    /// through the API's one JSON decoder (same rules for what is JSON) unless ``verdictAtOnce(_:)``
    /// decides it; a Content-Type that cannot carry JSON is the API's usual 415 problem (thrown at once).
    @MainActor
    static func check(_ request: Request, _ responder: Responder, then: @escaping @MainActor (String?) -> Void) throws(ProblemDetails) {
        switch try verdictAtOnce(request) {
        case .evaluation?: return then(nil)
        case let .notEvaluation(problem)?: return then(problem)
        case nil: fullReading(request, responder, then: then)
        }
    }

    /// The full reading of the body (off the loop when it is large), then `then` on the loop.
    @MainActor
    static func fullReading(_ request: Request, _ responder: Responder, then: @escaping @MainActor (String?) -> Void) {
        request.process(responder, { () throws(ProblemDetails) -> String? in
            do throws(ProblemDetails) {
                return try request.decode(OFREPEvaluationBody.self).problem
            } catch {
                if error.status == .unsupportedMediaType { throw error }
                return error.detail + shapeHint
            }
        }, then: then)
    }
}

/// The optional query parameters the published OFREP spec declares for the bulk evaluation
/// (ADR-0008 re-fetch metadata): `flagConfigEtag` (any string) and `flagConfigLastModified` (an
/// integer ≥ 0, Unix seconds, or an RFC 3339 date-time). Both are accepted and ignored (the
/// answer is always current); a malformed `flagConfigLastModified` is a client bug worth saying,
/// so it is OFREP's `PARSE_ERROR` (400), like any other malformed query.
enum OFREPQuery {
    static let lastModified = "flagConfigLastModified"

    /// nil when every `flagConfigLastModified` given is well-formed, else why not.
    static func problem(_ request: Request) -> String? {
        for item in request.queryItems where item.name == lastModified {
            if !isUnixSeconds(item.value) && !isDateTime(item.value) {
                let shown = item.value.count > 64 ? String(item.value.prefix(64)) + "…" : item.value
                return "'\(lastModified)' must be Unix seconds (an integer ≥ 0) or an RFC 3339 date-time, not '\(shown)'."
            }
        }
        return nil
    }

    static func isUnixSeconds(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.allSatisfy { $0 >= 48 && $0 <= 57 }
    }

    /// RFC 3339 `date-time`: `YYYY-MM-DDThh:mm:ss[.frac](Z|±hh:mm)`, `T` and `Z` in either case,
    /// every field in range (a day that exists in its month; second 60 for a leap second).
    static func isDateTime(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        func number(_ at: Int, _ length: Int) -> Int? {
            guard at + length <= bytes.count else { return nil }
            var value = 0
            for byte in bytes[at..<at + length] {
                guard byte >= 48 && byte <= 57 else { return nil }
                value = value * 10 + Int(byte - 48)
            }
            return value
        }
        func byte(_ at: Int, _ allowed: String) -> Bool { at < bytes.count && allowed.utf8.contains(bytes[at]) }
        guard let year = number(0, 4), byte(4, "-"), let month = number(5, 2), byte(7, "-"), let day = number(8, 2),
              byte(10, "Tt"), let hour = number(11, 2), byte(13, ":"), let minute = number(14, 2), byte(16, ":"),
              let second = number(17, 2) else { return false }
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        let days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        guard (1...12).contains(month), day >= 1, day <= days[month - 1], hour < 24, minute < 60, second <= 60 else { return false }
        var at = 19
        if byte(at, ".") {
            at += 1
            let start = at
            while at < bytes.count, bytes[at] >= 48, bytes[at] <= 57 { at += 1 }
            guard at > start else { return false }
        }
        if byte(at, "Zz") { return at + 1 == bytes.count }
        guard byte(at, "+-"), let offsetHour = number(at + 1, 2), byte(at + 3, ":"), let offsetMinute = number(at + 4, 2),
              offsetHour < 24, offsetMinute < 60 else { return false }
        return at + 6 == bytes.count
    }
}
