@testable import EventHTTP

/// Drives a `FramingMachine` over bytes fed in pieces, as a connection drives it over its
/// bufferevent's input, and records what the connection reads: each head in its canonical form
/// (`ParsedHead.canonical`, which a clean head already is) and exactly the body bytes read, in
/// order. Used by FramingMachineTests and by the libFuzzer target Fuzz/FramingFuzz.swift
/// (linked in there), which also checks its preconditions.
struct FramingDriver {
    var machine: FramingMachine
    /// Everything read, in order (heads, bodies).
    var output: [UInt8] = []
    var refusals: [FramingRefusal] = []
    /// Heads after which the client waits for "100 Continue".
    var continues = 0
    /// The chunked head whose body is being gathered.
    private var chunkedHead: ParsedHead?
    private let input = ByteQueue()

    init(maxHeadBytes: Int = 8192, maxBodyBytes: Int = 1 << 20, budget: BodyBudget? = nil) {
        machine = FramingMachine(maxHeadBytes: maxHeadBytes, maxBodyBytes: maxBodyBytes, budget: budget)
    }

    /// Bytes not yet consumed.
    var unconsumed: Int { input.count }

    mutating func feed(_ piece: [UInt8]) {
        input.append(piece)
        while true {
            let available = input.count
            let step = machine.step(input)
            switch step {
            case .needMore:
                precondition(available == 0, "needMore with \(available) bytes waiting")
                return
            case .cleanHead(let count), .body(let count):
                precondition(count > 0 && count <= available, "\(step) of \(available)")
                output += input.removeFirst(count)
            case .take(let count):
                precondition(count > 0 && count <= available, "take \(count) of \(available)")
                input.removeFirst(count)
            case .head(let consumed, let head):
                precondition(consumed > 0 && consumed <= available, "head \(consumed) of \(available)")
                input.removeFirst(consumed)
                if head.expectsContinue { continues += 1 }
                switch head.body {
                case .none: output += head.canonical(length: nil)
                case .length(let length): output += head.canonical(length: length)
                case .chunked: chunkedHead = head
                }
            case .dechunked(let consumed, let body):
                precondition(consumed > 0 && consumed <= available, "dechunked \(consumed) of \(available)")
                input.removeFirst(consumed)
                let head = chunkedHead!
                chunkedHead = nil
                output += head.bodyIsRead ? head.canonical(length: body.count) + body : head.canonical(length: nil)
            case .refuse(let refusal, let consumed):
                precondition(consumed >= 0 && consumed <= available, "refuse after \(consumed) of \(available)")
                precondition(machine.isClosed)
                input.removeFirst(consumed)
                refusals.append(refusal)
            case .cut(let refusal):
                precondition(machine.isClosed, "cut")
                input.removeFirst(available)
                refusals.append(refusal)
            }
        }
    }
}

/// Bytes waiting to be framed, contiguous (what `evbuffer_pullup` gives the guard).
final class ByteQueue: FramingInput {
    private var storage = UnsafeMutableRawBufferPointer.allocate(byteCount: 0, alignment: 1)
    private var start = 0
    private(set) var count = 0

    deinit { storage.deallocate() }

    func append(_ bytes: [UInt8]) {
        let grown = UnsafeMutableRawBufferPointer.allocate(byteCount: count + bytes.count, alignment: 1)
        if count > 0 { grown.baseAddress!.copyMemory(from: storage.baseAddress! + start, byteCount: count) }
        bytes.withUnsafeBytes { if $0.count > 0 { (grown.baseAddress! + count).copyMemory(from: $0.baseAddress!, byteCount: $0.count) } }
        storage.deallocate()
        storage = grown
        start = 0
        count += bytes.count
    }

    @discardableResult
    func removeFirst(_ length: Int) -> [UInt8] {
        let taken = [UInt8](UnsafeRawBufferPointer(start: storage.baseAddress! + start, count: length))
        start += length
        count -= length
        return taken
    }

    func front(_ length: Int) -> UnsafeRawBufferPointer {
        precondition(length > 0 && length <= count)
        return UnsafeRawBufferPointer(start: storage.baseAddress! + start, count: length)
    }
}
