@testable import EventHTTP
import XCTest

/// The body budget as a property (attack review 4, finding 1): whatever several clients do at
/// once — heads alone, bodies left half-sent, bodies in pieces, whole requests, connections that
/// close — a complete small write from a client that sent nothing else is never refused, the
/// budget never holds more than its total or a client more than its share, and every byte
/// comes back when the connections close.
final class BodyBudgetPropertyTests: XCTestCase {
    private struct Generator {
        var state: UInt64
        mutating func next(_ bound: Int) -> Int {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return Int((state >> 33) % UInt64(bound))
        }
    }

    private static let limit = 4_000
    private static let perClient = 1_500
    private static let maxBody = 2_000

    func testACompleteSmallWriteFromAnotherClientIsNeverRefused() {
        for seed in 0..<300 {
            var random = Generator(state: UInt64(seed) &+ 0x9E37_79B9_7F4A_7C15)
            let budget = BodyBudget(limit: Self.limit, perClient: Self.perClient)
            var connections: [FramingDriver] = []
            for step in 0..<60 {
                switch random.next(6) {
                case 0, 1:
                    // A new connection from one of five busy clients: a head, maybe some body.
                    var driver = FramingDriver(maxHeadBytes: 1024, maxBodyBytes: Self.maxBody, budget: budget)
                    driver.machine.client = "10.0.0.\(random.next(5))"
                    let length = 1 + random.next(Self.maxBody)
                    let sent = random.next(length + 1)
                    driver.feed(Array("PUT /x HTTP/1.1\r\nHost: h\r\nContent-Length: \(length)\r\n\r\n".utf8)
                                + [UInt8](repeating: 0x61, count: sent))
                    connections.append(driver)
                case 2 where !connections.isEmpty:
                    // More of some connection's body (possibly completing it, possibly pipelining).
                    let index = random.next(connections.count)
                    connections[index].feed([UInt8](repeating: 0x62, count: 1 + random.next(700)))
                case 3 where !connections.isEmpty:
                    let index = random.next(connections.count)
                    connections[index].machine.close()
                    connections.remove(at: index)
                case 4:
                    // A chunked body in progress.
                    var driver = FramingDriver(maxHeadBytes: 1024, maxBodyBytes: Self.maxBody, budget: budget)
                    driver.machine.client = "10.0.0.\(random.next(5))"
                    let size = 1 + random.next(900)
                    driver.feed(Array("POST /x HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n\(String(size, radix: 16))\r\n".utf8)
                                + [UInt8](repeating: 0x63, count: random.next(size + 1)))
                    connections.append(driver)
                default:
                    // The innocent: a client that sent nothing else, one complete small write.
                    var innocent = FramingDriver(maxHeadBytes: 1024, maxBodyBytes: Self.maxBody, budget: budget)
                    innocent.machine.client = "192.0.2.\(step)"
                    let body = [UInt8](repeating: 0x7B, count: 1 + random.next(512))
                    let request = Array("PUT /y HTTP/1.1\r\nHost: h\r\nContent-Length: \(body.count)\r\n\r\n".utf8) + body
                    innocent.feed(request)
                    XCTAssertEqual(innocent.refusals, [], "seed \(seed), step \(step): held \(budget.used)")
                    XCTAssertEqual(innocent.output, request, "seed \(seed), step \(step): handed on as it came")
                    innocent.machine.close()
                }
                XCTAssertLessThanOrEqual(budget.used, Self.limit, "seed \(seed)")
                for client in 0..<5 {
                    XCTAssertLessThanOrEqual(budget.held(by: "10.0.0.\(client)"), Self.perClient, "seed \(seed)")
                }
                XCTAssertEqual(budget.used, connections.reduce(0) { $0 + $1.machine.reserved }, "seed \(seed): budget and connections agree")
            }
            for index in connections.indices { connections[index].machine.close() }
            XCTAssertEqual(budget.used, 0, "seed \(seed): everything given back")
        }
    }
}
