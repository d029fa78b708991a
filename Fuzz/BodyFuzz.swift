// libFuzzer target over what a request body goes through before a handler trusts it: the
// framing guard (head parser, chunked decoder), the JSON body decoder with its UTF-8 and
// content-type rules, the PATCH key count, preference patch validation and thing validation,
// the stream-safe scan of JSON bytes against the scalar rule it stands for, and the OFREP body's
// one-pass check (OFREPBodyScan, unsafe pointers and SIMD over untrusted bytes) against the full
// reading it stands in for.
// Built and run by Fuzz/run.sh (`make fuzz`, and briefly in `make test`).
import Foundation
import Observing
import TidingsModel
@testable import EventHTTP

/// Preferences with every type and constraint kind, created once.
@MainActor private let preferences: Preferences<Never> = {
    let schema = #"""
    {"flag": {"type": "boolean", "default": false},
     "count": {"type": "integer", "default": 1, "minimum": 0, "maximum": 10},
     "ratio": {"type": "number", "default": 0.5, "minimum": -1, "maximum": 1},
     "name": {"type": "string", "default": "x"},
     "short": {"type": "string", "default": "", "maxLength": 4},
     "mode": {"type": "string", "default": "a", "enum": ["a", "b"]},
     "obj": {"type": "object", "default": {"a": 1}, "required": ["a"], "additionalProperties": true,
             "properties": {"a": {"type": "integer", "maximum": 9}, "r": {"type": "number"},
                            "n": {"type": "object", "properties": {"s": {"type": "string", "maxLength": 3}}}}}}
    """#
    return try! Preferences<Never>(schemaJSON: Data(schema.utf8))
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard let selector = bytes.first else { return 0 }
    let input = Array(bytes.dropFirst())
    MainActor.assumeIsolated {
        switch selector % 6 {
        case 0: framing(input)
        case 1: body(input)
        case 2: things(input)
        case 4: streamSafe(input)
        case 5: ofrepScan(input)
        default: chunked(input)
        }
    }
    return 0
}

private func framing(_ input: [UInt8]) {
    switch RequestFraming.parseHead(input[...], maxBodyBytes: 1 << 20) {
    case .success(let head):
        // What evhttp is handed parses again to the same head: no second reading exists.
        var canonical = head.canonical(length: nil)
        canonical.removeLast(2)
        guard case .success(let again) = RequestFraming.parseHead(canonical[...], maxBodyBytes: 1 << 20) else {
            fatalError("canonical head does not parse: \(String(decoding: canonical, as: UTF8.self))")
        }
        precondition(again.method == head.method && again.target == head.target && again.fields.count == head.fields.count)
        if case .length(let n) = head.body { precondition(n > 0 && n <= 1 << 20) }
    case .failure(let refusal):
        precondition([400, 413, 417, 431, 501, 505].contains(refusal.status), "unexpected \(refusal.status)")
    }
    _ = FramingMachine.endOfHead(input, from: 0)
}

@MainActor private func body(_ input: [UInt8]) {
    let request = Request(method: .patch, target: "/preferences", headers: [.contentType: "application/json"],
                          body: input, receivedAt: 0)
    if let count = JSONShape.topLevelMemberCount(input, stopAbove: 6) { precondition(count >= 0 && count <= 7) }
    let streamSafe = JSONShape.isStreamSafe(input)
    do {
        let patch = try request.decode(PreferencePatch.self)
        precondition(streamSafe, "a body with a long run of combining marks decoded")
        for (key, input) in patch.entries {
            precondition(StreamSafeText.isStreamSafe(key), "a decoded key is not stream-safe")
            if case let .value(.string(text)) = input { precondition(StreamSafeText.isStreamSafe(text), "a decoded value is not stream-safe") }
        }
        precondition(String(validating: input, as: UTF8.self) != nil, "a non-UTF-8 body decoded")
        if let validated = try? preferences.validate(patch) {
            for entry in validated.entries {
                let declaration = preferences.declaration(forKey: entry.key)!
                guard case .success = declaration.check(entry.newValue) else { fatalError("validated value fails its check") }
            }
        }
    } catch {
        precondition([400, 415, 422].contains(error.status.code), "decode answered \(error.status)")
        precondition((error.errors?.count ?? 0) <= ProblemDetails.maxErrors)
    }
}

private func things(_ input: [UInt8]) {
    let text = String(decoding: input, as: UTF8.self)
    for textCase in TextCase.allCases {
        if let thing = try? ThingRules.validateAdd(text, to: Set<String>(), textCase: textCase) {
            precondition(thing.unicodeScalars.count <= ThingRules.maxLength, "thing too long: \(thing.unicodeScalars.count)")
            precondition(thing == thing.precomposedStringWithCanonicalMapping, "thing not NFC")
            precondition(!thing.isEmpty)
        }
    }
    let list = text.split(separator: "\n").map(String.init)
    if let normalised = try? ThingRules.validateList(list, textCase: .upper) {
        precondition(Set(normalised).count == normalised.count, "duplicates accepted")
    }
}

private func chunked(_ input: [UInt8]) {
    var decoder = ChunkedDecoder(maxBodyBytes: 4096)
    var offset = 0
    // Fed in uneven pieces, as a socket would deliver it.
    while offset < input.count && !decoder.isComplete {
        let end = min(input.count, offset + 1 + (offset % 7))
        do {
            let used = try decoder.feed(input[offset..<end])
            precondition(used <= end - offset)
            if used < end - offset { precondition(decoder.isComplete) }
            offset += used
        } catch {
            precondition(error.status == 400 || error.status == 413)
            return
        }
        precondition(decoder.body.count <= 4096)
    }
}

/// The JSON byte scan (raw UTF-8 and `\u` escapes) agrees with the scalar rule on the text it
/// stands for: on escape-free UTF-8 they see the same scalars.
private func streamSafe(_ input: [UInt8]) {
    let bytes = JSONShape.isStreamSafe(input)
    guard !input.contains(UInt8(ascii: "\\")), let text = String(validating: input, as: UTF8.self) else { return }
    precondition(bytes == StreamSafeText.isStreamSafe(text), "the JSON scan and the scalar rule disagree")
    if let thing = try? ThingRules.validateAdd(text, to: Set<String>(), textCase: .none) {
        precondition(StreamSafeText.isStreamSafe(thing), "a thing that is not stream-safe was accepted")
    }
}

/// What the quick check decides, the full reading must decide the same way: an evaluation
/// request decodes with no problem, a well-formed non-request decodes with the same problem,
/// and what it calls not JSON does not decode (`unsure` is left to the full reading).
@MainActor private func ofrepScan(_ input: [UInt8]) {
    let verdict = OFREPBodyScan.verdict(input)
    guard verdict != .unsure else { return }
    let request = Request(method: .post, target: "/ofrep/v1/evaluate/flags", headers: [.contentType: "application/json"],
                          body: input, receivedAt: 0)
    let full: String??
    do { full = .some(try request.decode(OFREPEvaluationBody.self).problem) } catch { full = .none }
    switch verdict {
    case .evaluation:
        guard case .some(.none) = full else { fatalError("the scan took a body for an evaluation request that the full reading does not: \(full as Any)") }
    case let .notEvaluation(problem):
        guard case .some(.some(problem)) = full else { fatalError("the scan said '\(problem)', the full reading \(full as Any)") }
    case .malformed:
        guard case .none = full else { fatalError("the scan found no JSON where the full reading did") }
    case .unsure:
        break
    }
}
