import ArgumentParser
import Foundation
import TidingsClient

/// `tidings-client export` and `tidings-client apply FILE`: the configuration kept in a file
/// (in git) and applied from CI (API.md "Changes as code").
extension TidingsClientCommand {
    struct Export: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print the configuration (every preference and the thing list) as a document `apply` takes back.")
        @OptionGroup var server: ServerOptions
        @Flag(help: "YAML instead of JSON.")
        var yaml = false
        @Option(help: "As of this revision or RFC 3339 time.")
        var asOf: String?

        @MainActor
        func run() async throws {
            let client = server.client()
            let body: Data
            do throws(TidingsClientError) {
                body = try await client.export(format: yaml ? .yaml : .json, asOf: asOf)
            } catch {
                throw Output.failure(error)
            }
            var text = String(decoding: body, as: UTF8.self)
            if !text.hasSuffix("\n") { text += "\n" }
            FileHandle.standardOutput.write(Data(text.utf8))
        }
    }

    struct Apply: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Make the configuration match FILE (JSON, or YAML for .yaml/.yml) as one write; print what changed.")
        @OptionGroup var server: ServerOptions
        @Argument(help: "The document (`-` reads standard input).")
        var file: String
        @Flag(help: "Only print what would change.")
        var dryRun = false
        @Flag(help: "Reset preferences the document does not name to their defaults.")
        var prune = false
        @Flag(help: "The document is YAML (default: by the file's extension).")
        var yaml = false
        @Option(help: "Why (recorded with every change).")
        var reason: String?
        @Option(help: "Only if the server is still at this global revision (If-Match).")
        var ifRevision: UInt64?

        @MainActor
        func run() async throws {
            guard let document = Self.read(file) else { throw ExitCode.failure }
            let format: DocumentFormat = yaml || file.hasSuffix(".yaml") || file.hasSuffix(".yml") ? .yaml : .json
            let client = server.client()
            let answer: Data
            do throws(TidingsClientError) {
                answer = try await client.apply(document, format: format, dryRun: dryRun, prune: prune,
                                                reason: reason, ifRevision: ifRevision)
            } catch {
                throw Output.failure(error)
            }
            Output.line(String(decoding: answer, as: UTF8.self))
        }

        /// The file's bytes (standard input for `-`), or nil after saying why not.
        static func read(_ file: String) -> Data? {
            if file == "-" { return FileHandle.standardInput.readDataToEndOfFile() }
            guard let data = FileManager.default.contents(atPath: file) else {
                Output.error("tidings-client: cannot read \(file)")
                return nil
            }
            return data
        }
    }
}
