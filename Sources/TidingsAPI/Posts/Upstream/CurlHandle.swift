import CCurl
import Foundation

/// One libcurl easy handle and the multi handle that drives it, owned together and freed
/// together in `deinit`. The multi handle keeps the connection cache, so a handle given back to
/// its client (``CurlHTTPClient``) after a clean exchange lets the next request to the same
/// origin reuse the open connection (no new TCP or TLS handshake).
///
/// Every libcurl option is set through ``set(_:_:_:)``-style calls that check libcurl's answer:
/// an option libcurl refuses ends the request with a failure naming it, never silently (a
/// refused protocol restriction would otherwise fetch whatever scheme a redirect names).
///
/// `@unchecked Sendable`: the raw handles are used by one thread at a time — the transfer's,
/// which takes the handle from the client's pool and gives it back when done.
final class CurlHandle: @unchecked Sendable {
    let easy: UnsafeMutableRawPointer
    let multi: UnsafeMutableRawPointer

    /// nil when libcurl cannot make the handles (out of memory).
    init?() {
        guard let multi = curl_multi_init() else { return nil }
        guard let easy = curl_easy_init() else {
            curl_multi_cleanup(multi)
            return nil
        }
        self.multi = multi
        self.easy = easy
    }

    deinit {
        curl_easy_cleanup(easy)
        curl_multi_cleanup(multi)
    }

    /// Back to libcurl's defaults for every option (what a request set points at is freed after
    /// it), keeping the connection cache, for the next request.
    func reset() {
        curl_easy_reset(easy)
    }

    func set(_ option: CURLoption, _ name: StaticString, _ value: Int) throws(TransferFailure) {
        try Self.check(tidings_curl_set_long(easy, option, value), name)
    }

    func set(_ option: CURLoption, _ name: StaticString, _ value: String) throws(TransferFailure) {
        try Self.check(tidings_curl_set_string(easy, option, value), name)
    }

    func set(_ option: CURLoption, _ name: StaticString, _ value: UnsafeMutableRawPointer?) throws(TransferFailure) {
        try Self.check(tidings_curl_set_pointer(easy, option, value), name)
    }

    func set(_ option: CURLoption, _ name: StaticString,
             _ callback: tidings_curl_data_callback) throws(TransferFailure) {
        try Self.check(tidings_curl_set_data_callback(easy, option, callback), name)
    }

    /// A `long` the finished exchange reports (e.g. `CURLINFO_RESPONSE_CODE`).
    func info(_ info: CURLINFO, _ name: StaticString) throws(TransferFailure) -> Int {
        var value = 0
        try Self.check(tidings_curl_get_long(easy, info, &value), name)
        return value
    }

    /// The one place a libcurl result code of the setup becomes a failure.
    static func check(_ code: CURLcode, _ name: StaticString) throws(TransferFailure) {
        guard code != CURLE_OK else { return }
        throw .connectionFailed("libcurl refused \(name): \(String(cString: curl_easy_strerror(code)))")
    }
}
