/// The bytes a `FramingMachine` reads: the front of whatever holds a connection's bytes not yet
/// framed (an evbuffer in the server, an array in tests and the fuzz target).
protocol FramingInput {
    /// Bytes available.
    var count: Int { get }
    /// The first `length` bytes (`0 < length <= count`), contiguous; valid until the input changes.
    func front(_ length: Int) -> UnsafeRawBufferPointer
}

/// The framing of one connection's request stream, over bytes alone (no libevent, no sockets,
/// no clocks): fed the front of the unframed input, it says what the bytes are — a head (clean
/// heads where they lie, `CleanHead`; any other through the strict parser, `RequestFraming`),
/// body bytes of the request being read (a chunked body de-chunked, whole), bytes to drop, or a
/// refusal. This is the server's one reading of every request: the connection builds its
/// `Request` from what the machine reports, and nothing else parses the bytes. After a refusal
/// every later byte is dropped.
///
/// The machine also says which deadline should run (`clock`) and holds this connection's share
/// of the server's body budget — bytes received for a body not yet complete, as they arrive
/// (`BodyBudget`); the connection owns the timers and buffers, and decides at each head whose
/// body is still to come whether to read it at all (`Connection+Head`).
///
/// ```swift
/// var machine = FramingMachine(maxHeadBytes: 8192, maxBodyBytes: 1 << 20, budget: budget)
/// while input.count > 0 {
///     switch machine.step(input) {
///     case .cleanHead(let n): read a head from the first n bytes, drop them
///     case .head(let n, let head): drop n, the head is `head`
///     case .body(let n): n body bytes        case .take(let n): drop n bytes
///     case .dechunked(let n, let body): drop n, the whole body is `body`
///     case .refuse(let refusal, let n), .cut(let refusal) (n = 0): answer refusal, close
///     case .needMore: break
///     }
/// }
/// ```
struct FramingMachine {
    enum Step: Equatable {
        /// Nothing to do until more bytes arrive (the input is empty).
        case needMore
        /// The next `n` bytes are a clean head (`CleanHead`): read it where it lies. Its body,
        /// if it announces one, follows as `.body` steps.
        case cleanHead(Int)
        /// The next `consumed` bytes were a head the strict parser read as `head`. A length
        /// body follows as `.body` steps, a chunked one as one `.dechunked` step.
        case head(consumed: Int, ParsedHead)
        /// The next `n` bytes belong to the body of the head just read.
        case body(Int)
        /// The next `consumed` bytes complete the chunked body of the head just read: `body`.
        case dechunked(consumed: Int, body: [UInt8])
        /// The next `n` bytes are consumed here: kept (a head or chunked body being gathered) or
        /// dropped (empty lines before a head, a body the server does not read, anything after a
        /// refusal).
        case take(Int)
        /// The next `consumed` bytes are consumed and the stream is refused: nothing after them
        /// is read.
        case refuse(FramingRefusal, consumed: Int)
        /// The body being received cannot be held (the budget for bodies being received, or
        /// the client's share of it, is spent): the request is answered with the refusal and
        /// the stream is closed; nothing more is read.
        case cut(FramingRefusal)
    }

    /// Which deadline should be running: a head's from its first byte, a body's from its head.
    enum Deadline: Equatable { case none, head, body }

    /// The deadline with the number of deadlines started so far: a change means the adapter
    /// (re)arms or stops its timer.
    struct Clock: Equatable {
        var deadline = Deadline.none
        var started = 0
    }

    enum Phase {
        case head
        case body(remaining: Int, forward: Bool)
        /// A chunked body being gathered into `decoder`, to be handed on behind this head.
        case chunked(ParsedHead)
        case closed
    }

    let maxHeadBytes: Int
    let maxBodyBytes: Int
    /// The server's budget for bodies being received at once (nil: unbounded).
    let budget: BodyBudget?
    // Written only by the machine itself (this file and FramingMachine+Bounds.swift).
    var phase = Phase.head
    var clock = Clock()
    /// Heads read so far.
    var heads = 0
    /// The HTTP minor version of the last head.
    var minorVersion = 1
    /// Bytes of `budget` this connection holds, and the client they are counted under.
    var reserved = 0
    var reservedClient: String?
    /// The client this connection's body bytes count under in `budget` (the peer, or the client
    /// a trusted proxy names in the head; set by the guard).
    var client: String?
    /// The head being gathered by the slow path.
    var head: [UInt8] = []
    /// The chunked body being gathered (phase `.chunked`).
    var decoder: ChunkedDecoder?

    init(maxHeadBytes: Int, maxBodyBytes: Int, budget: BodyBudget?) {
        self.maxHeadBytes = maxHeadBytes
        self.maxBodyBytes = maxBodyBytes
        self.budget = budget
    }

    var isClosed: Bool { if case .closed = phase { true } else { false } }

    /// Between requests, with nothing of the next head gathered yet.
    var isBetweenHeads: Bool { if case .head = phase { head.isEmpty } else { false } }

