import Foundation
import EventHTTP

/// The standard process metrics Prometheus users expect from every exporter
/// (`process_cpu_seconds_total`, `process_resident_memory_bytes`, `process_open_fds`, ...), and
/// the server's capacity: connections and the stream budget, its use and the streams shed.
/// Read from the kernel (`/proc/self`, `getrusage`, `getrlimit`) when `/metrics` is asked for.
/// Loop thread (the server's counters are loop-confined).
enum ProcessMetrics {
    /// The exposition lines (text format 0.0.4) for `server`'s process.
    static func exposition(server: HTTPServer) -> [UInt8] {
        var text = ""
        func metric(_ name: String, _ type: String, _ help: String, _ value: Double) {
            text += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n\(name) \(format(value))\n"
        }
        var usage = rusage()
        if getrusage(RUSAGE_SELF.rawValue, &usage) == 0 {
            let seconds = Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
                + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
            metric("process_cpu_seconds_total", "counter", "Total user and system CPU time spent in seconds.", seconds)
        }
        if let pages = statm() {
            let page = Double(sysconf(Int32(_SC_PAGESIZE)))
            metric("process_virtual_memory_bytes", "gauge", "Virtual memory size in bytes.", Double(pages.size) * page)
            metric("process_resident_memory_bytes", "gauge", "Resident memory size in bytes.", Double(pages.resident) * page)
        }
        if let open = openDescriptors() {
            metric("process_open_fds", "gauge", "Number of open file descriptors.", Double(open))
        }
        var limit = rlimit()
        if getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 {
            metric("process_max_fds", "gauge", "Maximum number of open file descriptors.",
                   limit.rlim_cur == rlim_t.max ? Double(Int32.max) : Double(limit.rlim_cur))
        }
        if let start = startTime() {
            metric("process_start_time_seconds", "gauge", "Start time of the process since unix epoch in seconds.", start)
        }
        metric("tidings_connections", "gauge", "Client connections open now (streams included), counted from accept.",
               Double(server.openConnectionCount))
        metric("tidings_connections_max", "gauge", "Client connections the server accepts at once.", Double(server.connectionLimit))
        metric("tidings_streams_max", "gauge", "Event streams the server holds at most (--max-streams): the stream budget.",
               Double(server.streamLimit))
        metric("tidings_streams", "gauge", "Event streams holding a descriptor now: the stream budget's use.",
               Double(server.openStreamCount))
        metric("tidings_streams_shed_total", "counter",
               "Event streams answered with 200, a retry: and the end because the server (or the client's share) was full.",
               Double(server.streamsShed))
        return Array(text.utf8)
    }

    private static func format(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }

    /// Pages of virtual and resident memory (`/proc/self/statm`).
    private static func statm() -> (size: Int, resident: Int)? {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return nil }
        let fields = text.split(separator: " ")
        guard fields.count >= 2, let size = Int(fields[0]), let resident = Int(fields[1]) else { return nil }
        return (size, resident)
    }

    /// Entries of `/proc/self/fd` (less the one the listing itself holds).
    private static func openDescriptors() -> Int? {
        guard let directory = opendir("/proc/self/fd") else { return nil }
        defer { closedir(directory) }
        var count = 0
        while let entry = readdir(directory) {
            let first = withUnsafeBytes(of: entry.pointee.d_name) { $0[0] }
            if first != UInt8(ascii: ".") { count += 1 }
        }
        return max(0, count - 1)
    }

    /// Seconds since the epoch the process started: `/proc/self/stat`'s start time (clock
    /// ticks after boot) plus the boot time from `/proc/stat`.
    private static func startTime() -> Double? {
        guard let stat = try? String(contentsOfFile: "/proc/self/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return nil }
        // Fields after the command's closing parenthesis start at field 3 (state); start time is 22.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 19, let ticks = Double(fields[19]) else { return nil }
        guard let boot = try? String(contentsOfFile: "/proc/stat", encoding: .utf8)
            .split(separator: "\n").first(where: { $0.hasPrefix("btime ") })
            .flatMap({ Double($0.dropFirst(6).trimmingCharacters(in: .whitespaces)) }) else { return nil }
        return boot + ticks / Double(sysconf(Int32(_SC_CLK_TCK)))
    }
}
