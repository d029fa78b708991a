import Logging
import TidingsStore

extension TidingsResources {
    /// PostgreSQL for `--database-url` (filled in when the PostgreSQL store lands).
    static func openPostgres(url: String, limits: ChangeStoreLimits, logger: Logger) throws -> any ChangeStore {
        throw StartupError(description: "--database-url: PostgreSQL support is not built into this binary")
    }
}
