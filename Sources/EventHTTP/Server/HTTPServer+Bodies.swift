internal import CLibevent

/// Where a whole body's bytes go when they are read at once. A body of a few KiB (an OFREP
/// evaluation's context: about 1 KiB) is too large for malloc's per-thread cache, so a new
/// array for each cost about 900 instructions of `malloc` and `free`; the loop keeps one array
/// for them instead and hands it to the request. The next such body reuses its storage when the
/// request that had it is gone (nearly always: an answer is written before the next request is
/// read), and gets new storage by the array's copy-on-write otherwise — a request's body never
/// changes under it. Smaller bodies come from malloc's cache; larger ones are their own.
extension HTTPServer {
    /// Bodies of more than this many bytes and at most `spareBodyCapacity` use the spare array.
    static let spareBodyFloor = 1_000
    static let spareBodyCapacity = 4 << 10

    /// The `count` bytes at the front of `input`, taken out of it.
    func wholeBody(from input: OpaquePointer, count: Int) -> [UInt8] {
        guard count > Self.spareBodyFloor, count <= Self.spareBodyCapacity, let front = evbuffer_pullup(input, count) else {
            return [UInt8](unsafeUninitializedCapacity: count) { storage, copied in
                copied = max(0, Int(evbuffer_remove(input, storage.baseAddress, count)))
            }
        }
        // New storage (of the same capacity) only while a request still holds the old one.
        spareBody.removeAll(keepingCapacity: true)
        spareBody.reserveCapacity(Self.spareBodyCapacity)
        spareBody.append(contentsOf: UnsafeRawBufferPointer(start: front, count: count))
        evbuffer_drain(input, count)
        return spareBody
    }
}
