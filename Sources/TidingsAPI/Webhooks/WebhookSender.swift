import Foundation
import Observing

/// How one delivery attempt ended.
enum WebhookAttempt: Sendable, Equatable {
    /// A 2xx.
    case delivered(status: Int)
    /// 410 Gone: the receiver wants no more; the hook is disabled.
    case gone
    /// Anything else — another status, a timeout, a refused or broken connection — with why.
    case failed(String)
    /// The address rule or the URL refused it before anything was sent.
    case refused(String)
    /// Shutdown or a reload stopped it (not an attempt).
    case cancelled

    /// The `outcome` label of `tidings_webhook_deliveries_total`.
    var outcome: String {
        switch self {
        case .delivered: "delivered"
        case .gone: "gone"
        case .failed: "failed"
        case .refused: "refused"
        case .cancelled: "cancelled"
        }
    }
}

/// Sends one signed delivery through the shared libcurl client (``CurlTransfer``), on a thread
/// of its own — never on the event loop, so a receiver that never answers holds nothing but
/// that thread — with Tidings' outbound rules: 5 s to connect and 10 s in all, no redirects
/// followed, at most 64 KiB of the reply read, http and https only, and addresses in loopback,
/// private and link-local ranges refused unless `--webhook-allow-private`.
struct WebhookSender: Sendable {
    /// The most of a reply that is read (its status is what counts).
    static let maxReplyBytes = 64 << 10

    let allowsPrivateAddresses: Bool
    let timing: WebhookTiming

    init(allowsPrivateAddresses: Bool, timing: WebhookTiming) {
        self.allowsPrivateAddresses = allowsPrivateAddresses
        self.timing = timing
        _ = CurlHTTPClient()   // libcurl's one-time global initialisation
    }

    /// POSTs `body` to `hook` with the Standard Webhooks headers for `id`, signed now.
    func send(_ body: [UInt8], id: String, to hook: WebhookDefinition,
              now: Date = Date()) async -> WebhookAttempt {
        let timestamp = Int64(now.timeIntervalSince1970)
        let headers = [
            "Content-Type": "application/json",
            "webhook-id": id,
            "webhook-timestamp": String(timestamp),
            "webhook-signature": WebhookSignature.sign(id: id, timestamp: timestamp, body: body, key: hook.key),
        ]
        let request = HTTPClientRequest(url: hook.url, headers: headers, timeout: timing.attemptTimeout,
                                        maxBodyBytes: Self.maxReplyBytes)
        var exchange = CurlExchange()
        exchange.body = body
        exchange.connectTimeout = timing.connectTimeout
        exchange.followsRedirects = false
        exchange.keepsStatusOfLongReply = true
        exchange.addressRule = allowsPrivateAddresses ? { _ in nil } : WebhookAddressRule.refusal
        switch await CurlTransfer.perform(request, exchange: exchange) {
        case let .success(response) where (200..<300).contains(response.status):
            return .delivered(status: response.status)
        case let .success(response) where response.status == 410:
            return .gone
        case let .success(response):
            return .failed("the receiver answered \(response.status)")
        case .failure(.timedOut):
            return .failed("no answer within \(timing.attemptTimeout)")
        case let .failure(.refused(reason)) where reason.contains("--webhook-allow-private"):
            return .refused(reason)
        case let .failure(.refused(reason)), let .failure(.connectionFailed(reason)):
            return .failed(reason)
        case .failure(.bodyTooLarge):
            return .failed("the reply was larger than \(Self.maxReplyBytes >> 10) KiB")
        case .failure(.cancelled):
            return .cancelled
        }
    }
}

extension CurlTransfer {
    /// Runs one transfer with `exchange` on a thread of its own; ends it at once when the
    /// calling task is cancelled.
    static func perform(_ request: HTTPClientRequest, exchange: CurlExchange) async -> Outcome {
        let transfer = CurlTransfer(request, exchange: exchange)
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                transfer.start { continuation.resume(returning: $0) }
            }
        } onCancel: {
            transfer.cancel()
        }
    }
}
