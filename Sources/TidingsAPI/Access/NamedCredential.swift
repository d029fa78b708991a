import Foundation
import TidingsStore

/// One credential a request may present, with the name its changes are recorded under
/// (API.md "History": `api` for `--api-token`, `read` for `--read-token`, a name from
/// `--tokens FILE`). The secret is held as bytes, or as the SHA-256 of the token when the file
/// gives only that, and is only ever compared in constant time.
struct NamedCredential: Sendable, Equatable {
    enum Role: String, Sendable {
        case read, write
    }

    enum Secret: Sendable, Equatable {
        case token([UInt8])
        case sha256([UInt8])
    }

    let name: String
    let role: Role
    let secret: Secret
    /// The environments it reaches (API.md "Environments"); nil: every one.
    var environments: Set<String>? = nil

    /// Whether `presented` (and, for a digest, its SHA-256 `digest`) is this credential. Constant
    /// time in the presented bytes' content.
    func matches(_ presented: [UInt8], digest: [UInt8]?) -> Bool {
        switch secret {
        case let .token(bytes): return ConstantTime.equals(presented, bytes)
        case let .sha256(expected): return ConstantTime.equals(digest ?? [], expected)
        }
    }

    /// `^[A-Za-z0-9_.-]{1,64}$`.
    static func isValidName(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard (1...64).contains(bytes.count) else { return false }
        return bytes.allSatisfy { b in
            (b >= 48 && b <= 57) || (b >= 65 && b <= 90) || (b >= 97 && b <= 122) || b == 95 || b == 46 || b == 45
        }
    }
}

/// `--tokens FILE`: a JSON array of `{"name", "role": "read"|"write", "token" | "sha256"}`.
/// Everything wrong with it is reported with the entry's position and name; the message never
/// contains a token.
enum TokensFile {
    struct Invalid: Error, CustomStringConvertible {
        let description: String
    }

    /// Names the server gives its own credentials and open access; a file may not reuse them.
    static let reservedNames: Set<String> = ["api", "read", "anonymous"]
    /// A tokens file larger than this is refused (it holds credentials, not data).
    static let maxBytes = 1 << 20

    /// Reads and checks the file; `serverTokens` are `--api-token` and `--read-token`, which no
    /// entry may repeat.
    static func load(path: String, serverTokens: [String] = []) throws(Invalid) -> [NamedCredential] {
        let data: Data
        do throws(ConfigFile.Unreadable) { data = try ConfigFile.read(path: path, flag: "--tokens", maxBytes: maxBytes) } catch {
            throw Invalid(description: error.description)
        }
        return try parse(data, path: path, serverTokens: serverTokens)
    }

    static func parse(_ data: Data, path: String, serverTokens: [String] = []) throws(Invalid) -> [NamedCredential] {
        func invalid(_ detail: String) -> Invalid { Invalid(description: "invalid --tokens file \(path): \(detail)") }
        let json: Any
        do { json = try JSONSerialization.jsonObject(with: data) } catch {
            throw invalid("not JSON (expected an array of {\"name\", \"role\", \"token\" or \"sha256\"})")
        }
        guard let entries = json as? [Any] else { throw invalid("expected a JSON array of credentials") }
        var credentials: [NamedCredential] = []
        var names = Set<String>()
        for (index, raw) in entries.enumerated() {
            guard let entry = raw as? [String: Any] else { throw invalid("entry \(index + 1) is not an object") }
            guard let name = entry["name"] as? String, NamedCredential.isValidName(name) else {
                throw invalid("entry \(index + 1): \"name\" must match ^[A-Za-z0-9_.-]{1,64}$")
            }
            let label = "entry \(index + 1) (\(name))"
            guard !reservedNames.contains(name) else { throw invalid("\(label): the name is reserved (api, read and anonymous are the server's own)") }
            guard names.insert(name).inserted else { throw invalid("\(label): the name appears more than once") }
            guard let roleText = entry["role"] as? String, let role = NamedCredential.Role(rawValue: roleText) else {
                throw invalid("\(label): \"role\" must be \"read\" or \"write\"")
            }
            let unknown = Set(entry.keys).subtracting(["name", "role", "token", "sha256", "environments"])
            if let extra = unknown.sorted().first { throw invalid("\(label): unknown member \"\(extra)\"") }
            let secret: NamedCredential.Secret
            switch (entry["token"], entry["sha256"]) {
            case let (token as String, nil):
                guard !token.isEmpty, token.utf8.count <= 4096 else { throw invalid("\(label): \"token\" must be 1 to 4096 bytes") }
                guard token.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value != 0x7F }) else {
                    throw invalid("\(label): \"token\" may not contain spaces or control characters")
                }
                secret = .token(Array(token.utf8))
            case let (nil, digest as String):
                guard let bytes = Hex.bytes(digest), bytes.count == 32 else {
                    throw invalid("\(label): \"sha256\" must be 64 hex digits (the SHA-256 of the token)")
                }
                secret = .sha256(bytes)
            default:
                throw invalid("\(label): give exactly one of \"token\" and \"sha256\"")
            }
            var environments: Set<String>?
            if let listed = entry["environments"] {
                guard let names = listed as? [String], !names.isEmpty, names.allSatisfy({ EnvironmentName.isValid($0) }) else {
                    throw invalid("\(label): \"environments\" must be a non-empty array of environment names (^[a-z][a-z0-9-]{0,31}$)")
                }
                environments = Set(names)
            }
            credentials.append(NamedCredential(name: name, role: role, secret: secret, environments: environments))
        }
        try refuseSharedSecrets(credentials, serverTokens: serverTokens, invalid: invalid)
        return credentials
    }

    /// A token that two entries share (as a token or as its digest, under any names and roles),
    /// or that repeats `--api-token` or `--read-token`, would make the recorded actor depend on
    /// the order of the file rather than on who wrote: the file is refused.
    private static func refuseSharedSecrets(_ credentials: [NamedCredential], serverTokens: [String],
                                            invalid: (String) -> Invalid) throws(Invalid) {
        func digest(_ secret: NamedCredential.Secret) -> [UInt8] {
            switch secret {
            case let .token(bytes): SHA256.hash(bytes)
            case let .sha256(bytes): bytes
            }
        }
        let server = Set(serverTokens.filter { !$0.isEmpty }.map { SHA256.hash(Array($0.utf8)) })
        var seen: [[UInt8]: String] = [:]
        for credential in credentials {
            let key = digest(credential.secret)
            if server.contains(key) {
                throw invalid("\(credential.name): its token is also --api-token or --read-token; every credential needs its own token")
            }
            if let first = seen[key] {
                throw invalid("\(first) and \(credential.name) have the same token; every credential needs its own token")
            }
            seen[key] = credential.name
        }
    }
}
