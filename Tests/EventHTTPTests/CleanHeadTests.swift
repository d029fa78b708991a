@testable import EventHTTP
import XCTest

/// The framing machine's fast path may read a head where it lies only when it is exactly the
/// strict parser's canonical form: checked here case by case and on many generated heads.
final class CleanHeadTests: XCTestCase {
    private func verdict(_ text: String, maxHead: Int = 8192, maxBody: Int = 1000) -> CleanHead.Verdict? {
        Array(text.utf8).withUnsafeBytes { CleanHead.check($0, maxHeadBytes: maxHead, maxBodyBytes: maxBody) }
    }

    /// The slow path's output for the same head (nil when it refuses it).
    private func canonical(_ bytes: [UInt8], maxBody: Int = 1000) -> [UInt8]? {
        guard let end = FramingMachine.endOfHead(bytes, from: 0),
              case .success(let head) = RequestFraming.parseHead(bytes[0..<end.0], maxBodyBytes: maxBody) else { return nil }
        if case .length(let length) = head.body { return head.canonical(length: length) }
        if head.body == .chunked || head.expectsContinue { return nil }
        return head.canonical(length: nil)
    }

    func testEverydayHeadsPassThrough() {
        let get = "GET /preferences/name HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nUser-Agent: curl/7.88.1\r\nAccept: */*\r\n\r\n"
        XCTAssertEqual(verdict(get), .init(count: get.utf8.count, minorVersion: 1, bodyLength: 0, bodyIsRead: true))
        let put = "PUT /preferences/name HTTP/1.1\r\nHost: h\r\nContent-Type: application/json\r\nContent-Length: 17\r\n\r\n{\"value\": \"abc\"}x"
        XCTAssertEqual(verdict(put), .init(count: put.utf8.count - 17, minorVersion: 1, bodyLength: 17, bodyIsRead: true))
        XCTAssertEqual(verdict("HEAD / HTTP/1.0\r\nContent-Length: 5\r\n\r\n")?.bodyIsRead, false)
        XCTAssertEqual(verdict("GET / HTTP/1.0\r\n\r\n")?.minorVersion, 0)
        XCTAssertEqual(verdict("GET / HTTP/1.1\r\nX-Empty: \r\n\r\n")?.count, 29)
    }

    func testAnythingTheSlowPathWouldChangeOrRefuseIsLeftToIt() {
        let notClean = [
            "GET / HTTP/1.1\r\nHost: h\r\n",                        // incomplete
            "\r\nGET / HTTP/1.1\r\n\r\n",                           // leading empty line
            "GET / HTTP/1.1\nHost: h\n\n",                          // bare LF
            "GET  / HTTP/1.1\r\n\r\n", "get / HTTP/1.1\r\n\r\n", "TRACE / HTTP/1.1\r\n\r\n", "GETX / HTTP/1.1\r\n\r\n",
            "GET / HTTP/1.2\r\n\r\n", "GET / HTTP/1.1 \r\n\r\n", "GET /\u{e9} HTTP/1.1\r\n\r\n",
            "GET / HTTP/1.1\r\nHost:h\r\n\r\n", "GET / HTTP/1.1\r\nHost:  h\r\n\r\n", "GET / HTTP/1.1\r\nHost: h \r\n\r\n",
            "GET / HTTP/1.1\r\nHost: a\tb\r\n\r\n", "GET / HTTP/1.1\r\nHost : h\r\n\r\n", "GET / HTTP/1.1\r\n Host: h\r\n\r\n",
            "GET / HTTP/1.1\r\nHost: a\rb\r\n\r\n", "GET / HTTP/1.1\r\nHost: caf\u{e9}\r\n\r\n",
            "PUT / HTTP/1.1\r\nContent-Length: 0\r\n\r\n", "PUT / HTTP/1.1\r\nContent-Length: 007\r\n\r\n",
            "PUT / HTTP/1.1\r\nContent-Length: 1001\r\n\r\n", "PUT / HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\n",
            "PUT / HTTP/1.1\r\nContent-Length: 5\r\nHost: h\r\n\r\n", "PUT / HTTP/1.1\r\ncontent-length: +5\r\n\r\n",
            "PUT / HTTP/1.1\r\ncontent-length: 5\r\n\r\n", "PUT / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", "PUT / HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 1\r\n\r\n",
        ]
        for head in notClean { XCTAssertNil(verdict(head), head.debugDescription) }
        XCTAssertNil(verdict("GET / HTTP/1.1\r\nHost: h\r\n\r\n", maxHead: 20), "longer than the head limit")
    }

