import Foundation

/// Runs a program to the end and collects its output: for `zbarimg`, and for our own binaries.
public struct ProcessResult: Sendable {
    public var status: Int32
    public var stdout: [UInt8]
    public var stderr: String
    public var stdoutText: String { String(decoding: stdout, as: UTF8.self) }
}

public enum ProcessRunner {
    public static func run(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil, stdin: [UInt8]? = nil
    ) throws -> ProcessResult {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let environment {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        }
        let out = Pipe()
        let err = Pipe()
        let input = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = input
        try withSignalsUnblocked { try process.run() }
        if let stdin { input.fileHandleForWriting.write(Data(stdin)) }
        try input.fileHandleForWriting.close()
        // Read both pipes concurrently so a chatty child cannot block on a full pipe.
        nonisolated(unsafe) var errData = Data()
        let group = DispatchGroup()
        group.enter()
        DispatchQueue.global().async {
            errData = err.fileHandleForReading.readDataToEndOfFile()
            group.leave()
        }
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        group.wait()
        process.waitUntilExit()
        return ProcessResult(
            status: process.terminationStatus, stdout: Array(outData), stderr: String(decoding: errData, as: UTF8.self))
    }

    /// Runs a command that starts daemons (local servers): its output goes to `log`, not to a
    /// pipe, since a daemon keeps whatever it inherits open and a pipe would never reach its end.
    public static func runDetached(_ command: [String], log: String) throws -> Int32 {
        let quoted = command.map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = ["-c", "exec \(quoted) >> '\(log)' 2>&1 < /dev/null"]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try withSignalsUnblocked { try process.run() }
        process.waitUntilExit()
        return process.terminationStatus
    }

    /// The path of a program on PATH (for system tools like zbarimg).
    public static func which(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for directory in path.split(separator: ":") {
            let candidate = "\(directory)/\(name)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }
}

extension ProcessRunner {
    /// Starts a long-running program with its stderr appended to `log` (read it after the exit)
    /// and stdout discarded, or written to `stdoutFile`.
    public static func start(
        _ executable: String, _ arguments: [String], environment: [String: String], log: String,
        stdoutFile: String? = nil
    ) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = environment
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
        handle.seekToEndOfFile()
        process.standardError = handle
        if let stdoutFile {
            _ = FileManager.default.createFile(atPath: stdoutFile, contents: nil)
            process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: stdoutFile))
        } else {
            process.standardOutput = FileHandle.nullDevice
        }
        try withSignalsUnblocked { try process.run() }
        return process
    }

    /// Runs `body` (a spawn) with no signal blocked on this thread. A child inherits the spawning
    /// thread's signal mask, and the test runner's threads block nearly every signal: a child
    /// that does not unblock SIGTERM itself (a Python script, a server) would ignore `terminate()`
    /// until the SIGKILL after a stop's bound.
    public static func withSignalsUnblocked<T>(_ body: () throws -> T) rethrows -> T {
        var none = sigset_t()
        var previous = sigset_t()
        sigemptyset(&none)
        pthread_sigmask(SIG_SETMASK, &none, &previous)
        defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
        return try body()
    }
}
