// libFuzzer target over the YAML the server reads and writes through Yams (Contract/YAMLParser.swift
// with Support/YAMLRules.swift's bounds, compiled with YAMLNode.swift and YAMLEmitter.swift, linked
// with Yams and libyaml): any bytes either read or are refused with a line inside the text — never
// a crash, a hang or a deep recursion — and what reads, written back by the emitter, reads again to
// the very same text.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let tree: YAMLNode
    do {
        tree = try YAMLParser.parse(bytes)
    } catch {
        let lines = bytes.reduce(1) { $1 == UInt8(ascii: "\n") ? $0 + 1 : $0 }
        precondition(error.line >= 1 && error.line <= lines, "refused at line \(error.line) of \(lines)")
        return 0
    }
    let text = YAMLEmitter.document(tree)
    let again: YAMLNode
    do {
        again = try YAMLParser.parse(text)
    } catch {
        preconditionFailure("the emitter's output does not read (\(error)):\n\(text)")
    }
    precondition(YAMLEmitter.document(again) == text, "written back, it reads differently:\n\(text)")
    return 0
}
