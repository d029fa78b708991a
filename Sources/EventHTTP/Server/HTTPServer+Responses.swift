internal import CLibevent
import HTTPTypes
import Foundation

/// The response writer: the response filters, then the status, fields and body handed to
/// evhttp for one request.
extension HTTPServer {
    func applyResponseFilters(_ request: Request, _ response: inout Response) {
        router.finish(request, &response)
        if isDraining || Self.leavesBodyUnread(request) { response.headers[.connection] = "close" }
    }

    /// libevent reads a request body only for POST, PUT and PATCH (2.1.12 also OPTIONS). A body
    /// announced on any other method stays in the input buffer and would be parsed as the next
    /// request on the connection (a desync: `HEAD / ...Content-Length: 17` + 17 bytes turns
    /// into a bogus request line). Such a request is answered and the connection closed.
    private static let transferEncodingLength = HTTPField.Name.transferEncoding.canonicalName.utf8.count
    private static let contentLengthLength = HTTPField.Name.contentLength.canonicalName.utf8.count

    static func leavesBodyUnread(_ request: Request) -> Bool {
        // By slot: matching `.post, .put, …` compares the method's name with each in turn.
        if let slot = request.method.servedIndex, readsBody[slot] { return false }
        // Names are compared only when their lengths match (most fields' do not).
        var length: String?
        for field in request.headers {
            let name = field.name
            switch name.canonicalName.utf8.count {
            case transferEncodingLength where name == .transferEncoding: return true
            case contentLengthLength where length == nil && name == .contentLength: length = field.value
            default: continue
            }
        }
        guard let length else { return false }
        return length.trimmingCharacters(in: .whitespaces) != "0"
    }

    /// By served-method slot: whether libevent reads that method's body.
    private static let readsBody = HTTPRequest.Method.served.map { [.post, .put, .patch, .options].contains($0) }

    /// Hands a complete response to evhttp (which adds Date and, for bodies, Content-Length).
    func write(_ response: Response, to raw: RawRequest, method: HTTPRequest.Method) {
        let output = evhttp_request_get_output_headers(raw)
        var hasDate = false
        for field in response.headers {
            Self.add(field, to: output)
            if !hasDate, field.name == .date { hasDate = true }
        }
        for field in response.addedFields {
            Self.add(field, to: output)
            if !hasDate, field.name == .date { hasDate = true }
        }
        // evhttp formats Date for every response; the same text serves a whole second.
        if !hasDate {
            responseDate.withCString { date in
                syscall("evhttp_add_header", tolerating: "the date is ours; only out of memory") { evhttp_add_header(output, "Date", date) }
            }
        }
        let status = response.status
        let hasNoBody = status.forbidsBody
        if method == .head {
            if !hasNoBody && !response.headers.contains(.contentLength) {
                syscall("evhttp_add_header", tolerating: "the length is ours; only out of memory") {
                    evhttp_add_header(output, "Content-Length", String(response.body.count))
                }
            }
            status.phrase.withCString { evhttp_send_reply(raw, Int32(status.code), $0, nil) }
            return
        }
        if !hasNoBody && !response.body.isEmpty {
            response.body.withUnsafeBytes { body in
                syscall("evbuffer_add", tolerating: "out of memory: the answer goes out short and the client sees it") {
                    evbuffer_add(scratch, body.baseAddress, body.count)
                }
            }
            status.phrase.withCString { evhttp_send_reply(raw, Int32(status.code), $0, scratch) }
            evbuffer_drain(scratch, evbuffer_get_length(scratch))
        } else {
            status.phrase.withCString { evhttp_send_reply(raw, Int32(status.code), $0, nil) }
        }
    }

    private static func add(_ field: HTTPField, to output: UnsafeMutablePointer<evkeyvalq>?) {
        // evhttp_add_header refuses CR/LF in values, so no header can be injected. Explicit
        // withCString: the implicit String-to-pointer conversion allocates a copy per argument
        // (utf8CString), several per response.
        field.name.rawName.withCString { name in
            field.value.withCString { value in
                syscall("evhttp_add_header", tolerating: "a value with CR or LF is refused, so none can split the head") {
                    evhttp_add_header(output, name, value)
                }
            }
        }
    }

    /// `Date:` text for the current second, formatted once per second.
    private var responseDate: String {
        let now = time(nil)
        if now != dateCache.second {
            var text = [CChar](repeating: 0, count: 32)
            tidings_http_date(&text)
            dateCache = (now, String(cString: text))
        }
        return dateCache.text
    }
}
