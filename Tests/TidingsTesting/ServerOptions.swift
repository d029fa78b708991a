import Foundation
import TestFixtures
public import TidingsAPI

/// Settings a test asks of its server, whichever transport starts it: flags for the live
/// binary, the same fields of ``TidingsConfiguration`` for ``InProcessTidings``. So a test class
/// written against ``TidingsTransport`` starts the server it needs on either.
///
/// ```swift
/// let small = try options.start(live: false)     // ServerOptions(replayBuffer: 3)
/// ```
public struct ServerOptions: Sendable {
    public var replayBuffer: Int?
    public var replayBytes: Int?
    public var historyBytes: Int?

    public init(replayBuffer: Int? = nil, replayBytes: Int? = nil, historyBytes: Int? = nil) {
        self.replayBuffer = replayBuffer
        self.replayBytes = replayBytes
        self.historyBytes = historyBytes
    }

    /// The command-line flags of these settings.
    public var arguments: [String] {
        var arguments: [String] = []
        if let replayBuffer { arguments += ["--replay-buffer", "\(replayBuffer)"] }
        if let replayBytes { arguments += ["--replay-bytes", "\(replayBytes)"] }
        if let historyBytes { arguments += ["--history-bytes", "\(historyBytes)"] }
        return arguments
    }

    /// Sets these settings on `configuration`.
    public func apply(to configuration: inout TidingsConfiguration) {
        if let replayBuffer { configuration.replayBuffer = replayBuffer }
        if let replayBytes { configuration.replayBytes = replayBytes }
        if let historyBytes { configuration.historyBytes = historyBytes }
    }

    /// A server with these settings: the real binary over a socket (`live`), else in-process.
    public func start(live: Bool) throws -> any TidingsTransport {
        if live { return try TidingsProcess(arguments: arguments) }
        return try InProcessTidings { apply(to: &$0) }
    }
}
