import CCurl

/// libcurl's result codes as the feed's failures, each with a sentence that says what happened.
enum CurlFailure {
    /// `endpoint` is `host:port`; `detail` libcurl's own message (its error buffer).
    static func of(_ code: CURLcode, endpoint: String, detail: String) -> TransferFailure {
        let said = detail.isEmpty ? String(cString: curl_easy_strerror(code)) : detail
        switch code {
        case CURLE_OPERATION_TIMEDOUT:
            return .timedOut
        case CURLE_COULDNT_CONNECT:
            return .connectionFailed("connection refused by \(endpoint)")
        case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY:
            return .connectionFailed("cannot resolve the host of \(endpoint)")
        case CURLE_PARTIAL_FILE, CURLE_RECV_ERROR, CURLE_SEND_ERROR, CURLE_GOT_NOTHING:
            return .connectionFailed("\(endpoint) closed the connection before the answer was complete")
        case CURLE_WEIRD_SERVER_REPLY:
            return .connectionFailed("\(endpoint) did not answer with valid HTTP")
        case CURLE_UNSUPPORTED_PROTOCOL:
            return .refused("only http and https are fetched (\(said))")
        case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CERTPROBLEM,
             CURLE_SSL_CIPHER, CURLE_SSL_CACERT_BADFILE, CURLE_SSL_ISSUER_ERROR:
            return .connectionFailed("TLS with \(endpoint) failed: \(said)")
        default:
            return .connectionFailed("\(endpoint): \(said)")
        }
    }
}
