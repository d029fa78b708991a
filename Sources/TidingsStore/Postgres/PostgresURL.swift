import Foundation
internal import PostgresNIO

/// Where the PostgreSQL store connects: parsed from `--database-url`
/// (`postgres://user:password@host:port/database`, also `postgresql://`).
///
/// Only `sslmode=disable` (or no sslmode) is accepted: this build speaks plain TCP to the
/// database, so a URL that asks for TLS is refused rather than silently downgraded.
struct PostgresURL: Sendable, Hashable {
    var host: String
    var port: Int
    var user: String
    var password: String?
    var database: String

    /// Parses `text`; throws ``StoreError/database(_:)`` naming what is wrong (never echoing the password).
    init(_ text: String) throws {
        guard let components = URLComponents(string: text),
              let scheme = components.scheme?.lowercased(), scheme == "postgres" || scheme == "postgresql" else {
            throw StoreError.database("database URL must look like postgres://user:password@host:port/database")
        }
        guard let host = components.host, !host.isEmpty else {
            throw StoreError.database("database URL has no host")
        }
        guard let user = components.user, !user.isEmpty else {
            throw StoreError.database("database URL has no user")
        }
        let port = components.port ?? 5432
        guard (1...65535).contains(port) else {
            throw StoreError.database("database URL port \(port) is out of range")
        }
        let path = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
        let database = path  // URLComponents has already decoded percent escapes
        guard !database.isEmpty, !database.contains("/") else {
            throw StoreError.database("database URL must name one database: postgres://user@host:port/database")
        }
        for item in components.queryItems ?? [] {
            switch (item.name, item.value) {
            case ("sslmode", "disable"?), ("sslmode", "allow"?), ("sslmode", "prefer"?):
                continue  // the connection is plain TCP, which these modes permit
            case ("sslmode", let mode):
                throw StoreError.database("database URL sslmode=\(mode ?? "") is not supported (use sslmode=disable)")
            default:
                throw StoreError.database("database URL parameter \(item.name) is not supported")
            }
        }
        // IPv6 literals come back in brackets from URLComponents.
        self.host = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        self.port = port
        self.user = user
        self.password = components.password
        self.database = database
    }

    /// `postgres://user@host:port/database` (no password), for log lines.
    var redacted: String { "postgres://\(user)@\(host):\(port)/\(database)" }

    /// A postgres-nio configuration with a bounded connect timeout. `statementTimeout` also
    /// bounds every statement (and lock wait) on the server, so a statement the client gave up
    /// on does not keep running, or keep the revision counter locked, behind its back.
    func configuration(connectTimeout: Duration, statementTimeout: Duration) -> PostgresConnection.Configuration {
        var configuration = PostgresConnection.Configuration(
            host: host, port: port, username: user, password: password, database: database, tls: .disable)
        configuration.options.connectTimeout = .nanoseconds(connectTimeout.nanoseconds)
        let milliseconds = "\(max(1, statementTimeout.nanoseconds / 1_000_000))"
        configuration.options.additionalStartupParameters = [
            ("application_name", "tidings"),
            ("statement_timeout", milliseconds),
            ("lock_timeout", milliseconds),
        ]
        return configuration
    }
}

extension Duration {
    /// Whole nanoseconds (saturating).
    var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        let (product, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        return overflow ? .max : product + attoseconds / 1_000_000_000
    }
}
