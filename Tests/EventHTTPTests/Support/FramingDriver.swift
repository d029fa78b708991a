@testable import EventHTTP

/// Drives a `FramingMachine` over bytes fed in pieces, as the guard drives it over evbuffers,
/// and records what evhttp would be handed. Used by FramingMachineTests and by the libFuzzer
/// target Fuzz/FramingFuzz.swift (linked in there), which also checks its preconditions.
struct FramingDriver {
    var machine: FramingMachine
    /// Everything handed on, in order (heads, bodies, stand-ins).
    var output: [UInt8] = []
    var refusals: [FramingRefusal] = []
    /// Heads after which the client waits for "100 Continue".
    var continues = 0
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
            case .pass(let count):
                precondition(count > 0 && count <= available, "pass \(count) of \(available)")
                output += input.removeFirst(count)
            case .take(let count):
                precondition(count > 0 && count <= available, "take \(count) of \(available)")
                input.removeFirst(count)
            case .replace(let consumed, let bytes, let expectsContinue):
                precondition(consumed > 0 && consumed <= available, "replace \(consumed) of \(available)")
                input.removeFirst(consumed)
                output += bytes
                if expectsContinue { continues += 1 }
            case .refuse(let refusal, let consumed):
                precondition(consumed >= 0 && consumed <= available, "refuse after \(consumed) of \(available)")
                precondition(machine.isClosed)
                input.removeFirst(consumed)
                output += machine.standIn
                refusals.append(refusal)
            case .cut(let refusal, let owed):
                precondition(owed > 0 && machine.isClosed, "cut owing \(owed)")
                input.removeFirst(available)
                output += [UInt8](repeating: 0, count: owed)
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
