import EventHTTP
import Foundation
import TestFixtures

/// Runs an `HTTPServer` on an `EventLoop` on a background thread for a test.
/// The server is only touched on the loop thread (or before the loop starts).
final class LoopThread: @unchecked Sendable {
    let loop: EventLoop
    let server: HTTPServer
    let port: Int
    private let finished = DispatchSemaphore(value: 0)

    init(configuration: ServerConfiguration = ServerConfiguration(host: "127.0.0.1", port: 0),
         configure: (HTTPServer) -> Void) throws {
        loop = try EventLoop()
        server = HTTPServer(loop: loop, configuration: configuration)
        configure(server)
        port = try server.start()
        let thread = Thread { [self] in
            loop.run()
            finished.signal()
        }
        thread.start()
    }

    /// Runs `body` on the loop thread and returns its result.
    func sync<T>(_ body: @escaping (HTTPServer) -> T) -> T {
        let box = UncheckedBox<T?>(nil)
        let work = UncheckedBox(body)
        let done = DispatchSemaphore(value: 0)
        loop.execute { [self] in
            box.value = work.value(server)
            done.signal()
        }
        done.wait()
        return box.value!
    }

    /// Polls `condition` on the loop thread until true or timeout.
    func eventually(timeout: Double = 5, _ condition: @escaping (HTTPServer) -> Bool) -> Bool {
        TestFixtures.eventually(within: timeout) { sync(condition) }
    }

    func stop() {
        loop.execute { [self] in
            server.close()
            loop.stop()
        }
        finished.wait()
    }
}

final class UncheckedBox<T>: @unchecked Sendable {
    var value: T
    init(_ value: T) { self.value = value }
}
