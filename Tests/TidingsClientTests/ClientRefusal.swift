import Foundation

/// What `tidings-client` prints on stderr when the server refuses: `tidings-client: STATUS: DETAIL`
/// with the problem's field errors in parentheses — read back into its parts, so tests compare
/// the status and the detail instead of searching the text.
struct ClientRefusal: Equatable {
    let status: Int
    /// The problem's detail with its `(key: detail; ...)` list, as printed.
    let message: String

    /// nil when `stderr`'s first line is not a refusal.
    init?(_ stderr: String) {
        let line = stderr.split(separator: "\n").first ?? ""
        let parts = line.split(separator: ":", maxSplits: 2).map { $0.trimmingCharacters(in: .whitespaces) }
        guard parts.count == 3, parts[0] == "tidings-client", let status = Int(parts[1]) else { return nil }
        self.status = status
        message = parts[2]
    }

    /// The first line of an argument error (`Error: ...`), which ArgumentParser follows with the usage.
    static func usageError(_ stderr: String) -> String? {
        stderr.split(separator: "\n").first.map(String.init)
    }
}
