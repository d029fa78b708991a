import Foundation
import TidingsStore

/// One hook of `--webhooks FILE` (API.md "Changes as code, on a schedule, and to webhooks"):
/// where change records go, the key they are signed with, and which records it covers.
struct WebhookDefinition: Sendable, Equatable {
    let name: String
    /// http or https, checked when the file was read.
    let url: URL
    /// The signing key: the bytes the secret's base64 (after `whsec_`) stands for. Never shown.
    let key: [UInt8]
    /// Which records (topics, keys, environments) the hook is sent.
    let coverage: WebhookCoverage
    /// Only changes in these environments (nil: every one).
    var environments: [String]? { coverage.environments }

    /// The URL without its user information (`GET /webhooks` never shows credentials).
    var displayURL: String {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return "" }
        components.user = nil
        components.password = nil
        return components.string ?? ""
    }

    /// Whether the record of `change` goes to this hook.
    func covers(_ change: Change) -> Bool { coverage.covers(change) }
}
