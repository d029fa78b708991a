import ArgumentParser
import Foundation
import Observing
import OpenCombine
import TidingsClient

/// `tidings-client`: read, write and watch a Tidings server's preferences from a shell,
/// built on the TidingsClient library (its example).
@main
struct TidingsClientCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tidings-client",
        abstract: "Read, write and watch the preferences of a Tidings server.",
        subcommands: [Get.self, Set.self, Watch.self, History.self, Rollback.self, Export.self, Apply.self])

    /// `tidings-client --url URL get` as well as `tidings-client get --url URL`: the server
    /// options belong to each subcommand, so they are moved after its name before parsing.
    static func main() async {
        let arguments: [String]? = Self.subcommandFirst(Array(CommandLine.arguments.dropFirst()))
        await Self.main(arguments)
    }

    static func subcommandFirst(_ arguments: [String]) -> [String] {
        let names = Swift.Set(configuration.subcommands.map { $0._commandName })
        let takesValue: Swift.Set<String> = ["--url", "--token"]
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            if names.contains(argument) {
                var reordered = arguments
                reordered.remove(at: index)
                reordered.insert(argument, at: 0)
                return reordered
            }
            if argument == "--" { break }
            index += takesValue.contains(argument) ? 2 : 1
        }
        return arguments
    }
}

/// The options every subcommand takes (they may come before the subcommand's name).
struct ServerOptions: ParsableArguments {
    @Option(help: "The server (default: $TIDINGS_URL, else http://127.0.0.1:8080, where `tidings` listens by default).")
    var url: String = ProcessInfo.processInfo.environment["TIDINGS_URL"].flatMap { $0.isEmpty ? nil : $0 } ?? "http://127.0.0.1:8080"

    @Option(help: "Bearer token (default: $TIDINGS_TOKEN).")
    var token: String?

    @Flag(help: "Open the event stream with a one-use ticket instead of the bearer header.")
    var streamTickets = false

    @Option(name: .customLong("env"), help: "The environment (default: $TIDINGS_ENV, else default): every path goes under /environments/ENV.")
    var envOption: String?

    /// `--env`, else a non-empty `$TIDINGS_ENV`, else none (the unprefixed paths).
    var env: String? {
        envOption ?? ProcessInfo.processInfo.environment["TIDINGS_ENV"].flatMap { $0.isEmpty ? nil : $0 }
    }

    func validate() throws {
        guard let parsed = URL(string: url), let scheme = parsed.scheme?.lowercased(), ["http", "https"].contains(scheme),
              parsed.host != nil else {
            throw ValidationError("--url (or $TIDINGS_URL) must be an http or https URL, like http://127.0.0.1:8080, not '\(url)'")
        }
        if let env, env.range(of: "^[a-z][a-z0-9-]{0,31}$", options: .regularExpression) == nil {
            throw ValidationError("--env (or $TIDINGS_ENV) must match ^[a-z][a-z0-9-]{0,31}$, not '\(env)'")
        }
    }

    @MainActor
    func client(preferenceKeys: [String]? = nil) -> TidingsClient {
        let token = token ?? ProcessInfo.processInfo.environment["TIDINGS_TOKEN"].flatMap { $0.isEmpty ? nil : $0 }
        let credentials: TidingsCredentials = token.map { streamTickets ? .bearerWithStreamTickets($0) : .bearer($0) } ?? .none
        return TidingsClient(configuration: .init(
            url: URL(string: url)!, credentials: credentials, preferenceKeys: preferenceKeys,
            observesThings: false, observesPosts: false, environment: env == "default" ? nil : env))
    }
}

extension TidingsClientCommand {
    struct Get: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print the current value of KEY, or of every key, as JSON.")
        @OptionGroup var server: ServerOptions
        @Argument(help: "A preference key (default: every key, as one JSON object).")
        var key: String?

