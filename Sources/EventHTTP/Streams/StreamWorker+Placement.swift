internal import CLibevent
import Foundation

/// The worker thread's place on the machine: below the request loop, and off its CPU.
extension StreamWorker {
    /// Lowers the calling thread's scheduling priority by `increment` nice levels (Linux nice
    /// values are per thread). Unprivileged: a thread may always lower its own priority. Left
    /// as it is when the kernel refuses (the fan-out then competes with the loop as an equal).
    static func lowerThreadPriority(by increment: Int32) {
        let thread = id_t(tidings_gettid())
        // getpriority may return -1 as a priority: errno tells, so it is cleared first.
        errno = 0
        let current = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), thread)
        if current == -1, SystemError.last("getpriority").code != 0 { return }
        syscall("setpriority", tolerating: "the thread keeps the loop's priority") {
            setpriority(__priority_which_t(PRIO_PROCESS.rawValue), thread, current + increment)
        }
    }

    /// Keeps the calling thread (one of `workers` stream workers) off the lowest-numbered CPU it
    /// may run on, when it may run on more than `workers` CPUs: that CPU is left to the request
    /// loop. Nothing changes when the kernel refuses.
    static func avoidFirstCPU(workers: Int) {
        var mask = [UInt](repeating: 0, count: 16)
        let wordBits = UInt.bitWidth
        guard let size = try? syscall("sched_getaffinity", {
            tidings_sched_getaffinity(mask.count * MemoryLayout<UInt>.size, &mask)
        }), size > 0 else { return }
        let bits = (0..<(Int(size) * 8)).filter { mask[$0 / wordBits] & (1 << UInt($0 % wordBits)) != 0 }
        guard bits.count >= 2, workers < bits.count, let first = bits.first else { return }
        mask[first / wordBits] &= ~(1 << UInt(first % wordBits))
        syscall("sched_setaffinity", tolerating: "the worker may then share the loop's CPU") {
            tidings_sched_setaffinity(Int(size), &mask)
        }
    }
}
