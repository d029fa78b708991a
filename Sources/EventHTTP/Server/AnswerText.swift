/// An answer's bytes as the response writer lays them out (status line, fields, a small body):
/// in the server's scratch buffer while they fit, else in an array. The writer sends them and
/// forgets them before it returns (what the kernel does not take is copied into the output), so
/// one buffer serves every answer of the loop: an array per answer, and appending each field to
/// it (about 70 instructions a piece, a reallocation when a body followed the head), cost about
/// 1,500 instructions a request.
struct AnswerText {
    /// The scratch buffer's size: the writer sends an answer in one piece up to this size.
    static let capacity = 16 << 10

    private let scratch: UnsafeMutablePointer<UInt8>
    private(set) var count = 0
    /// The bytes once they outgrew the scratch buffer (a head with very long fields).
    private var spilled: [UInt8]?

    init(scratch: UnsafeMutablePointer<UInt8>) {
        self.scratch = scratch
    }

    mutating func append(_ bytes: UnsafeRawBufferPointer) {
        let length = bytes.count
        guard length > 0, let source = bytes.baseAddress else { return }
        if spilled == nil, count + length <= Self.capacity {
            UnsafeMutableRawPointer(scratch + count).copyMemory(from: source, byteCount: length)
            count += length
            return
        }
        if spilled == nil { spilled = Array(UnsafeBufferPointer(start: scratch, count: count)) }
        spilled!.append(contentsOf: UnsafeRawBufferPointer(start: source, count: length))
        count += length
    }

    mutating func append(_ byte: UInt8) {
        if spilled == nil, count < Self.capacity {
            scratch[count] = byte
            count += 1
        } else {
            withUnsafeBytes(of: byte) { append($0) }
        }
    }

    mutating func append(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { append($0) }
    }

    /// The string's UTF-8 bytes.
    mutating func append(_ string: String) {
        var string = string
        string.withUTF8 { append(UnsafeRawBufferPointer($0)) }
    }

    func withBytes<Result>(_ body: (UnsafeRawBufferPointer) -> Result) -> Result {
        if let spilled { return spilled.withUnsafeBytes(body) }
        return body(UnsafeRawBufferPointer(start: scratch, count: count))
    }
}
