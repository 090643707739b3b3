import Foundation
import Logging
import ServiceLifecycle

/// systemd's service notifications (sd_notify(3)) without libsystemd: `KEY=VALUE` lines in one
/// datagram to the socket `NOTIFY_SOCKET` names. Under a unit with `Type=notify` the program says
/// when it is ready (`READY=1`), what it is doing (`STATUS=`), that it is still doing its job
/// (`WATCHDOG=1`, within `WatchdogSec=`) and that it is stopping (`STOPPING=1`). Outside systemd
/// (no `NOTIFY_SOCKET`) it does nothing.
public struct SystemdNotifier: Sendable {
    /// The socket's path; an abstract socket's name begins with `@`. Nil: not started by systemd
    /// with notifications.
    public let socketPath: String?
    /// Half of what `WATCHDOG_USEC` gives (systemd's advice: notify at half the limit); nil when
    /// no watchdog is set, or it is set for another process (`WATCHDOG_PID`).
    public let watchdogInterval: Duration?

    /// From the process environment as systemd sets it (the programs pass theirs in).
    public init(environment: [String: String], pid: Int32 = getpid()) {
        let path = environment["NOTIFY_SOCKET"].flatMap { $0.isEmpty ? nil : $0 }
        socketPath = path.flatMap { $0.hasPrefix("/") || $0.hasPrefix("@") ? $0 : nil }
        let forUs = environment["WATCHDOG_PID"].map { Int32($0) == pid } ?? true
        if forUs, let text = environment["WATCHDOG_USEC"], let microseconds = Int64(text), microseconds > 0 {
            watchdogInterval = .microseconds(microseconds / 2)
        } else {
            watchdogInterval = nil
        }
    }

    public var isActive: Bool { socketPath != nil }

    /// Sends `message` (lines of `KEY=VALUE`); false when there is no socket or the send failed.
    @discardableResult
    public func notify(_ message: String) -> Bool {
        guard let socketPath else { return false }
        let descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var name = Array(socketPath.utf8)
        if name.first == UInt8(ascii: "@") { name[0] = 0 }  // the abstract namespace
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard name.count < capacity else { return false }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in name.enumerated() { raw[index] = byte }
        }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + name.count + (name.first == 0 ? 0 : 1))
        let bytes = Array(message.utf8)
        let sent = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bytes.withUnsafeBytes {
                    sendto(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL), pointer, length)
                }
            }
        }
        return sent == bytes.count
    }

    /// `STATUS=` text: one line, no control characters (the status is shown by `systemctl status`).
    public static func statusLine(_ text: String) -> String {
        String(text.unicodeScalars.map { $0.properties.generalCategory == .control ? " " : Character($0) }.prefix(200))
    }
}

/// What a program tells the supervisor at each look: whether it is ready yet, whether it did its
/// job since the last look (feeds the watchdog), and a status line.
public struct SupervisorReport: Sendable, Equatable {
    public var ready: Bool
    public var alive: Bool
    public var status: String

    public init(ready: Bool, alive: Bool, status: String) {
        self.ready = ready
        self.alive = alive
        self.status = status
    }
}

/// The notifications as a service of the program's group (first in, so it says `STOPPING=1` when
/// the shutdown begins and is stopped last): `READY=1` once `report` says ready, then at every
/// watchdog interval `WATCHDOG=1` only while `report` says the program did its job since the
/// last look, with the status line. `report` is called once a look; it keeps its own state
/// between looks. Without `NOTIFY_SOCKET` it waits for the shutdown and sends nothing.
public struct SupervisorService: Service {
    let notifier: SystemdNotifier
    let report: @Sendable () -> SupervisorReport
    let logger: Logger
    /// How often to look before ready, and at most between two watchdog looks.
    let poll: Duration

    public init(
        notifier: SystemdNotifier, logger: Logger, poll: Duration = .milliseconds(200),
        report: @escaping @Sendable () -> SupervisorReport
    ) {
        self.notifier = notifier
        self.report = report
        self.logger = logger
        self.poll = poll
    }

    public func run() async throws {
        guard notifier.isActive else {
            try? await gracefulShutdown()
            return
        }
        var ready = false
        var starving = false
        var nextLook = ContinuousClock.now
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            if !ready || ContinuousClock.now >= nextLook {
                let now = report()
                let status = "STATUS=" + SystemdNotifier.statusLine(now.status)
                if !ready && now.ready {
                    ready = true
                    notifier.notify("READY=1\n" + status)
                    logger.debug("told systemd: ready")
                } else if ready, notifier.watchdogInterval != nil {
                    if now.alive {
                        notifier.notify("WATCHDOG=1\n" + status)
                        if starving { logger.info("doing its job again; the watchdog is fed") }
                        starving = false
                    } else if !starving {
                        starving = true
                        logger.warning(
                            "not doing its job; the watchdog is not fed", metadata: ["status": "\(now.status)"])
                    }
                }
                nextLook = ContinuousClock.now + (notifier.watchdogInterval ?? .seconds(5))
            }
            try? await Task.sleep(for: poll)
        }
        notifier.notify("STOPPING=1")
    }
}

/// A counter one thread advances as it goes round its loop, and a supervisor reads: whether it
/// moved since the supervisor's last look.
public final class Pulse: Sendable {
    private let beats = Guarded<(count: UInt64, seen: UInt64)>((0, 0))

    public init() {}

    public func beat() { beats.withLock { $0.count &+= 1 } }

    /// Beats so far.
    public var count: UInt64 { beats.withLock { $0.count } }

    /// True when it beat since the last call (the first call: since it was made).
    public func movedSinceLastLook() -> Bool {
        beats.withLock { state in
            defer { state.seen = state.count }
            return state.count != state.seen
        }
    }
}

/// A value behind a lock (Synchronization's Mutex needs newer platforms on macOS).
public final class Guarded<Value>: @unchecked Sendable {
    // @unchecked: `value` is touched under `lock` only.
    private let lock = NSLock()
    private var value: Value
    public init(_ value: Value) { self.value = value }
    public func withLock<T>(_ body: (inout Value) -> T) -> T { lock.withLock { body(&value) } }
}

/// A flag that one side sets, once, and others read (a server that has started listening).
public final class SetOnce: Sendable {
    private let value = Guarded(false)

    public init() {}

    public func set() { value.withLock { $0 = true } }
    public var isSet: Bool { value.withLock { $0 } }
}
