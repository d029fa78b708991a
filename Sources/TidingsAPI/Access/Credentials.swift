import Logging

/// The server's credentials as they stand: `--api-token`, `--read-token` and the `--tokens`
/// file, which SIGHUP reloads (``reload()``). A file that does not load at start stops the
/// server; on reload it leaves the credentials as they were and logs why.
///
/// Confined to the event loop (the access check, the write path and the signal handler all run
/// there), so the swap needs no lock.
final class Credentials {
    let apiTokens: [String]
    let readToken: String?
    /// `--tokens FILE`, if given.
    let tokensFile: String?
    private(set) var policy: AccessPolicy
    private let logger: Logger

    init(configuration: TidingsConfiguration, logger: Logger) throws(StartupError) {
        apiTokens = configuration.apiTokens
        readToken = configuration.readToken
        tokensFile = configuration.tokensFile
        self.logger = logger
        var named: [NamedCredential] = []
        if let path = configuration.tokensFile {
            do {
                named = try TokensFile.load(path: path, serverTokens: configuration.apiTokens + [configuration.readToken].compactMap { $0 })
            } catch {
                throw StartupError(description: error.description)
            }
        }
        policy = AccessPolicy(apiTokens: apiTokens, readToken: readToken, named: named)
    }

    /// Reads the `--tokens` file again; true when the new set is in force.
    @discardableResult
    func reload() -> Bool {
        guard let path = tokensFile else { return false }
        do {
            let named = try TokensFile.load(path: path, serverTokens: apiTokens + [readToken].compactMap { $0 })
            policy = AccessPolicy(apiTokens: apiTokens, readToken: readToken, named: named)
            logger.notice("reloaded --tokens file", metadata: ["path": "\(path)", "credentials": "\(named.count)"])
            return true
        } catch {
            logger.error("kept the previous credentials: \(error.description)")
            return false
        }
    }
}
