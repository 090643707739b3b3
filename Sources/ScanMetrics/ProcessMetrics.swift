import Foundation

/// The process's own figures in Prometheus's standard `process_*` names (as every Prometheus
/// client library exports them, so existing dashboards and alerts apply): CPU, memory, file
/// descriptors and start time, read from `/proc` at each scrape. Linux only, as ScanTrack is.
public enum ProcessMetrics {
    /// One read of the figures; nil for what `/proc` did not give.
    public struct Sample: Sendable, Equatable {
        public var cpuSeconds: Double?
        public var residentBytes: Double?
        public var virtualBytes: Double?
        public var openFileDescriptors: Double?
        public var maxFileDescriptors: Double?
        public var startTimeSeconds: Double?
        public var threads: Double?
    }

    /// Every metric's `# HELP` text (docs/metrics.md's table has the same words).
    public static let help: [(name: String, type: String, text: String)] = [
        ("process_cpu_seconds_total", "counter", "user and system CPU time the process has used, in seconds"),
        ("process_resident_memory_bytes", "gauge", "resident memory in bytes"),
        ("process_virtual_memory_bytes", "gauge", "virtual memory in bytes"),
        ("process_open_fds", "gauge", "open file descriptors"),
        ("process_max_fds", "gauge", "the limit of open file descriptors (RLIMIT_NOFILE)"),
        ("process_start_time_seconds", "gauge", "when the process started, in seconds since the Unix epoch"),
        ("process_threads", "gauge", "threads of the process"),
    ]

    /// The figures of this process now.
    public static func sample() -> Sample {
        let stat = (try? String(contentsOfFile: "/proc/self/stat", encoding: .utf8)) ?? ""
        let boot = (try? String(contentsOfFile: "/proc/stat", encoding: .utf8)) ?? ""
        let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count)
        var limit = rlimit()
        let maxFds = getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 ? Double(limit.rlim_cur) : nil
        return parse(
            stat: stat, procStat: boot, ticksPerSecond: Double(sysconf(Int32(_SC_CLK_TCK))),
            pageBytes: Double(sysconf(Int32(_SC_PAGESIZE))), openFileDescriptors: fds.map(Double.init),
            maxFileDescriptors: maxFds)
    }

    /// The figures from the text of `/proc/self/stat` and `/proc/stat`. The program's name (field 2)
    /// is in parentheses and may itself hold spaces and parentheses: the fields are counted from
    /// the last `)`.
    static func parse(
        stat: String, procStat: String, ticksPerSecond: Double, pageBytes: Double, openFileDescriptors: Double?,
        maxFileDescriptors: Double?
    ) -> Sample {
        var sample = Sample(openFileDescriptors: openFileDescriptors, maxFileDescriptors: maxFileDescriptors)
        if let close = stat.lastIndex(of: ")") {
            // Field 3 (state) is the first after the name: field n is at n - 3.
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            func field(_ number: Int) -> Double? {
                number - 3 < fields.count
                    ? Double(fields[number - 3].trimmingCharacters(in: .whitespacesAndNewlines)) : nil
            }
            if ticksPerSecond > 0, let user = field(14), let system = field(15) {
                sample.cpuSeconds = (user + system) / ticksPerSecond
            }
            sample.threads = field(20)
            sample.virtualBytes = field(23)
            sample.residentBytes = field(24).map { $0 * pageBytes }
            let bootTime = procStat.split(separator: "\n").first { $0.hasPrefix("btime ") }
                .flatMap { Double($0.dropFirst(6).trimmingCharacters(in: .whitespaces)) }
            if ticksPerSecond > 0, let bootTime, let started = field(22) {
                sample.startTimeSeconds = bootTime + started / ticksPerSecond
            }
        }
        return sample
    }

    /// The sample in the Prometheus text format, each metric with its HELP and TYPE lines.
    public static func text(_ sample: Sample = sample()) -> String {
        let values: [String: Double?] = [
            "process_cpu_seconds_total": sample.cpuSeconds,
            "process_resident_memory_bytes": sample.residentBytes,
            "process_virtual_memory_bytes": sample.virtualBytes,
            "process_open_fds": sample.openFileDescriptors, "process_max_fds": sample.maxFileDescriptors,
            "process_start_time_seconds": sample.startTimeSeconds, "process_threads": sample.threads,
        ]
        var lines: [String] = []
        for (name, type, text) in help {
            guard let value = values[name] ?? nil else { continue }
            lines += ["# HELP \(name) \(text)", "# TYPE \(name) \(type)", "\(name) \(number(value))"]
        }
        return lines.map { $0 + "\n" }.joined()
    }

    /// Whole numbers without a fraction (`1795800000`), others as Swift writes a Double.
    static func number(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }
}
