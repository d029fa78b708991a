@testable import EventHTTP
import HTTPTypes
import XCTest

/// The framing machine alone, over bytes (no libevent, no sockets): what it hands on, what it
/// refuses, which deadline it asks for, and the body budget it holds. The connection on real
/// sockets is in ConnectionGuardTests and GuardBoundsTests; Fuzz/FramingFuzz.swift explores the rest.
final class FramingMachineTests: XCTestCase {
    private func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    private func framed(_ text: String, pieces: Int = 1, maxBody: Int = 1000, budget: BodyBudget? = nil) -> FramingDriver {
        var driver = FramingDriver(maxHeadBytes: 256, maxBodyBytes: maxBody, budget: budget)
        let all = bytes(text)
        let size = max(1, (all.count + pieces - 1) / pieces)
        var index = 0
        while index < all.count {
            driver.feed(Array(all[index..<min(all.count, index + size)]))
            index += size
        }
        return driver
    }

    func testCleanHeadsPassAsTheyAre() {
        let first = "GET /a HTTP/1.1\r\nHost: h\r\n\r\n", second = "PUT /b HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\n"
        let third = "GET /c HTTP/1.0\r\n\r\n"
        var machine = FramingMachine(maxHeadBytes: 256, maxBodyBytes: 1000, budget: nil)
        let input = ByteQueue()
        input.append(bytes(first + second + "abc" + third))
        XCTAssertEqual(machine.step(input), .cleanHead(first.utf8.count), "the first head, where it lies")
        input.removeFirst(first.utf8.count)
        XCTAssertEqual(machine.step(input), .cleanHead(second.utf8.count), "the second head")
        input.removeFirst(second.utf8.count)
        XCTAssertEqual(machine.clock.deadline, .body, "its body's deadline runs from the head")
        XCTAssertEqual(machine.step(input), .body(3), "exactly the announced body")
        input.removeFirst(3)
        XCTAssertEqual(machine.clock.deadline, .none)
        XCTAssertEqual(machine.step(input), .cleanHead(third.utf8.count), "a pipelined request boundary right after the body")
        input.removeFirst(third.utf8.count)
        XCTAssertEqual(machine.step(input), .needMore)
        XCTAssertEqual(machine.heads, 3)
        XCTAssertEqual(machine.minorVersion, 0)
    }

    func testHowBytesArriveDoesNotChangeWhatIsHandedOn() {
        let text = "\r\nGET /a HTTP/1.1\nHost:  h \n\nPOST /b HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3;x=1\r\nabc\r\n0\r\nT: v\r\n\r\n"
            + "HEAD / HTTP/1.1\r\nContent-Length: 4\r\n\r\nbodyGET /d HTTP/1.1\r\n\r\n"
        let whole = framed(text)
        XCTAssertEqual(String(decoding: whole.output, as: UTF8.self),
                       "GET /a HTTP/1.1\r\nHost: h\r\n\r\nPOST /b HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc"
                       + "HEAD / HTTP/1.1\r\nContent-Length: 4\r\n\r\nGET /d HTTP/1.1\r\n\r\n",
                       "normalised head, de-chunked body with its length, HEAD's body dropped")
        XCTAssertEqual(whole.refusals, [])
        for pieces in [2, 3, 7, text.utf8.count] {
            let split = framed(text, pieces: pieces)
            XCTAssertEqual(split.output, whole.output, "in \(pieces) pieces")
            XCTAssertEqual(split.refusals, [])
        }
    }

    func testAmbiguousFramingIsRefusedAndNothingAfterItIsRead() {
        let smuggled = "POST / HTTP/1.1\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /admin HTTP/1.1\r\n\r\n"
        let driver = framed("GET /ok HTTP/1.1\r\n\r\n" + smuggled)
        XCTAssertEqual(driver.refusals.map(\.status.code), [400])
        XCTAssertEqual(String(decoding: driver.output, as: UTF8.self),
                       "GET /ok HTTP/1.1\r\n\r\n", "the first request, nothing of the refused one")
        XCTAssertEqual(driver.unconsumed, 0, "what followed was taken and dropped")
        XCTAssertTrue(driver.machine.isClosed)
        XCTAssertEqual(driver.machine.heads, 1, "the refused head is not read")
    }

    func testRefusalsCarryTheirStatus() {
        XCTAssertEqual(framed("GET / HTTP/2.0\r\n\r\n").refusals.map(\.status.code), [505])
        XCTAssertEqual(framed("BREW / HTTP/1.1\r\n\r\n").refusals.map(\.status.code), [501])
        XCTAssertEqual(framed("PUT / HTTP/1.1\r\nContent-Length: 1001\r\n\r\n").refusals.map(\.status.code), [413])
        XCTAssertEqual(framed("GET / HTTP/1.1\r\nX: " + String(repeating: "a", count: 300) + "\r\n\r\n", pieces: 5)
            .refusals.map(\.status.code), [431])
        XCTAssertEqual(framed("PUT / HTTP/1.1\r\nExpect: tea\r\nContent-Length: 1\r\n\r\nx").refusals.map(\.status.code), [417])
        XCTAssertEqual(framed("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n").refusals.map(\.status.code), [400])
        let refused = framed("GET / HTTP/1.0\r\n\r\nGET / HTTP/1.0\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n")
        XCTAssertEqual(String(decoding: refused.output, as: UTF8.self), "GET / HTTP/1.0\r\n\r\n")
        XCTAssertEqual(refused.machine.minorVersion, 0, "the refusal speaks the version of the last request read")
    }