    /// What to do with the front of `input`; the caller applies it, then asks again while bytes remain.
    mutating func step<Input: FramingInput>(_ input: Input) -> Step {
        let available = input.count
        guard available > 0 else { return .needMore }
        switch phase {
        case .closed:
            return .take(available)
        case .head:
            return readHead(input, available: available)
        case .body(let remaining, let forward):
            let count = min(remaining, available)
            if count == remaining {
                // The body is complete: handed on at once, it needs no budget.
                phase = .head
                bodyEnded()
            } else {
                // Bytes of a body not yet complete are held: they count, as they arrive.
                if forward, !reserve(count) {
                    phase = .closed
                    bodyEnded()
                    return .cut(Self.bodyBudgetRefusal)
                }
                phase = .body(remaining: remaining - count, forward: forward)
            }
            return forward ? .body(count) : .take(count)
        case .chunked(let parsed):
            return readChunks(input, available: available, head: parsed)
        }
    }

    // MARK: Heads

    private mutating func readHead<Input: FramingInput>(_ input: Input, available: Int) -> Step {
        if head.isEmpty, let verdict = CleanHead.check(input.front(min(available, maxHeadBytes)),
                                                       maxHeadBytes: maxHeadBytes, maxBodyBytes: maxBodyBytes) {
            accept(verdict)
            return .cleanHead(verdict.count)
        }
        if clock.deadline != .head { start(.head) }
        if head.isEmpty {
            // Empty lines before a request line are ignored (RFC 9112 §2.2).
            let front = input.front(available)
            let blank = front.prefix(while: { $0 == 13 || $0 == 10 }).count
            if blank > 0 { return .take(blank) }
        }
        let count = min(available, maxHeadBytes + 4 - head.count)
        let scanFrom = max(0, head.count - 2)
        let oldCount = head.count
        head.append(contentsOf: input.front(count))
        guard let (contentEnd, used) = Self.endOfHead(head, from: scanFrom) else {
            if head.count > maxHeadBytes { return refuse(Self.headTooLarge(maxHeadBytes), consumed: count) }
            return .take(count)
        }
        let consumed = used - oldCount
        stop(.head)
        guard used <= maxHeadBytes else { return refuse(Self.headTooLarge(maxHeadBytes), consumed: consumed) }
        let result = RequestFraming.parseHead(head[0..<contentEnd], maxBodyBytes: maxBodyBytes)
        head.removeAll(keepingCapacity: false)
        switch result {
        case .failure(let refusal):
            return refuse(refusal, consumed: consumed)
        case .success(let parsed):
            minorVersion = parsed.minorVersion
            heads += 1
            switch parsed.body {
            case .none:
                break
            case .length(let length):
                phase = .body(remaining: length, forward: parsed.bodyIsRead)
                if parsed.bodyIsRead { start(.body) }
            case .chunked:
                decoder = ChunkedDecoder(maxBodyBytes: maxBodyBytes)
                phase = .chunked(parsed)
                start(.body)
            }
            return .head(consumed: consumed, parsed)
        }
    }

    /// Book-keeping for a clean head read where it lies.
    private mutating func accept(_ verdict: CleanHead.Verdict) {
        if clock.deadline == .head { stop(.head) }
        minorVersion = verdict.minorVersion
        heads += 1
        if verdict.bodyLength > 0 {
            phase = .body(remaining: verdict.bodyLength, forward: verdict.bodyIsRead)
            if verdict.bodyIsRead { start(.body) }
        } else {
            bodyEnded()
        }
    }

    /// (end of the head's content including its last line's LF, bytes the head used with its
    /// empty line), searching for the empty line from `start`.
    static func endOfHead(_ bytes: [UInt8], from start: Int) -> (Int, Int)? {
        var index = start
        while index + 1 < bytes.count {
            if bytes[index] == 10 {
                if bytes[index + 1] == 10 { return (index + 1, index + 2) }
                if bytes[index + 1] == 13, index + 2 < bytes.count, bytes[index + 2] == 10 { return (index + 1, index + 3) }
            }
            index += 1
        }
        return nil
    }

    // MARK: Chunked bodies

    private mutating func readChunks<Input: FramingInput>(_ input: Input, available: Int, head parsed: ParsedHead) -> Step {
        let bytes = [UInt8](input.front(min(available, 64 << 10)))
        let before = decoder?.body.count ?? 0
        let used: Int
        do {
            // In place (`decoder!`): the body gathered so far is never copied.
            used = try decoder!.feed(bytes[...])
        } catch {
            return refuse(error, consumed: 0)
        }
        let grown = (decoder?.body.count ?? 0) - before
        // Held while the body is not complete; a body complete now is handed on at once.
        guard decoder!.isComplete else {
            if grown > 0, !reserve(grown) { return refuse(Self.bodyBudgetRefusal, consumed: used) }
            return .take(used)
        }
        let body = decoder!.body
        decoder = nil
        phase = .head
        bodyEnded()
        return .dechunked(consumed: used, body: parsed.bodyIsRead ? body : [])
    }
}
