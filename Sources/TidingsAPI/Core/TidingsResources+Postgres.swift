import Logging
import TidingsStore

extension TidingsResources {
    /// PostgreSQL for `--database-url`: connects (retrying for a while if the database is not
    /// up yet), creates or migrates the schema, starts listening. Blocks start-up until then.
    static func openPostgres(
        url: String, limits: ChangeStoreLimits, options: PostgresStoreOptions, logger: Logger
    ) throws -> any ChangeStore {
        do {
            return try blockingAwait {
                try await PostgresStore.connect(url: url, limits: limits, logger: logger, options: options)
            }
        } catch {
            throw StartupError(description: "cannot open the database \(redacted(url)): \(error)")
        }
    }
}
