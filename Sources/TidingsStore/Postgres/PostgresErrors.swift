import Foundation
internal import PostgresNIO

extension PostgresStore {
    /// What a failure means for the caller: connection trouble (refused, reset, timed out,
    /// server shutting down, too many connections) is ``StoreError/unavailable(_:)`` — nothing
    /// was written, retry later; anything else the server or the data says is
    /// ``StoreError/database(_:)``.
    static func storeError(_ error: any Error) -> StoreError {
        switch error {
        case let error as StoreError:
            return error
        case let error as PostgresDeadline.Exceeded:
            return .unavailable(error.description)
        case let error as PSQLError:
            let description = describe(error)
            guard error.code == .server, let state = error.serverInfo?[.sqlState] else {
                // Client-side: the connection failed, closed, or could not be made.
                return .unavailable(description)
            }
            // 08: connection exception; 57P01-57P03: shutdown or not accepting connections yet;
            // 57014: statement timeout; 55P03: lock timeout; 53: out of resources (e.g. too many
            // connections); 40: serialization failure or deadlock — all transient, nothing was
            // committed.
            if state.hasPrefix("08") || state.hasPrefix("57P") || state.hasPrefix("53") || state.hasPrefix("40")
                || state == "57014" || state == "55P03" {
                return .unavailable(description)
            }
            return .database(description)
        case is CancellationError:
            return .unavailable("the database call was cancelled")
        case is PostgresDecodingError:
            return .database("unexpected column type from PostgreSQL: \(String(reflecting: error))")
        default:
            // Errors from the network layer (connection refused, reset, DNS).
            return .unavailable(String(describing: error))
        }
    }

    /// Whether `error` says something about the connection or the server — so the connection is
    /// dropped and the database counted unreachable until the watcher's next probe — rather than
    /// that one statement lost a race on a server that answered: a serialization failure or a
    /// deadlock (class 40) or a lock timeout (55P03) leaves the connection as good as it was, and
    /// counting the database unreachable for it refused every other call of this instance.
    static func isConnectionTrouble(_ error: any Error) -> Bool {
        guard let error = error as? PSQLError, error.code == .server, let state = error.serverInfo?[.sqlState] else { return true }
        return !(state.hasPrefix("40") || state == "55P03")
    }

    /// A PSQLError's useful parts; its `description` deliberately hides them.
    static func describe(_ error: PSQLError) -> String {
        if let info = error.serverInfo {
            let state = info[.sqlState] ?? "?"
            let message = info[.message] ?? ""
            return "PostgreSQL \(state): \(message)"
        }
        if let underlying = error.underlying {
            return "PostgreSQL connection: \(error.code) (\(underlying))"
        }
        return "PostgreSQL connection: \(error.code)"
    }
}