    func testTokenMaskMatchesTheSlowPath() {
        for byte in UInt8.min...UInt8.max {
            XCTAssertEqual(CleanHead.isTokenByte(byte), RequestFraming.isTokenByte(byte), "\(byte)")
        }
    }

    /// Long targets and values are scanned eight bytes at a time: any one byte out of range, at
    /// any place in them, still leaves the head to the slow path.
    func testEveryByteAtEveryPlaceOfLongTargetsAndValues() {
        let filler = Array("/abcdefghijklmnopqrstuvw".utf8)   // 24 bytes
        for position in 1..<filler.count {
            for byte in UInt8.min...UInt8.max {
                var target = filler
                target[position] = byte
                let head = Array("GET ".utf8) + target + Array(" HTTP/1.1\r\nHost: h\r\n\r\n".utf8)
                let targetOK = byte > 0x20 && byte < 0x7F
                let got = head.withUnsafeBytes { CleanHead.check($0, maxHeadBytes: 8192, maxBodyBytes: 1000) }
                XCTAssertEqual(got != nil, targetOK, "target byte \(byte) at \(position)")
                if targetOK { XCTAssertEqual(got?.count, head.count) }

                var value = Array(filler.dropFirst())   // 23 bytes, no leading space
                let place = position - 1
                value[place] = byte
                let valueOK = byte >= 0x20 && byte < 0x7F && !(byte == 0x20 && (place == 0 || place == value.count - 1))
                let withValue = Array("GET / HTTP/1.1\r\nX-Long: ".utf8) + value + Array("\r\nHost: h\r\n\r\n".utf8)
                let verdict = withValue.withUnsafeBytes { CleanHead.check($0, maxHeadBytes: 8192, maxBodyBytes: 1000) }
                XCTAssertEqual(verdict != nil, valueOK, "value byte \(byte) at \(place)")
                if valueOK {
                    XCTAssertEqual(verdict?.count, withValue.count)
                    XCTAssertEqual(canonical(withValue).map { String(decoding: $0, as: UTF8.self) },
                                   String(decoding: withValue, as: UTF8.self))
                }
            }
        }
    }

    /// Generated heads from pieces that are clean or almost clean: whenever the fast path
    /// accepts one, the slow path accepts it too and its canonical form is the head itself.
    func testAcceptedHeadsAreTheirOwnCanonicalForm() {
        let methods = ["GET", "HEAD", "PUT", "POST", "PATCH", "DELETE", "OPTIONS", "TRACE", "Get", "CONNECT"]
        let targets = ["/", "/a?b=c%20d", "*", "http://h/x", "/\u{7F}", "/a\u{e9}"]
        let versions = ["HTTP/1.1", "HTTP/1.0", "HTTP/1.01", "HTTP/2.0"]
        let names = ["Host", "content-length", "Content-Length", "X-A", "Transfer-Encoding", "expect", "A_b", "Bad Name", ""]
        let values = ["h", "", " h", "h ", "1", "017", "12", "99999", "a,b; q=1", "\t", "a\u{7F}", "caf\u{e9}"]
        let separators = [": ", ":", ":  ", " : "]
        let lineEnds = ["\r\n", "\n", "\r"]
        var generator = SplitMix(seed: 12)
        var accepted = 0
        for _ in 0..<20_000 {
            var text = "\(methods.randomElement(using: &generator)!) \(targets.randomElement(using: &generator)!) "
                + "\(versions.randomElement(using: &generator)!)\(generator.next() % 8 == 0 ? "\n" : "\r\n")"
            for _ in 0..<Int(generator.next() % 4) {
                let end = generator.next() % 8 == 0 ? lineEnds.randomElement(using: &generator)! : "\r\n"
                let separator = generator.next() % 6 == 0 ? separators.randomElement(using: &generator)! : ": "
                text += names.randomElement(using: &generator)! + separator + values.randomElement(using: &generator)! + end
            }
            text += "\r\n"
            let bytes = Array(text.utf8)
            guard let verdict = bytes.withUnsafeBytes({ CleanHead.check($0, maxHeadBytes: 8192, maxBodyBytes: 1000) }) else { continue }
            accepted += 1
            XCTAssertEqual(verdict.count, bytes.count, text.debugDescription)
            XCTAssertEqual(canonical(bytes).map { String(decoding: $0, as: UTF8.self) }, text, text.debugDescription)
        }
        XCTAssertGreaterThan(accepted, 1_000, "the generator should produce clean heads too")
    }
}

/// A small deterministic generator (SplitMix64), so a failure repeats.
private struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
