internal import CLibevent
import Foundation
import HTTPTypes

/// A request head as the connection read it (from a clean head, or the strict parser's).
struct RequestHead {
    var method: HTTPRequest.Method
    var target: String
    var headers: HTTPFields
    /// 0 for HTTP/1.0, 1 for HTTP/1.1.
    var minorVersion: Int
    var expectsContinue = false

    /// Whether the client keeps the connection open after this request: HTTP/1.1 unless it
    /// says `Connection: close`, HTTP/1.0 only when it says `Connection: keep-alive`.
    var keepsAlive: Bool {
        var close = false, keepAlive = false
        // Names are compared only when their lengths match (a string comparison of two
        // different short names costs about 50 instructions; this runs for every answer).
        for field in headers where field.name.canonicalName.utf8.count == 10 && field.name == .connection {
            for token in field.value.split(separator: ",") {
                let word = token.withoutSpaces.lowercased()
                if word == "close" { close = true } else if word == "keep-alive" { keepAlive = true }
            }
        }
        return minorVersion >= 1 ? !close : keepAlive && !close
    }

    init(method: HTTPRequest.Method, target: String, headers: HTTPFields, minorVersion: Int, expectsContinue: Bool = false) {
        self.method = method
        self.target = RequestHead.originForm(target)
        self.headers = headers
        self.minorVersion = minorVersion
        self.expectsContinue = expectsContinue
    }

    /// The strict parser's head, with the one `Content-Length` its framing stands for (a
    /// chunked body's is added once it is whole: `withLength`).
    init(_ parsed: ParsedHead) {
        var headers = HTTPFields()
        headers.reserveCapacity(parsed.fields.count + 1)
        for field in parsed.fields {
            // The parser let only token names through.
            if let name = HTTPField.Name(field.name) { headers.append(HTTPField(name: name, value: field.value)) }
        }
        if case .length(let length) = parsed.body { headers.append(HTTPField(name: .contentLength, value: String(length))) }
        self.init(method: parsed.method, target: parsed.target, headers: headers, minorVersion: parsed.minorVersion,
                  expectsContinue: parsed.expectsContinue)
    }

    /// A clean head (`CleanHead.check` said so for exactly these bytes, its empty line
    /// included): its parts are where the check found them, so reading them is a split.
    init(clean bytes: UnsafeRawBufferPointer, minorVersion: Int) {
        let base = bytes.baseAddress!.assumingMemoryBound(to: UInt8.self)
        let end = bytes.count - 2
        var index = 0
        while base[index] != sp { index += 1 }
        let method = HTTPRequest.Method(rawValue: String(decoding: UnsafeBufferPointer(start: base, count: index), as: UTF8.self))!
        index += 1
        let targetStart = index
        while base[index] != sp { index += 1 }
        let target = String(decoding: UnsafeBufferPointer(start: base + targetStart, count: index - targetStart), as: UTF8.self)
        index += 11   // " HTTP/1.x\r\n"
        var headers = HTTPFields()
        // Room for the fields most clients send: grown one at a time, three fields cost two
        // reallocations of the field array.
        headers.reserveCapacity(8)
        while index < end {
            let nameStart = index
            while base[index] != colon { index += 1 }
            let name = KnownFieldNames.name(UnsafeRawBufferPointer(start: base + nameStart, count: index - nameStart))
            index += 2
            let valueStart = index
            while base[index] != cr { index += 1 }
            if let name {
                headers.append(HTTPField(name: name, value: String(decoding: UnsafeBufferPointer(start: base + valueStart,
                                                                                               count: index - valueStart), as: UTF8.self)))
            }
            index += 2
        }
        self.init(method: method, target: target, headers: headers, minorVersion: minorVersion)
    }

