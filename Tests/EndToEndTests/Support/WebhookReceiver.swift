import Foundation
import TestFixtures

/// The tests' webhook receiver: Tests/webhooks/receiver.py on a loopback port, which checks each
/// delivery's signature with the Standard Webhooks reference library (`standardwebhooks`) and
/// answers as scripted. `url(for:)` is a hook's address on it.
final class WebhookReceiver {
    /// A secret of 32 random bytes, in Standard Webhooks form.
    let secret = "whsec_" + Data((0..<32).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
    let port: Int
    private let child: SpawnedProcess
    private let output: URL
    /// Where `file(_:)` writes `--webhooks` files: one directory per receiver, removed by `stop()`
    /// (the tests stop the receiver in a teardown block), so a run leaves no files behind.
    private let directory: URL

    /// One delivery attempt as the receiver saw it.
    struct Attempt {
        let hook: String
        let id: String
        let verified: Bool
        let payload: JSONValue
        /// The status it answered; nil while held (`hang`).
        let answered: Int?
        let start: Double
        let end: Double?
        var revision: Int? { payload["data"]?["revision"]?.intValue }
    }

    init() throws {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../webhooks/receiver.py").standardized.path
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("webhook-receiver-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false)
        output = directory.appendingPathComponent("receiver.log")
        child = try SpawnedProcess("/usr/bin/env", ["python3", script, secret], output: output.path)
        var port: Int?
        let deadline = Date().addingTimeInterval(15)
        while port == nil, Date() < deadline, child.poll() == nil {
            let text = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
            if let line = text.split(separator: "\n").first(where: { $0.hasPrefix("receiver listening on ") }) {
                port = Int(line.split(separator: " ").last ?? "")
            } else {
                usleep(20_000)
            }
        }
        guard let port else {
            let log = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
            child.kill()
            try? FileManager.default.removeItem(at: directory)
            throw NSError(domain: "WebhookReceiver", code: 1, userInfo: [NSLocalizedDescriptionKey: "receiver did not start: \(log)"])
        }
        self.port = port
    }

    deinit { stop() }

    func stop() {
        if child.poll() == nil {
            child.kill()
            _ = child.wait(timeout: 5)
        }
        try? FileManager.default.removeItem(at: directory)
    }

    func url(for hook: String) -> String { "http://127.0.0.1:\(port)/hook/\(hook)" }

    /// The next answers for `hook` (statuses, or "hang"), then 200s that wait `delay` seconds.
    func script(_ hook: String, _ answers: [Any], delay: Double = 0) throws {
        let reply = try HTTPConnection(port: port).request("POST", "/control/\(hook)", json: ["script": answers, "delay": delay])
        guard reply.status == 200 else { throw NSError(domain: "WebhookReceiver", code: 2) }
    }

    /// Every attempt so far, in arrival order.
    func attempts(_ hook: String? = nil) throws -> [Attempt] {
        let reply = try HTTPConnection(port: port).request("GET", "/deliveries")
        let value = JSONValue.parse(reply.body) ?? .null
        return (value["attempts"]?.arrayValue ?? []).compactMap { item -> Attempt? in
            guard let name = item["hook"]?.stringValue, hook == nil || name == hook else { return nil }
            return Attempt(hook: name, id: item["id"]?.stringValue ?? "", verified: item["verified"]?.boolValue ?? false,
                           payload: item["payload"] ?? .null, answered: item["answered"]?.intValue,
                           start: item["start"]?.numberValue ?? 0, end: item["end"]?.numberValue)
        }
    }

    /// The attempts `hook` answered with a 2xx, in arrival order.
    func delivered(_ hook: String) throws -> [Attempt] {
        try attempts(hook).filter { ($0.answered ?? 0) / 100 == 2 }
    }

    /// The most deliveries of `hook` open at once.
    func maxInFlight(_ hook: String) throws -> Int {
        let reply = try HTTPConnection(port: port).request("GET", "/deliveries")
        return JSONValue.parse(reply.body)?["maxInFlight"]?[hook]?.intValue ?? 0
    }

    /// The deliveries of `hook` open now (read, not yet answered).
    func inFlight(_ hook: String) throws -> Int {
        let reply = try HTTPConnection(port: port).request("GET", "/deliveries")
        return JSONValue.parse(reply.body)?["inFlight"]?[hook]?.intValue ?? 0
    }

    /// A `--webhooks` file with `hooks` (`name` → extra members), written to a fresh path in the
    /// receiver's directory (removed with it by `stop()`).
    func file(_ hooks: [(name: String, extra: [String: Any])]) throws -> URL {
        let entries: [[String: Any]] = hooks.map { hook in
            ["name": hook.name, "url": url(for: hook.name), "secret": secret].merging(hook.extra) { $1 }
        }
        let path = directory.appendingPathComponent("webhooks-\(UUID().uuidString).json")
        try JSONSerialization.data(withJSONObject: entries).write(to: path)
        return path
    }
}
