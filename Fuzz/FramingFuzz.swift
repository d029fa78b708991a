// libFuzzer target over the pure framing machine (FramingMachine), without libevent: a byte
// stream of requests, cut into pieces where the input says, must be framed exactly as when it
// arrives at once (same heads and bodies read, same refusals), every step must consume what
// it claims and make progress, nothing may trap, and the body budget must come back whole.
// Built and run by Fuzz/run.sh with Tests/EventHTTPTests/Support/FramingDriver.swift.
@testable import EventHTTP

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 1 else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    // The first byte picks the cut points; small limits reach the size refusals quickly.
    let seed = Int(bytes[0])
    let stream = Array(bytes.dropFirst())
    let maxHead = 64 + seed * 4
    let maxBody = 256

    var whole = FramingDriver(maxHeadBytes: maxHead, maxBodyBytes: maxBody)
    whole.feed(stream)

    let budget = BodyBudget(limit: 1 << 30)
    var pieces = FramingDriver(maxHeadBytes: maxHead, maxBodyBytes: maxBody, budget: budget)
    var index = 0
    var cut = seed
    while index < stream.count {
        cut = (cut &* 31 &+ 7) & 0xFF
        let length = min(stream.count - index, 1 + cut % 17)
        pieces.feed(Array(stream[index..<(index + length)]))
        index += length
    }
    precondition(whole.output == pieces.output, "framing depends on how the bytes arrived")
    precondition(whole.refusals == pieces.refusals, "refusals depend on how the bytes arrived")
    precondition(whole.refusals.count <= 1, "more than one refusal on one stream")
    precondition(budget.used == pieces.machine.reserved, "budget and connection disagree")
    pieces.machine.close()
    precondition(budget.used == 0, "a closed connection kept \(budget.used) bytes of the budget")
    return 0
}
