public import Foundation

/// Reads lines from a pipe with a deadline (poll, never a blind sleep): what a test reads from
/// a command-line program it started with `Process` and a stdout `Pipe`.
public final class LineReader {
    private let handle: FileHandle
    private var pending: [UInt8] = []

    public init(_ handle: FileHandle) { self.handle = handle }

    /// The next line (without its LF), or nil when none is complete within `seconds`.
    public func line(within seconds: Double) -> String? {
        let deadline = Date().addingTimeInterval(seconds)
        while true {
            if let newline = pending.firstIndex(of: 10) {
                let line = String(decoding: pending[..<newline], as: UTF8.self)
                pending.removeSubrange(...newline)
                return line
            }
            let left = deadline.timeIntervalSinceNow
            guard left > 0 else { return nil }
            var poller = pollfd(fd: handle.fileDescriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, Int32(min(left * 1000, 100))) >= 0 else { return nil }
            guard poller.revents != 0 else { continue }
            var buffer = [UInt8](repeating: 0, count: 4096)
            let count = read(handle.fileDescriptor, &buffer, buffer.count)
            guard count > 0 else { return nil }
            pending.append(contentsOf: buffer[..<count])
        }
    }
}
