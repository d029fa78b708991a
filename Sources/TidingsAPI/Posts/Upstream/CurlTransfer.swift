import CCurl
import Foundation
import Observing
import Synchronization

/// One upstream GET, run to its end on a thread of its own with a libcurl easy handle driven
/// by a multi handle (so ``cancel()`` wakes it at once, whatever it waits for). Never on the
/// event loop.
///
/// Back-pressure: libcurl reads the socket only as its callbacks take the bytes, one buffer
/// (16 KiB) at a time, and ``CurlReceiver`` stops the exchange at its bounds; so memory is the
/// limit plus a buffer, however fast the upstream sends. Other rules:
/// - one deadline for the whole request, redirects included (`CURLOPT_TIMEOUT_MS` per hop is
///   what is left of it);
/// - `http` and `https` only; redirects followed by hand, each checked against ``Origin``
///   (same scheme, host and port), at most ``maxRedirects``;
/// - `Accept-Encoding: identity`, and libcurl never decodes content or transfer encodings.
final class CurlTransfer: Sendable {
    typealias Outcome = Result<HTTPClientResponse, TransferFailure>

    static let maxRedirects = 8

    /// `@unchecked Sendable` for `multi`, a raw pointer: it is read and written only under the
    /// `Mutex`, and the one call made through it from another thread, `curl_multi_wakeup`, is
    /// thread-safe (the transfer's thread owns the handle and clears `multi` before freeing it).
    private struct Control: @unchecked Sendable {
        var cancelled = false
        /// While the transfer runs: its multi handle, to wake it (`curl_multi_wakeup` is thread-safe).
        var multi: UnsafeMutableRawPointer?
    }

    private let request: HTTPClientRequest
    /// What it does beyond the feed's GET (webhooks: a POST, no redirects, an address rule).
    private let exchange: CurlExchange
    private let control = Mutex(Control())

    init(_ request: HTTPClientRequest, exchange: CurlExchange = .feed) {
        self.request = request
        self.exchange = exchange
    }

    /// Runs the transfer on a new thread and calls `finish` there with its outcome.
    func start(_ finish: @escaping @Sendable (Outcome) -> Void) {
        let thread = Thread { [self] in finish(run()) }
        thread.stackSize = 1 << 20
        thread.start()
    }

    /// Ends the transfer as soon as its thread wakes (at once when it waits on the network).
    func cancel() {
        control.withLock { control in
            control.cancelled = true
            if let multi = control.multi { curl_multi_wakeup(multi) }
        }
    }

    private var isCancelled: Bool { control.withLock { $0.cancelled } }

    private func run() -> Outcome {
        // What the handles point at is freed after them (defers run in reverse).
        let receiver = CurlReceiver(limit: request.maxBodyBytes)
        let errors = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
        defer { errors.deallocate() }
        let fields = Self.fieldList(request.headers)
        defer { curl_slist_free_all(fields) }
        let addressGuard = exchange.addressRule.map { CurlAddressGuard(rule: $0) }
        return withExtendedLifetime((receiver, addressGuard)) {
            run(receiver: receiver, addressGuard: addressGuard, errors: errors, fields: fields)
        }
    }

    private func run(receiver: CurlReceiver, addressGuard: CurlAddressGuard?, errors: UnsafeMutablePointer<CChar>,
                     fields: UnsafeMutablePointer<curl_slist>?) -> Outcome {
        guard let multi = curl_multi_init() else { return .failure(.connectionFailed("libcurl could not start a transfer")) }
        defer { curl_multi_cleanup(multi) }
        guard let easy = curl_easy_init() else { return .failure(.connectionFailed("libcurl could not start a transfer")) }
        defer { curl_easy_cleanup(easy) }
        let registered = control.withLock { control -> Bool in
            guard !control.cancelled else { return false }
            control.multi = multi
            return true
        }
        guard registered else { return .failure(.cancelled) }
        defer { control.withLock { $0.multi = nil } }
        configure(easy, receiver: receiver, fields: fields, errors: errors)
        exchange.configure(easy, addressGuard: addressGuard)

        let deadline = request.deadline ?? ContinuousClock.now + request.timeout
        let origin = Origin(request.url)
        var url = request.url
        for hop in 0...Self.maxRedirects {
            receiver.reset()
            errors[0] = 0
            let left = deadline - ContinuousClock.now
            guard left > .zero else { return .failure(.timedOut) }
            let milliseconds = max(1, Int(left.components.seconds) * 1000 + Int(left.components.attoseconds / 1_000_000_000_000_000))
            tidings_curl_set_string(easy, CURLOPT_URL, url.absoluteString)
            tidings_curl_set_long(easy, CURLOPT_TIMEOUT_MS, milliseconds)
            guard let code = perform(easy, multi) else { return .failure(.cancelled) }
            if exchange.keepsStatusOfLongReply, receiver.status >= 200,
               receiver.failure.map({ if case .bodyTooLarge = $0 { true } else { false } }) ?? (code == CURLE_FILESIZE_EXCEEDED) {
                return .success(HTTPClientResponse(status: receiver.status, headers: receiver.headers, body: Data()))
            }
            if let failure = receiver.failure { return .failure(failure) }
            if code != CURLE_OK, let refusal = addressGuard?.refusal { return .failure(.refused(refusal)) }
            if code == CURLE_FILESIZE_EXCEEDED, let limit = request.maxBodyBytes {
                return .failure(.bodyTooLarge(limit: limit))   // an announced length over the limit
            }
            guard code == CURLE_OK else {
                return .failure(CurlFailure.of(code, endpoint: Origin.endpoint(url), detail: String(cString: errors)))
            }
            var status = 0
            tidings_curl_get_long(easy, CURLINFO_RESPONSE_CODE, &status)
            guard exchange.followsRedirects, receiver.isRedirect, let location = receiver.headers["location"] else {
                return .success(HTTPClientResponse(status: status, headers: receiver.headers, body: receiver.body))
            }
            guard hop < Self.maxRedirects else { return .failure(.refused("it redirected more than \(Self.maxRedirects) times")) }
            let target = URL(string: location, relativeTo: url)?.absoluteURL
            if let origin, let why = origin.refusal(location: location, base: url, next: target) {
                return .failure(.refused(why))
            }
            guard let target else { return .failure(.refused("a redirect to '\(location.prefix(200))' is not a URL")) }
            url = target
        }
        return .failure(.refused("it redirected more than \(Self.maxRedirects) times"))
    }