        @MainActor
        func run() async throws {
            let client = server.client()
            do {
                if let key {
                    Output.line(try Output.json(try await client.preferences.fetch(key).value))
                } else {
                    Output.line(try Output.json(try await client.preferences.fetchAll()))
                }
            } catch let error as TidingsClientError {
                throw Output.failure(error)
            }
        }
    }

    struct Set: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Set KEY to a JSON value; print the key's new record.")
        @OptionGroup var server: ServerOptions
        @Argument(help: "A preference key.")
        var key: String
        @Argument(help: "The new value as JSON: true, 6, 2.5, '\"text\"'.")
        var value: String
        @Option(help: "Write only if the key still has this revision (If-Match).")
        var ifRevision: UInt64?

        @MainActor
        func run() async throws {
            guard let parsed = try? JSONDecoder().decode(PreferenceValue.self, from: Data(value.utf8)) else {
                throw ValidationError("VALUE must be a JSON boolean, number or string (quote strings: '\"text\"')")
            }
            do {
                let record = try await server.client().preferences.set(parsed, forKey: key, ifRevision: ifRevision)
                Output.line(try Output.json(record))
            } catch let error as TidingsClientError {
                throw Output.failure(error)
            }
        }
    }

    struct Watch: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print one JSON line {\"key\",\"value\",\"revision\"} per change, the current values first.",
            discussion: "Keeps going across server restarts (it reconnects and resumes without gaps or repeats).")
        @OptionGroup var server: ServerOptions
        @Option(help: "Comma-separated keys to watch (default: every key).")
        var keys: String?
        @Flag(help: "Report the connection's state changes on stderr.")
        var verbose = false

        @MainActor
        func run() async throws {
            let wanted = keys.map { $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty } }
            if let wanted, wanted.isEmpty { throw ValidationError("--keys names no key") }
            let client = server.client(preferenceKeys: wanted)
            var subscriptions: [AnyCancellable] = []
            subscriptions.append(client.preferences.changes.sink { change in
                if let line = try? Output.json(change) { Output.line(line) }
            })
            let failure: TidingsClientError = await withCheckedContinuation { continuation in
                subscriptions.append(client.connectionState.sink { [verbose] state in
                    if verbose { Output.error("tidings-client: \(state)") }
                    if case let .failed(error) = state { continuation.resume(returning: error) }
                })
                client.connect()
            }
            withExtendedLifetime(subscriptions) {}
            throw Output.failure(failure)
        }
    }
}

/// Unbuffered output, so that a pipe reader sees each line as it is printed.
enum Output {
    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    static func json(_ value: some Encodable) throws -> String {
        String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    static func line(_ text: String) {
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }

    static func error(_ text: String) {
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }

    /// Prints the server's refusal and ends with status 1.
    static func failure(_ error: TidingsClientError) -> ExitCode {
        Self.error("tidings-client: \(error)")
        return ExitCode.failure
    }
}

extension TidingsClientCommand {
    struct History: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print change records as JSON lines: who, when, why, before and after (newest first).")
        @OptionGroup var server: ServerOptions
        @Option(help: "Only this preference's records.")
        var key: String?
        @Flag(help: "Only the thing list's records.")
        var things = false
        @Option(help: "Records below this revision (page backwards).")
        var before: UInt64?
        @Option(help: "Records above this revision, oldest first.")
        var after: UInt64?
        @Option(help: "Records at most (1 to 1000; default 100).")
        var limit: Int?

        func validate() throws {
            if key != nil && things { throw ValidationError("--key and --things name different histories; give one") }
            if let limit, !(1...1_000).contains(limit) { throw ValidationError("--limit must be from 1 to 1000") }
        }

        @MainActor
        func run() async throws {
            let scope: HistoryScope = key.map { .preference($0) } ?? (things ? .things : .all)
            do {
                let page = try await server.client().history(scope, before: before, after: after, limit: limit)
                for record in page.changes { Output.line(try Output.json(record)) }
            } catch let error as TidingsClientError {
                throw Output.failure(error)
            }
        }
    }

    struct Rollback: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Put preferences (or, with --things, the thing list) back as they were at REVISION; print the records it made.")
        @OptionGroup var server: ServerOptions
        @Argument(help: "The revision to go back to.")
        var revision: UInt64
        @Option(help: "Comma-separated keys to roll back (default: every key).")
        var keys: String?
        @Flag(help: "Roll the thing list back instead.")
        var things = false
        @Option(help: "Why (recorded; default: rollback to REVISION).")
        var reason: String?
        @Option(help: "Only if the server is still at this global revision (If-Match).")
        var ifRevision: UInt64?

        func validate() throws {
            if keys != nil && things { throw ValidationError("--keys applies to preferences, not --things") }
        }

        @MainActor
        func run() async throws {
            let client = server.client()
            let named = keys.map { $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty } }
            do {
                let result = things
                    ? try await client.rollbackThings(to: revision, reason: reason, ifRevision: ifRevision)
                    : try await client.rollbackPreferences(to: revision, keys: named, reason: reason, ifRevision: ifRevision)
                for record in result.changes { Output.line(try Output.json(record)) }
            } catch let error as TidingsClientError {
                throw Output.failure(error)
            }
        }
    }
}
