import EventHTTP
import Synchronization
public import Foundation
import HTTPTypes
import Logging
public import TestFixtures
public import TidingsAPI

/// A Tidings server in the test's own process: the real ``TidingsApplication`` — every route,
/// the router's and the groups' middleware (access, CORS, caching, revision header, metrics) —
/// over a real SQLite file in a temporary directory, driven through `Router.respond(to:)`: no
/// binary, no port, no socket. Event streams are recorded as a socket would carry them
/// (`InProcessStream`) and read like a live stream.
///
/// Use it for what a route decides; what only a process shows (signals, sockets, framing,
/// timing under load, several processes) stays with the live transport.
///
/// Main-thread only: a test's synchronous methods run there, and every call waits by turning the
/// main run loop until the answer (the routes finish their work on the main actor).
///
/// ```swift
/// let server = try InProcessTidings { $0.readToken = "r" }
/// XCTAssertEqual(try server.get("/preferences").status, 401)
/// ```
public final class InProcessTidings: TidingsTransport {
    /// The `--data-dir` (a fresh temporary directory unless given; removed by `stop` if ours).
    public let dataDirectory: URL
    public let configuration: TidingsConfiguration
    private let ownsDataDirectory: Bool
    private var app: TidingsApplication?
    private let logs = LogCapture()
    private var streams: [WeakReader] = []
    /// How long one request may take before the transport gives up (`HTTPConnectionError.timeout`).
    public var timeout: Double = 10

    /// Everything the application logged so far.
    public var log: String { logs.text }

    /// Starts the application with the default configuration changed by `configure`, on
    /// `dataDirectory` (else a fresh one), and marks it ready.
    public init(dataDirectory: URL? = nil, _ configure: (inout TidingsConfiguration) -> Void = { _ in }) throws {
        if let dataDirectory {
            self.dataDirectory = dataDirectory
            ownsDataDirectory = false
        } else {
            self.dataDirectory = FileManager.default.temporaryDirectory
                .appendingPathComponent("tidings-inprocess-\(UUID().uuidString)")
            ownsDataDirectory = true
        }
        var configuration = TidingsConfiguration()
        configuration.port = 0
        configuration.feedRefresh = 0
        configure(&configuration)
        configuration.dataDir = self.dataDirectory.path
        self.configuration = configuration
        try FileManager.default.createDirectory(at: self.dataDirectory, withIntermediateDirectories: true)
        let logs = self.logs
        let level = Logger.Level(rawValue: configuration.logLevel) ?? .info
        let logger = Logger(label: "tidings") { label in CapturingLogHandler(label: label, capture: logs, logLevel: level) }
        do {
            app = try MainActor.assumeIsolated {
                let app = try TidingsApplication(configuration: configuration, loop: try EventLoop(), logger: logger)
                app.markReady()
                return app
            }
        } catch {
            if ownsDataDirectory { try? FileManager.default.removeItem(at: self.dataDirectory) }
            throw error
        }
    }

    deinit { stop() }

    /// Ends open streams, runs the application's shutdown (writes drained, store closed) and
    /// removes the data directory if it is ours. Idempotent.
    public func stop() {
        guard let app else { return }
        self.app = nil
        for reader in streams { reader.reader?.close() }
        streams = []
        let done = Mutex(false)
        MainActor.assumeIsolated {
            app.shutdown { done.withLock { $0 = true } }
        }
        _ = runMainLoop(timeout: 10) { done.withLock { $0 } }
        if ownsDataDirectory { try? FileManager.default.removeItem(at: dataDirectory) }
    }

    // MARK: TidingsTransport

    public func request(_ method: String, _ target: String, headers: [String: String] = [:], body: [UInt8] = []) throws -> HTTPReply {
        switch try answer(method, target, headers: headers, body: body) {
        case let .response(response):
            return Self.reply(response, method: method)
        case let .eventStream(stream):
            // Asked as a plain request: what the stream said so far, then the client goes away.
            let reply = HTTPReply(status: stream.head.status.code, headers: Self.fields(stream.head.headers), body: stream.body)
            stream.close()
            return reply
        }
    }

