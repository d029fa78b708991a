import Foundation
import XCTest

/// Holds a server's event loop still from outside, with no hook in the product: a helper
/// process attaches to the loop's thread (the process's main thread) with `ptrace` and stops
/// that one thread (`PTRACE_INTERRUPT`); every other thread of the server runs on, as when a
/// long callback holds the loop. The thread stays stopped until the helper is killed (or the
/// server ends).
final class LoopStall {
    private let helper = Process()
    private let output = Pipe()

    /// Stops the loop thread of `pid`; returns once it is stopped.
    init(pid: Int32, file: StaticString = #filePath, line: UInt = #line) throws {
        helper.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        helper.arguments = ["-c", Self.script, String(pid)]
        helper.standardOutput = output
        try helper.run()
        let first = output.fileHandleForReading.availableData
        let said = String(decoding: first, as: UTF8.self)
        XCTAssertTrue(said.hasPrefix("stopped"), "the loop thread was not stopped: \(said)", file: file, line: line)
    }

    /// Lets the loop thread go (the helper detaches by ending).
    func release() {
        if helper.isRunning { helper.terminate() }
        helper.waitUntilExit()
    }

    deinit { release() }

    // __WALL: the tracee is a thread (the main one) of a process that is not the helper's child.
    private static let script = """
        import ctypes, os, sys
        libc = ctypes.CDLL(None, use_errno=True)
        libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
        pid = int(sys.argv[1])
        PTRACE_SEIZE, PTRACE_INTERRUPT, WALL = 0x4206, 0x4207, 0x40000000
        for request in (PTRACE_SEIZE, PTRACE_INTERRUPT):
            if libc.ptrace(request, pid, None, None) != 0:
                print("ptrace failed:", os.strerror(ctypes.get_errno()), flush=True)
                sys.exit(1)
        os.waitpid(pid, WALL)
        print("stopped", flush=True)
        # Never resumed: every later stop of the thread (a signal meant for it) leaves it stopped,
        # until the process ends or this helper does.
        while True:
            try:
                _, status = os.waitpid(pid, WALL)
            except ChildProcessError:
                break
            if os.WIFEXITED(status) or os.WIFSIGNALED(status):
                break
        """
}
