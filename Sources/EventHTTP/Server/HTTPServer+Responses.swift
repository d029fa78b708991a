internal import CLibevent
import HTTPTypes
import Foundation

/// The response writer: the response filters, then the status line, fields and body written
/// into the connection's output.
extension HTTPServer {
    func applyResponseFilters(_ request: Request, _ response: inout Response) {
        router.finish(request, &response)
        if isDraining || Self.leavesBodyUnread(request) { response.headers[.connection] = "close" }
    }

    /// A body on a method that carries none (GET, HEAD, DELETE, ...) is read (or, for HEAD,
    /// dropped) and never parsed as a request; still, such a request is answered and the
    /// connection closed: a proxy in front of the server may have read its framing differently.
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

    /// By served-method slot: whether the method carries a body.
    private static let readsBody = HTTPRequest.Method.served.map { [.post, .put, .patch, .options].contains($0) }

    /// Writes a complete response into `connection`'s output: the status line in the request's
    /// version, the fields (with `Date`, and `Content-Length` wherever a body may be), the body
    /// unless the request was HEAD or the status forbids one. The connection closes once it is
    /// written when the response says `Connection: close` or the client does not keep alive.
    func write(_ response: Response, on connection: Connection, method: HTTPRequest.Method, head: RequestHead) {
        guard let bufferevent = connection.bufferevent, connection.isOpen,
              let output = bufferevent_get_output(bufferevent) else { return }
        let status = response.status
        let keepAlive = head.keepsAlive
        var closes = !keepAlive
        var text = AnswerText(scratch: answerScratch)
        text.append(head.minorVersion == 0 ? Self.version10 : Self.version11)
        Self.appendStatus(status, to: &text)
        var hasDate = false, hasLength = false, hasConnection = false
        func append(_ field: HTTPField) {
            // swift-http-types keeps CR, LF and NUL out of values (turned into spaces) and names
            // are tokens: no field can split the head.
            let name = field.name
            switch name.canonicalName.utf8.count {
            case 4 where name == .date: hasDate = true
            case 10 where name == .connection:
                hasConnection = true
                if field.value.lowercased().contains("close") { closes = true }
            case 14 where name == .contentLength: hasLength = true
            default: break
            }
            text.append(name.rawName)
            text.append(colon); text.append(space)
            text.append(field.value)
            text.append(cr); text.append(lf)
        }
        for field in response.headers { append(field) }
        for field in response.addedFields { append(field) }
        if !hasDate {
            text.append(Self.dateName)
            text.append(responseDate)
            text.append(cr); text.append(lf)
        }
        let bodyAllowed = !status.forbidsBody
        if bodyAllowed, !hasLength {
            text.append(Self.lengthName)
            text.append(String(response.body.count))
            text.append(cr); text.append(lf)
        }
        if !hasConnection {
            if closes {
                text.append(Self.closeField)
            } else if head.minorVersion == 0 {
                text.append(Self.keepAliveField)
            }
        }
        text.append(cr); text.append(lf)
        let sendsBody = bodyAllowed && method != .head && !response.body.isEmpty
        if sendsBody, text.count + response.body.count <= AnswerText.capacity {
            // One piece for a small answer.
            text.append(response.body)
            text.withBytes { send($0, on: connection, output: output) }
        } else {
            text.withBytes { send($0, on: connection, output: output) }
            if sendsBody { response.body.withUnsafeBytes { send($0, on: connection, output: output) } }
        }
        if closes { connection.closeAfterWriting() }
    }

    /// Straight to the socket when nothing waits in the output (the usual keep-alive answer):
    /// no output buffer and no write event to arm and disarm (two `epoll_ctl` per request).
    /// What the kernel does not take now — all of it, when something already waits — goes to
    /// the output, in order, and the bufferevent writes it when the socket is writable.
    private func send(_ bytes: UnsafeRawBufferPointer, on connection: Connection, output: OpaquePointer) {
        guard let base = bytes.baseAddress else { return }
        var sent = 0
        if evbuffer_get_length(output) == 0 {
            // EAGAIN: the send buffer is full; any other error (the client left) shows up
            // again when the bufferevent writes what is left, and closes the connection.
            sent = max(0, Foundation.send(connection.fd, base, bytes.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)))
        }
        guard sent < bytes.count else { return }
        syscall("evbuffer_add", tolerating: "out of memory: the answer goes out short and the client sees it",
                result: evbuffer_add(output, base + sent, bytes.count - sent))
    }

    private static func appendStatus(_ status: HTTPResponse.Status, to text: inout AnswerText) {
        let code = status.code
        text.append(UInt8(ascii: "0") + UInt8(code / 100 % 10))
        text.append(UInt8(ascii: "0") + UInt8(code / 10 % 10))
        text.append(UInt8(ascii: "0") + UInt8(code % 10))
        text.append(space)
        text.append(status.phrase)
        text.append(cr); text.append(lf)
    }

    private static let version10 = Array("HTTP/1.0 ".utf8)
    private static let version11 = Array("HTTP/1.1 ".utf8)
    private static let dateName = Array("Date: ".utf8)
    private static let lengthName = Array("Content-Length: ".utf8)
    private static let closeField = Array("Connection: close\r\n".utf8)
    private static let keepAliveField = Array("Connection: keep-alive\r\n".utf8)

    /// `Date:` text for the current second, formatted once per second.
    private var responseDate: String {
        let now = time(nil)
        if now != dateCache.second {
            dateCache = (now, SocketCalls.httpDate())
        }
        return dateCache.text
    }
}

private let cr: UInt8 = 13
private let lf: UInt8 = 10
private let space: UInt8 = 32
private let colon = UInt8(ascii: ":")