    public func openEventStream(_ target: String, headers: [String: String] = [:]) throws -> InProcessEventStream {
        var headers = headers
        if headers["Accept"] == nil { headers["Accept"] = "text/event-stream" }
        let reader: InProcessEventStream
        switch try answer("GET", target, headers: headers, body: []) {
        case let .response(response):
            reader = InProcessEventStream(answered: Self.reply(response, method: "GET"))
        case let .eventStream(stream):
            reader = InProcessEventStream(stream: stream,
                                          head: HTTPReply(status: stream.head.status.code, headers: Self.fields(stream.head.headers), body: []))
        }
        streams.removeAll { $0.reader == nil }
        streams.append(WeakReader(reader: reader))
        return reader
    }

    // MARK: Requests through the router

    private func answer(_ method: String, _ target: String, headers: [String: String], body: [UInt8]) throws -> InProcessAnswer {
        guard let app else { throw HTTPConnectionError.closed }
        guard let requestMethod = HTTPRequest.Method(method) else {
            throw InProcessError.unsupported("method \(method) (send it over a socket)")
        }
        var fields = HTTPFields()
        if !headers.keys.contains(where: { $0.lowercased() == "host" }) { fields[Self.hostField] = "127.0.0.1" }
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) {
            guard let fieldName = HTTPField.Name(name) else {
                throw InProcessError.unsupported("header name \(name.debugDescription) (send it over a socket)")
            }
            fields.append(HTTPField(name: fieldName, value: value))
        }
        if (!body.isEmpty || ["POST", "PUT", "PATCH"].contains(method)), fields[.contentLength] == nil {
            fields[.contentLength] = String(body.count)
        }
        var request = Request(method: requestMethod, target: target, headers: fields, body: body,
                              receivedAt: DispatchTime.now().uptimeNanoseconds)
        request.clientAddress = "127.0.0.1"
        let limit = configuration.server.maxBodySize
        return try awaitOnMain(timeout: timeout) { [request] in
            await app.router.respond(to: request, bodyLimit: limit)
        }
    }

    /// What a socket would carry: the status, the fields (with `Content-Length` as the connection adds
    /// it), no body for HEAD, 1xx, 204 and 304.
    static func reply(_ response: Response, method: String) -> HTTPReply {
        let code = response.status.code
        let forbidsBody = code == 204 || code == 304 || (100..<200).contains(code)
        var headers = fields(response.headers)
        if !forbidsBody, !headers.contains(where: { $0.name.lowercased() == "content-length" }) {
            headers.append(("Content-Length", String(response.body.count)))
        }
        return HTTPReply(status: code, headers: headers, body: forbidsBody || method == "HEAD" ? [] : response.body)
    }

    private static let hostField = HTTPField.Name("Host")!

    static func fields(_ headers: HTTPFields) -> [(name: String, value: String)] {
        headers.map { (name: $0.name.rawName, value: $0.value) }
    }
}

/// A request the in-process transport cannot carry (it is not HTTP the router would ever see).
public enum InProcessError: Error, CustomStringConvertible {
    case unsupported(String)
    public var description: String {
        switch self { case let .unsupported(what): "in-process transport cannot send \(what)" }
    }
}

private struct WeakReader {
    weak var reader: InProcessEventStream?
}

/// The application's log lines, kept for tests that check what was (not) logged.
final class LogCapture: Sendable {
    private let lines = Mutex<[String]>([])
    func append(_ line: String) { lines.withLock { $0.append(line) } }
    var text: String { lines.withLock { $0 }.joined(separator: "\n") }
}

/// A swift-log handler writing into a ``LogCapture`` (level, label, message, metadata).
struct CapturingLogHandler: LogHandler {
    let label: String
    let capture: LogCapture
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let (level, message) = (event.level, event.message)
        let merged = self.metadata.merging(event.metadata ?? [:]) { $1 }
        let fields = merged.isEmpty ? "" : " " + merged.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        capture.append("\(level) \(label): \(message)\(fields)")
    }
}
