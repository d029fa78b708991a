import Crypto
import Foundation

/// Standard Webhooks signing (https://www.standardwebhooks.com): `webhook-signature` is `v1,`
/// and the base64 of HMAC-SHA256 over `<webhook-id>.<webhook-timestamp>.<body>` with the key the
/// secret stands for. Receivers verify it with any Standard Webhooks library.
enum WebhookSignature {
    static func sign(id: String, timestamp: Int64, body: [UInt8], key: [UInt8]) -> String {
        var message = Array("\(id).\(timestamp).".utf8)
        message.append(contentsOf: body)
        let code = HMAC<Crypto.SHA256>.authenticationCode(for: message, using: SymmetricKey(data: key))
        return "v1," + Data(code).base64EncodedString()
    }
}