    /// One exchange; nil when cancelled.
    private func perform(_ easy: UnsafeMutableRawPointer, _ multi: UnsafeMutableRawPointer) -> CURLcode? {
        curl_multi_add_handle(multi, easy)
        defer { curl_multi_remove_handle(multi, easy) }
        var running: Int32 = 1
        while running > 0 {
            if isCancelled { return nil }
            guard curl_multi_perform(multi, &running) == CURLM_OK else { return CURLE_FAILED_INIT }
            if running > 0 { curl_multi_poll(multi, nil, 0, 1000, nil) }
        }
        if isCancelled { return nil }
        var queued: Int32 = 0
        while let message = curl_multi_info_read(multi, &queued) {
            if message.pointee.msg == CURLMSG_DONE { return message.pointee.data.result }
        }
        return CURLE_FAILED_INIT
    }

    private func configure(_ easy: UnsafeMutableRawPointer, receiver: CurlReceiver,
                           fields: UnsafeMutablePointer<curl_slist>?, errors: UnsafeMutablePointer<CChar>) {
        tidings_curl_set_long(easy, CURLOPT_NOSIGNAL, 1)
        tidings_curl_set_string(easy, CURLOPT_PROTOCOLS_STR, "http,https")
        tidings_curl_set_long(easy, CURLOPT_FOLLOWLOCATION, 0)
        tidings_curl_set_long(easy, CURLOPT_HTTP_CONTENT_DECODING, 0)
        tidings_curl_set_long(easy, CURLOPT_TRANSFER_ENCODING, 0)
        if let limit = request.maxBodyBytes { tidings_curl_set_long(easy, CURLOPT_MAXFILESIZE, limit) }
        tidings_curl_set_string(easy, CURLOPT_USERAGENT, "Tidings")
        tidings_curl_set_pointer(easy, CURLOPT_HTTPHEADER, UnsafeMutableRawPointer(fields))
        tidings_curl_set_pointer(easy, CURLOPT_ERRORBUFFER, UnsafeMutableRawPointer(errors))
        let context = Unmanaged.passUnretained(receiver).toOpaque()
        tidings_curl_set_pointer(easy, CURLOPT_HEADERDATA, context)
        tidings_curl_set_data_callback(easy, CURLOPT_HEADERFUNCTION) { data, size, count, context in
            let receiver = Unmanaged<CurlReceiver>.fromOpaque(context!).takeUnretainedValue()
            return receiver.receiveHead(UnsafeRawBufferPointer(start: data, count: size * count)) ? size * count : 0
        }
        tidings_curl_set_pointer(easy, CURLOPT_WRITEDATA, context)
        tidings_curl_set_data_callback(easy, CURLOPT_WRITEFUNCTION) { data, size, count, context in
            let receiver = Unmanaged<CurlReceiver>.fromOpaque(context!).takeUnretainedValue()
            return receiver.receiveBody(UnsafeRawBufferPointer(start: data, count: size * count)) ? size * count : 0
        }
    }

    /// The request's fields, with `Accept-Encoding: identity` and (unless given) `Accept: application/json`.
    private static func fieldList(_ headers: [String: String]) -> UnsafeMutablePointer<curl_slist>? {
        var list: UnsafeMutablePointer<curl_slist>?
        var lines = headers.filter { $0.key.lowercased() != "accept-encoding" }.map { "\($0.key): \($0.value)" }
        lines.append("Accept-Encoding: identity")
        if !headers.keys.contains(where: { $0.lowercased() == "accept" }) { lines.append("Accept: application/json") }
        for line in lines where !line.contains("\r") && !line.contains("\n") {
            list = curl_slist_append(list, line)
        }
        return list
    }
}