    /// The target in origin form: an absolute-form target (`http://host/path?q`) keeps its path
    /// and query; anything else is kept as it is.
    static func originForm(_ target: String) -> String {
        guard target.utf8.first != UInt8(ascii: "/"), let scheme = target.range(of: "://") else { return target }
        let rest = target[scheme.upperBound...]
        guard let slash = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) else { return "/" }
        let pathAndQuery = String(rest[slash...])
        return pathAndQuery.first == "?" ? "/" + pathAndQuery : pathAndQuery
    }
}

extension Substring {
    fileprivate var withoutSpaces: Substring {
        var slice = self
        while let first = slice.first, first == " " || first == "\t" { slice = slice.dropFirst() }
        while let last = slice.last, last == " " || last == "\t" { slice = slice.dropLast() }
        return slice
    }
}

private let cr: UInt8 = 13
private let sp: UInt8 = 32
private let colon = UInt8(ascii: ":")

/// Reading: the read loop over the bufferevent's input, one request at a time.
extension Connection {
    /// The socket added bytes (or the read loop is resumed).
    func readable() {
        guard let bufferevent, let input = bufferevent_get_input(bufferevent) else { return }
        switch state {
        case .open:
            readRequests(input)
        case .lingering:
            evbuffer_drain(input, evbuffer_get_length(input))
        case .closing, .handingOff, .closed:
            // Nothing after the last answer is read as a request.
            evbuffer_drain(input, evbuffer_get_length(input))
        }
    }

    /// Frames what the input holds until it is used up, a request is in flight, or the
    /// connection stops reading.
    private func readRequests(_ input: OpaquePointer) {
        guard !isFraming else { return }
        isFraming = true
        defer { isFraming = false }
        let source = EvbufferInput(buffer: input)
        // One request at a time, and not while earlier answers fill the output (`written()`
        // resumes): a client that pipelines without reading is not answered without bound.
        while current == nil, isOpen, bufferedOutput < Self.resumeBelow {
            let wasReadingHead = machine.isReadingHead
            let step = machine.step(source)
            switch step {
            case .cleanHead, .head: break   // below: the body may be here already
            default: syncClock()
            }
            switch step {
            case .needMore:
                if reading == nil, machine.isBetweenHeads { startIdleClock() }
                return
            case .take(let count):
                evbuffer_drain(input, count)
            case .cleanHead(let count):
                guard let front = evbuffer_pullup(input, count) else { return close() }
                let head = RequestHead(clean: UnsafeRawBufferPointer(start: front, count: count),
                                       minorVersion: machine.minorVersion)
                evbuffer_drain(input, count)
                beganWithClock(head, bodyWaiting: evbuffer_get_length(input))
            case .head(let consumed, let parsed):
                evbuffer_drain(input, consumed)
                beganWithClock(RequestHead(parsed), bodyWaiting: evbuffer_get_length(input))
            case .body(let count):
                if machine.isReadingHead, evbuffer_get_length(bodyBuffer) == 0 {
                    // The whole body at once (nearly always: it came with its head): straight
                    // from the input into the request's bytes, not through `bodyBuffer` (a
                    // chain moved and copied out again cost about 300 instructions).
                    chunkedBody = server.wholeBody(from: input, count: count)
                } else {
                    appendBody(from: input, count: count)
                }
                if machine.isReadingHead { complete() }
            case .dechunked(let consumed, let whole):
                evbuffer_drain(input, consumed)
                chunkedBody = whole
                if reading?.method != .head, reading?.method != .trace {
                    reading?.headers.append(HTTPField(name: .contentLength, value: String(whole.count)))
                }
                complete()
            case .refuse(let refusal, let consumed):
                evbuffer_drain(input, consumed)
                refuse(refusal, head: wasReadingHead ? nil : reading)
            case .cut(let refusal):
                evbuffer_drain(input, evbuffer_get_length(input))
                refuse(refusal, head: reading)
            }
        }
    }

    /// A head was read: its body's deadline starts, unless all of the body is already here —
    /// then the next step reads it at once (`began` leaves the loop's conditions as they were),
    /// and arming the timer only to stop it again cost an `event_add` per request with a body.
    private func beganWithClock(_ head: RequestHead, bodyWaiting waiting: Int) {
        if let owed = machine.owedBody, waiting >= owed {} else { syncClock() }
        began(head, bodyWaiting: waiting)
    }

