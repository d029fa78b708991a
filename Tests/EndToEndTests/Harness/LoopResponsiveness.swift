import Foundation
import XCTest

/// `/healthz` latencies measured on one keep-alive connection while an attack runs: how a test
/// shows that the event loop stays free while some client does something expensive.
///
/// ```swift
/// let probe = try LoopResponsiveness.measure(server, clients: 2, seconds: 3) { connection in
///     _ = try? connection.request("POST", "/things", json: ["thing": flood])
/// }
/// XCTAssertLessThanOrEqual(probe.p99, 20)
/// ```
struct LoopResponsiveness {
    /// Milliseconds, sorted.
    let latencies: [Double]
    /// How many attack requests completed meanwhile.
    let attacks: Int

    var median: Double { latencies[latencies.count / 2] }
    var p99: Double { latencies[min(latencies.count - 1, Int(Double(latencies.count) * 0.99))] }
    var max: Double { latencies.last ?? 0 }
    var summary: String {
        String(format: "/healthz median %.2f ms, p99 %.2f ms, max %.2f ms over %d probes; %d attacks",
               median, p99, max, latencies.count, attacks)
    }

    /// Runs `attack` in a loop on `clients` threads (each with its own connection, reopened when
    /// the server closes it) for `seconds`, probing `/healthz` every 10 ms meanwhile. Probing
    /// starts once every client has sent its first attack.
    static func measure(_ server: TidingsProcess, clients: Int, seconds: Double,
                        attack: @escaping @Sendable (HTTPConnection) throws -> Void) throws -> LoopResponsiveness {
        let port = server.port
        let state = AttackState()
        let group = DispatchGroup()
        for _ in 0..<clients {
            group.enter()
            let thread = Thread {
                defer { group.leave() }
                var connection = try? HTTPConnection(port: port, timeout: 60)
                var first = true
                while !state.stopped {
                    if connection == nil { connection = try? HTTPConnection(port: port, timeout: 60) }
                    guard let open = connection else { continue }
                    do { try attack(open) } catch { connection = nil }
                    state.count(first: first)
                    first = false
                }
            }
            thread.stackSize = 1 << 20
            thread.start()
        }
        // Let every client get its first attack in, so the probes overlap the attack.
        let warmUntil = Date().addingTimeInterval(2)
        while state.started < clients && Date() < warmUntil { usleep(5_000) }
        let probe = try server.connect(timeout: 30)
        var latencies: [Double] = []
        let until = Date().addingTimeInterval(seconds)
        while Date() < until {
            let sent = DispatchTime.now()
            let reply = try probe.request("GET", "/healthz")
            XCTAssertEqual(reply.status, 200)
            latencies.append(Double(DispatchTime.now().uptimeNanoseconds - sent.uptimeNanoseconds) / 1e6)
            usleep(10_000)
        }
        state.stop()
        group.wait()
        return LoopResponsiveness(latencies: latencies.sorted(), attacks: state.total)
    }
}

/// Shared between the attack threads and the prober.
private final class AttackState: @unchecked Sendable {
    private let lock = NSLock()
    private var isStopped = false
    private var done = 0
    private var firsts = 0
    var stopped: Bool { lock.lock(); defer { lock.unlock() }; return isStopped }
    var total: Int { lock.lock(); defer { lock.unlock() }; return done }
    var started: Int { lock.lock(); defer { lock.unlock() }; return firsts }
    func stop() { lock.lock(); isStopped = true; lock.unlock() }
    func count(first: Bool) { lock.lock(); done += 1; if first { firsts += 1 }; lock.unlock() }
}
