import Foundation
import Synchronization
import TestFixtures
import TidingsTesting
import XCTest

/// `/healthz` latencies measured on one keep-alive connection while an attack runs: how a test
/// shows that the event loop stays free while some client does something expensive.
///
/// ```swift
/// let probe = try LoopResponsiveness.measure(server, clients: 2, seconds: 3) { connection in
///     _ = try? connection.request("POST", "/things", json: ["thing": flood])
/// }
/// probe.assertResponsive()     // p99 within 20 ms (more on a busy machine: see p99Budget)
/// ```
struct LoopResponsiveness {
    /// Milliseconds, sorted.
    let latencies: [Double]
    /// How many attack requests completed meanwhile.
    let attacks: Int
    /// `/healthz` p99 (ms) on the same server just before the attack, with nothing else running
    /// in it: what this machine gives at the moment.
    var baselineP99: Double = 0

    /// The p99 an attack may cost: 20 ms (the bar) on a quiet machine; on a busy one
    /// (other processes on the 2 cores, as in CI next to a build) three times what the machine
    /// gave just before, plus 10 ms. The freezes these tests catch are hundreds of ms to seconds.
    var p99Budget: Double { Swift.max(20, baselineP99 * 3 + 10) }

    /// Fails the test when the loop was not free enough during the attack.
    func assertResponsive(file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertLessThanOrEqual(p99, p99Budget, summary, file: file, line: line)
    }

    var median: Double { latencies[latencies.count / 2] }
    var p99: Double { latencies[min(latencies.count - 1, Int(Double(latencies.count) * 0.99))] }
    var max: Double { latencies.last ?? 0 }
    var summary: String {
        String(format: "/healthz median %.2f ms, p99 %.2f ms, max %.2f ms over %d probes; %d attacks (p99 before the attack %.2f ms, budget %.1f ms)",
               median, p99, max, latencies.count, attacks, baselineP99, p99Budget)
    }

    /// Runs `attack` in a loop on `clients` threads (each with its own connection, reopened when
    /// the server closes it) for `seconds`, probing `/healthz` every 10 ms meanwhile. Probing
    /// starts once every client has sent its first attack.
    ///
    /// A run over budget is run once more, and the better of the two kept: what these tests catch
    /// (the loop frozen by the attack) happens again in every run, while a burst of a neighbouring
    /// job's work on the shared cores (CI runs four jobs on two) rarely falls on both. Under such a
    /// burst a p99 of 51 ms against a 41 ms budget was seen once, with no freeze.
    static func measure(_ server: TidingsProcess, clients: Int, seconds: Double,
                        attack: @escaping @Sendable (HTTPConnection) throws -> Void) throws -> LoopResponsiveness {
        let first = try measureOnce(server, clients: clients, seconds: seconds, attack: attack)
        guard first.p99 > first.p99Budget else { return first }
        print("over budget, measured again: \(first.summary)")
        let second = try measureOnce(server, clients: clients, seconds: seconds, attack: attack)
        return second.p99 - second.p99Budget < first.p99 - first.p99Budget ? second : first
    }

    private static func measureOnce(_ server: TidingsProcess, clients: Int, seconds: Double,
                                    attack: @escaping @Sendable (HTTPConnection) throws -> Void) throws -> LoopResponsiveness {
        let port = server.port
        let baseline = try probe(server, seconds: 1)
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
        var result = LoopResponsiveness(latencies: latencies.sorted(), attacks: state.total)
        result.baselineP99 = baseline.p99
        return result
    }

    /// `/healthz` alone for `seconds`, every 10 ms.
    private static func probe(_ server: TidingsProcess, seconds: Double) throws -> LoopResponsiveness {
        let connection = try server.connect(timeout: 30)
        var latencies: [Double] = []
        let until = Date().addingTimeInterval(seconds)
        while Date() < until {
            let sent = DispatchTime.now()
            _ = try connection.request("GET", "/healthz")
            latencies.append(Double(DispatchTime.now().uptimeNanoseconds - sent.uptimeNanoseconds) / 1e6)
            usleep(10_000)
        }
        return LoopResponsiveness(latencies: latencies.sorted(), attacks: 0)
    }
}

/// Shared between the attack threads and the prober.
private final class AttackState: Sendable {
    private struct Counts {
        var isStopped = false
        var done = 0
        var firsts = 0
    }

    private let counts = Mutex(Counts())
    var stopped: Bool { counts.withLock { $0.isStopped } }
    var total: Int { counts.withLock { $0.done } }
    var started: Int { counts.withLock { $0.firsts } }
    func stop() { counts.withLock { $0.isStopped = true } }
    func count(first: Bool) {
        counts.withLock { counts in
            counts.done += 1
            if first { counts.firsts += 1 }
        }
    }
}