    /// A head was read; `waiting` bytes follow it in the input so far.
    private func began(_ head: RequestHead, bodyWaiting waiting: Int) {
        requestsRead += 1
        reading = head
        discardBody()
        guard machine.awaitsBody else {
            // No body to read (none, or one the server drops: HEAD's): the request is whole.
            complete()
            return
        }
        // A body still to come is decided before any of it is read (API.md "Refused at the head").
        if machine.owedBody.map({ waiting < $0 }) ?? true, let refusal = decideHead(head) {
            machine.refuse()
            syncClock()
            answerAtHead(refusal)
            return
        }
        if head.expectsContinue, waiting == 0 { sendContinue() }
    }

    private func appendBody(from input: OpaquePointer, count: Int) {
        evbuffer_remove_buffer(input, bodyBuffer, count)
    }

    /// The request being read is whole: it goes to the router.
    private func complete() {
        guard let head = reading else { return }
        reading = nil
        let length = evbuffer_get_length(bodyBuffer)
        let bytes = length == 0 ? chunkedBody : [UInt8](unsafeUninitializedCapacity: length) { storage, count in
            count = max(0, Int(evbuffer_remove(bodyBuffer, storage.baseAddress, length)))
        }
        discardBody()
        var request = Request(method: head.method, target: head.target, headers: head.headers, body: bytes,
                              receivedAt: DispatchTime.now().uptimeNanoseconds)
        if let address {
            request.clientAddress = isTrustedProxy
                ? server.configuration.trustedProxies.client(peer: address, headers: request.headers) : address
        }
        stopIdleClock()
        server.dispatch(request, head: head, on: self)
    }

    /// Answers `refusal` as a problem and closes: nothing of the refused request is trusted
    /// (`head`: the request it cuts short, whose version and method shape the answer).
    func refuse(_ refusal: FramingRefusal, head: RequestHead?) {
        machine.refuse()
        syncClock()
        stopTimer()
        reading = nil
        discardBody()
        server.writeRefusal(refusal, on: self, minorVersion: head?.minorVersion ?? machine.minorVersion,
                            method: head?.method ?? .get)
    }

    /// The exchange in flight was answered: read on (pipelined requests wait in the input),
    /// unless the answer still fills the output — then once it is written.
    func answered() {
        current = nil
        guard isOpen, !isFraming, let bufferevent else { return }
        if inputEnded {
            resumeReading()
            return finishIfInputEnded()
        }
        if bufferedOutput < Self.resumeBelow {
            bufferevent_trigger(bufferevent, Int16(EV_READ),
                                Int32(BEV_TRIG_IGNORE_WATERMARKS.rawValue | BEV_TRIG_DEFER_CALLBACKS.rawValue))
        }
        // Otherwise `written()` resumes once the output is empty.
    }

    /// Pipelined requests are read on while less than this waits in the output.
    static let resumeBelow = 64 << 10

    func resumeReading() {
        guard let bufferevent, let input = bufferevent_get_input(bufferevent) else { return }
        readRequests(input)
    }

    /// "100 Continue" for a client waiting before it sends its body: every earlier request was
    /// answered (one is read at a time), and the line goes behind their answers in the output.
    private func sendContinue() {
        guard let bufferevent else { return }
        let line = "HTTP/1.1 100 Continue\r\n\r\n"
        _ = line.utf8.withContiguousStorageIfAvailable { bytes in
            bufferevent_write(bufferevent, bytes.baseAddress, bytes.count)
        }
    }
}

/// An evbuffer as the machine's input (its front made contiguous on demand).
struct EvbufferInput: FramingInput {
    let buffer: OpaquePointer
    var count: Int { evbuffer_get_length(buffer) }
    func front(_ length: Int) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: evbuffer_pullup(buffer, length), count: length)
    }
}
