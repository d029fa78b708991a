import Foundation
import Logging
import Observing
import Synchronization

/// Tells how each upstream fetch of the posts feed ended, for `/metrics`
/// (`tidings_upstream_fetches_total{outcome=…}`), with the labels `success`, `not_modified`,
/// `connection_error`, `timeout`, `http_error`, `too_large`, `invalid_body`, `cancelled`.
///
/// The transport outcome is known where the request is sent (``MeteredHTTPClient``); whether
/// a 2xx body was a feed of posts is known only where it is decoded (``decoded(_:ok:)``). A 2xx
/// body identical to the last one that decoded is not decoded again by the loader, so the
/// client counts it as a success itself. Only a body that came from the upstream counts when it
/// is decoded: the loader also decodes posts taken from a stored document, which is no fetch.
/// The loader runs one fetch at a time, so this needs no per-request bookkeeping. Thread-safe
/// (a `Mutex`); called off the loop.
final class UpstreamFetchMeter: Sendable {
    private struct State {
        var report: @Sendable (String) -> Void = { _ in }
        var lastDecodedBody: Data?
        /// An upstream 2xx body is on its way to the decoder.
        var awaitingDecode = false
    }

    private let state = Mutex(State())
    private let logger: Logger

    /// Every outcome is also logged at debug level (`outcome=…`).
    init(logger: Logger) { self.logger = logger }

    /// Where outcomes go (e.g. the metrics registry); replaces the previous receiver.
    func setReporter(_ report: @escaping @Sendable (String) -> Void) {
        state.withLock { $0.report = report }
    }

    func record(_ outcome: String) {
        logger.debug("posts upstream fetch", metadata: ["outcome": "\(outcome)"])
        let report = state.withLock { $0.report }
        report(outcome)
    }

    /// Called by the feed's decoder for every 2xx body it decodes.
    func decoded(_ body: Data, ok: Bool) {
        let fromUpstream = state.withLock { state in
            defer { state.awaitingDecode = false }
            if ok, state.awaitingDecode { state.lastDecodedBody = body }
            return state.awaitingDecode
        }
        if fromUpstream { record(ok ? "success" : "invalid_body") }
    }

    /// An upstream 2xx body will be decoded next (unless it is the last one decoded).
    func willDecode() {
        state.withLock { $0.awaitingDecode = true }
    }

    /// True when the loader will skip decoding `body` (identical to the last good one).
    func isLastDecoded(_ body: Data) -> Bool {
        state.withLock { $0.lastDecodedBody == body }
    }
}

/// An ``HTTPClient`` that reports each request's transport outcome to an ``UpstreamFetchMeter``.
struct MeteredHTTPClient: HTTPClient {
    let base: any HTTPClient
    let meter: UpstreamFetchMeter

    func send(_ request: HTTPClientRequest) async throws -> HTTPClientResponse {
        let started = ContinuousClock.now
        do {
            let response = try await base.send(request)
            switch response.status {
            case 304: meter.record("not_modified")
            case 200..<300:
                if meter.isLastDecoded(response.body) { meter.record("success") } else { meter.willDecode() }
            default: meter.record("http_error")
            }
            return response
        } catch let error as HTTPClientError {
            switch error {
            case .timedOut: meter.record("timeout")
            case .bodyTooLarge: meter.record("too_large")
            case .connectionFailed: meter.record("connection_error")
            case .refused: meter.record("refused")
            }
            throw error
        } catch {
            // The loader cancels the request when its own deadline wins the race with the client's
            // (they are the same instant): a cancellation from then on is the deadline's.
            let timedOut = request.deadline.map { ContinuousClock.now >= $0 } ?? (ContinuousClock.now - started >= request.timeout)
            meter.record(timedOut ? "timeout" : "cancelled")
            throw error
        }
    }
}