    func testTheHeadDeadlineRunsFromTheFirstByteUntilTheHeadIsComplete() {
        var driver = FramingDriver()
        driver.feed(bytes("GET / HT"))
        XCTAssertEqual(driver.machine.clock.deadline, .head)
        let started = driver.machine.clock.started
        driver.feed(bytes("TP/1.1\r\nHost: h\r\n"))
        XCTAssertEqual(driver.machine.clock, .init(deadline: .head, started: started), "not restarted by more bytes")
        driver.feed(bytes("\r\n"))
        XCTAssertEqual(driver.machine.clock.deadline, .none)
        XCTAssertEqual(driver.output, bytes("GET / HTTP/1.1\r\nHost: h\r\n\r\n"))
    }

    func testExpectContinueIsReportedWithTheHead() {
        let driver = framed("PUT / HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n")
        XCTAssertEqual(driver.continues, 1)
        XCTAssertEqual(driver.output, bytes("PUT / HTTP/1.1\r\nContent-Length: 2\r\n\r\n"), "without the Expect field")
        XCTAssertEqual(framed("POST / HTTP/1.1\r\nExpect: 100-continue\r\nTransfer-Encoding: chunked\r\n\r\n").continues, 1)
    }

    func testBodyExpiryClosesALengthOrAChunkedBody() {
        var driver = FramingDriver()
        driver.feed(bytes("PUT / HTTP/1.1\r\nContent-Length: 10\r\n\r\nabc"))
        XCTAssertTrue(driver.machine.expireBody())
        XCTAssertTrue(driver.machine.isClosed)
        XCTAssertEqual(driver.machine.clock.deadline, .none)

        var chunked = FramingDriver()
        chunked.feed(bytes("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab"))
        XCTAssertEqual(chunked.machine.clock.deadline, .body)
        XCTAssertTrue(chunked.machine.expireBody())
        XCTAssertTrue(chunked.machine.isClosed)
        XCTAssertEqual(chunked.output, [], "the chunked head is read with its whole body")
        var idle = FramingMachine(maxHeadBytes: 256, maxBodyBytes: 1000, budget: nil)
        XCTAssertFalse(idle.expireBody(), "no body, nothing to expire")
    }

    func testTheBodyBudgetHoldsWhatArrivedForBodiesNotYetComplete() {
        let budget = BodyBudget(limit: 100)
        var first = FramingDriver(budget: budget)
        first.feed(bytes("PUT / HTTP/1.1\r\nContent-Length: 60\r\n\r\n"))
        XCTAssertEqual(budget.used, 0, "a head alone holds nothing (announced is not received)")
        first.feed([UInt8](repeating: 0x61, count: 25))
        XCTAssertEqual(budget.used, 25, "the bytes received so far")
        var second = FramingDriver(budget: budget)
        second.feed(bytes("PUT / HTTP/1.1\r\nContent-Length: 90\r\n\r\n") + [UInt8](repeating: 0x62, count: 90))
        XCTAssertEqual(second.refusals, [], "a body that arrives whole holds nothing, whatever the others hold")
        XCTAssertEqual(budget.used, 25)
        var third = FramingDriver(budget: budget)
        third.feed(bytes("PUT / HTTP/1.1\r\nContent-Length: 90\r\n\r\n") + [UInt8](repeating: 0x63, count: 80))
        XCTAssertEqual(third.refusals, [FramingMachine.bodyBudgetRefusal], "80 received bytes do not fit beside 25: 503")
        XCTAssertEqual(String(decoding: third.output, as: UTF8.self), "PUT / HTTP/1.1\r\nContent-Length: 90\r\n\r\n",
                       "the head was read, none of the body")
        XCTAssertTrue(third.machine.isClosed)
        XCTAssertEqual(budget.used, 25)
        first.feed([UInt8](repeating: 0x61, count: 35))
        XCTAssertEqual(budget.used, 0, "given back once the body is complete")

        var chunked = FramingDriver(budget: budget)
        chunked.feed(bytes("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n20\r\n" + String(repeating: "b", count: 32) + "\r\n"))
        XCTAssertEqual(budget.used, 32, "a chunked body holds what it gathered")
        chunked.machine.close()
        XCTAssertEqual(budget.used, 0, "and gives it back when its connection closes")
    }

    func testOneClientsShareLeavesRoomForTheOthers() {
        let budget = BodyBudget(limit: 100, perClient: 40)
        var greedy = FramingDriver(budget: budget)
        greedy.machine.client = "198.51.100.1"
        greedy.feed(bytes("PUT / HTTP/1.1\r\nContent-Length: 80\r\n\r\n") + [UInt8](repeating: 0x61, count: 30))
        XCTAssertEqual(budget.held(by: "198.51.100.1"), 30)
        var again = FramingDriver(budget: budget)
        again.machine.client = "198.51.100.1"
        again.feed(bytes("PUT / HTTP/1.1\r\nContent-Length: 80\r\n\r\n") + [UInt8](repeating: 0x61, count: 11))
        XCTAssertEqual(again.refusals, [FramingMachine.bodyBudgetRefusal], "the client's 41st byte is over its share")
        XCTAssertFalse(budget.hasRoom(for: 11, client: "198.51.100.1"))
        XCTAssertTrue(budget.hasRoom(for: 40, client: "198.51.100.2"), "another client's share is whole")
        var other = FramingDriver(budget: budget)
        other.machine.client = "198.51.100.2"
        other.feed(bytes("PUT / HTTP/1.1\r\nContent-Length: 80\r\n\r\n") + [UInt8](repeating: 0x61, count: 39))
        XCTAssertEqual(other.refusals, [])
        greedy.machine.close()
        other.machine.close()
        XCTAssertEqual(budget.used, 0)
        XCTAssertEqual(budget.held(by: "198.51.100.1"), 0)
    }
}


