import Foundation
import TidingsStore

/// `--webhooks FILE`: a JSON array of `{"name", "url", "secret", "topics"?, "keys"?,
/// "environments"?}`. Everything wrong with it is reported with the entry's position and name;
/// a message never contains a secret. Like `--tokens`, a bad file stops start-up and, on a
/// SIGHUP reload, leaves the hooks in force as they were.
enum WebhooksFile {
    struct Invalid: Error, CustomStringConvertible {
        let description: String
    }

    /// A larger file is refused (it holds configuration, not data).
    static let maxBytes = 1 << 20
    /// Hooks one server sends to at most.
    static let maxHooks = 64
    /// The secret's key, decoded, holds at least this many bytes (Standard Webhooks: 24 to 64).
    static let minKeyBytes = 24
    static let maxKeyBytes = 1024

    static func load(path: String, declaredKeys: [String]) throws(Invalid) -> [WebhookDefinition] {
        let data: Data
        do throws(ConfigFile.Unreadable) { data = try ConfigFile.read(path: path, flag: "--webhooks", maxBytes: maxBytes) } catch {
            throw Invalid(description: error.description)
        }
        return try parse(data, path: path, declaredKeys: declaredKeys)
    }

    static func parse(_ data: Data, path: String, declaredKeys: [String]) throws(Invalid) -> [WebhookDefinition] {
        func invalid(_ detail: String) -> Invalid { Invalid(description: "invalid --webhooks file \(path): \(detail)") }
        let json: Any
        do { json = try JSONSerialization.jsonObject(with: data) } catch {
            throw invalid("not JSON (expected an array of {\"name\", \"url\", \"secret\"})")
        }
        guard let entries = json as? [Any] else { throw invalid("expected a JSON array of webhooks") }
        guard entries.count <= maxHooks else { throw invalid("more than \(maxHooks) webhooks") }
        var hooks: [WebhookDefinition] = []
        var names = Set<String>()
        for (index, raw) in entries.enumerated() {
            guard let entry = raw as? [String: Any] else { throw invalid("entry \(index + 1) is not an object") }
            guard let name = entry["name"] as? String, NamedCredential.isValidName(name) else {
                throw invalid("entry \(index + 1): \"name\" must match ^[A-Za-z0-9_.-]{1,64}$")
            }
            let label = "entry \(index + 1) (\(name))"
            guard names.insert(name).inserted else { throw invalid("\(label): the name appears more than once") }
            let unknown = Set(entry.keys).subtracting(["name", "url", "secret", "topics", "keys", "environments"])
            if let extra = unknown.sorted().first { throw invalid("\(label): unknown member \"\(extra)\"") }
            guard let text = entry["url"] as? String, let url = httpURL(text) else {
                throw invalid("\(label): \"url\" must be an absolute http or https URL with a host")
            }
            guard let secret = entry["secret"] as? String, let key = key(ofSecret: secret) else {
                throw invalid("\(label): \"secret\" must be \"whsec_\" followed by the base64 of \(minKeyBytes) to \(maxKeyBytes) bytes")
            }
            var coverage = WebhookCoverage()
            if let raw = entry["topics"] {
                guard let topics = raw as? [String], !topics.isEmpty,
                      Set(topics).isSubset(of: ["preferences", "things"]) else {
                    throw invalid("\(label): \"topics\" must be a non-empty array of \"preferences\" and \"things\"")
                }
                coverage.preferences = topics.contains("preferences")
                coverage.things = topics.contains("things")
            }
            if let raw = entry["keys"] {
                guard let keys = raw as? [String], !keys.isEmpty else {
                    throw invalid("\(label): \"keys\" must be a non-empty array of preference keys")
                }
                if let undeclared = keys.first(where: { !declaredKeys.contains($0) }) {
                    throw invalid("\(label): \"keys\" names \"\(undeclared.prefix(64))\", which is not a declared preference")
                }
                coverage.keys = declaredKeys.filter(keys.contains)
            }
            if let raw = entry["environments"] {
                guard let names = raw as? [String], !names.isEmpty, names.allSatisfy(EnvironmentName.isValid) else {
                    throw invalid("\(label): \"environments\" must be a non-empty array of names matching ^[a-z][a-z0-9-]{0,31}$")
                }
                coverage.environments = Array(Set(names)).sorted()
            }
            hooks.append(WebhookDefinition(name: name, url: url, key: key, coverage: coverage))
        }
        return hooks
    }

    /// An absolute http(s) URL with a host, at most 2,048 bytes.
    static func httpURL(_ text: String) -> URL? {
        guard text.utf8.count <= 2048, let components = URLComponents(string: text),
              let scheme = components.scheme?.lowercased(), scheme == "http" || scheme == "https",
              let host = components.host, !host.isEmpty, components.fragment == nil,
              let url = components.url else { return nil }
        return url
    }

    /// The signing key of a Standard Webhooks secret: the bytes of the base64 after `whsec_`.
    static func key(ofSecret secret: String) -> [UInt8]? {
        guard secret.hasPrefix("whsec_"), let bytes = Data(base64Encoded: String(secret.dropFirst(6))),
              (minKeyBytes...maxKeyBytes).contains(bytes.count) else { return nil }
        return Array(bytes)
    }
}
