import HTTPTypes

/// A fixed list of fields appended to an answer's ``Response/addedFields``, remembering the last
/// result: the fields an answer arrives with are nearly always the same shared array (the
/// `Tidings-Revision` field, prepared once per revision), so the same list results, and
/// appending built a new array for every answer (an allocation and two copies, ~500
/// instructions).
///
/// The last input is kept, so its storage lives while it is compared with: the same storage
/// address and count mean the same array, never another one that happens to reuse its memory.
/// Loop-thread confined, like the middleware that holds it.
final class AppendedFields {
    let tail: [HTTPField]
    private var lastInput: [HTTPField] = []
    private var lastResult: [HTTPField] = []

    init(_ tail: [HTTPField]) { self.tail = tail }

    /// `fields` followed by ``tail``.
    func append(to fields: inout [HTTPField]) {
        if fields.isEmpty {
            fields = tail
            return
        }
        if !lastInput.isEmpty, Self.sameStorage(fields, lastInput) {
            fields = lastResult
            return
        }
        let result = fields + tail
        lastInput = fields
        lastResult = result
        fields = result
    }

    private static func sameStorage(_ a: [HTTPField], _ b: [HTTPField]) -> Bool {
        a.count == b.count && a.withUnsafeBufferPointer { x in b.withUnsafeBufferPointer { y in x.baseAddress == y.baseAddress } }
    }
}
