public import Foundation

/// What Linux's /proc says about a process, for tests that bound a server's memory or prove it
/// idle: resident memory now and at its peak, CPU time, and the time its threads were runnable.
///
/// None of these is a good threshold on its own terms (a host's speed, load, page size and
/// allocator move them): compare a measurement with one taken in the same run (before/after a
/// warm-up, a baseline workload), with the size of the workload, or with the wall-clock time
/// it covers.
public enum ProcessStats {
    /// VmRSS of `pid` (the test process itself by default), in bytes.
    public static func residentBytes(_ pid: pid_t = getpid()) -> Int? { statusField("VmRSS:", pid) }

    /// VmHWM (the peak resident set so far) of `pid`, in bytes.
    public static func peakResidentBytes(_ pid: pid_t = getpid()) -> Int? { statusField("VmHWM:", pid) }

    /// User plus system CPU time of `pid` (all its threads), in seconds.
    public static func cpuSeconds(_ pid: pid_t) -> Double? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return nil }
        // After "(comm)": state, then 10 more fields, then utime and stime (clock ticks).
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// The seconds `pid`'s threads (those alive now) have spent runnable: on a CPU or waiting in
    /// the run queue for one (`/proc/PID/task/TID/schedstat`). A thread that sleeps until its
    /// events come adds next to nothing; a thread that spins adds the whole wall-clock time it
    /// spins, however busy the machine is (CPU time alone would shrink on a loaded host, where
    /// a spinning thread gets a fraction of a core).
    public static func runnableSeconds(_ pid: pid_t) -> Double {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return tasks.reduce(0) { $0 + (schedstat("/proc/\(pid)/task/\($1)/schedstat") ?? 0) }
    }

    /// ``runnableSeconds(_:)`` of the calling thread alone.
    public static func currentThreadRunnableSeconds() -> Double {
        schedstat("/proc/thread-self/schedstat") ?? 0
    }

    /// Run time plus run-queue wait (both nanoseconds) from a schedstat file, in seconds.
    private static func schedstat(_ path: String) -> Double? {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        let fields = text.split(separator: " ").compactMap { Double($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        guard fields.count >= 2 else { return nil }
        return (fields[0] + fields[1]) / 1e9
    }

    /// A `Name:   1234 kB` line of /proc/PID/status, in bytes.
    private static func statusField(_ name: String, _ pid: pid_t) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix(name) {
            return line.split(separator: " ").compactMap { Int($0) }.first.map { $0 << 10 }
        }
        return nil
    }
}
