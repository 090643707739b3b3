import Foundation
import Logging
import ScanServices
import ScanTestSupport
import ScanTestTiming
import ServiceLifecycle
import Testing

@Suite("systemd notifications", .timed)
struct SystemdTests {
    @Test(
        "the environment says where to notify and how often the watchdog wants to hear; another process's watchdog is not ours"
    )
    func environment() {
        let none = SystemdNotifier(environment: [:])
        #expect(!none.isActive && none.watchdogInterval == nil)
        #expect(!none.notify("READY=1"), "nothing sent outside systemd")
        let unit = SystemdNotifier(
            environment: ["NOTIFY_SOCKET": "/run/systemd/notify", "WATCHDOG_USEC": "30000000", "WATCHDOG_PID": "42"],
            pid: 42)
        #expect(unit.socketPath == "/run/systemd/notify" && unit.watchdogInterval == .seconds(15))
        let other = SystemdNotifier(
            environment: ["NOTIFY_SOCKET": "@abstract", "WATCHDOG_USEC": "30000000", "WATCHDOG_PID": "41"], pid: 42)
        #expect(other.socketPath == "@abstract" && other.watchdogInterval == nil)
        for bad in ["relative/path", ""] {
            #expect(!SystemdNotifier(environment: ["NOTIFY_SOCKET": bad]).isActive, "\(bad)")
        }
        for bad in ["0", "-5", "soon"] {
            #expect(SystemdNotifier(environment: ["WATCHDOG_USEC": bad]).watchdogInterval == nil, "\(bad)")
        }
        #expect(SystemdNotifier.statusLine("line\none\u{1B}[2J") == "line one [2J")
    }

    @Test("a notification reaches the socket NOTIFY_SOCKET names, as one datagram")
    func datagram() throws {
        let socket = try NotifySocket()
        let notifier = SystemdNotifier(environment: ["NOTIFY_SOCKET": socket.path])
        #expect(notifier.notify("READY=1\nSTATUS=up"))
        #expect(socket.next(seconds: 5) == "READY=1\nSTATUS=up")
    }

    @Test("ready once the program says so; the watchdog fed only while it does its job; STOPPING=1 at the shutdown")
    func service() async throws {
        let socket = try NotifySocket()
        let notifier = SystemdNotifier(environment: ["NOTIFY_SOCKET": socket.path, "WATCHDOG_USEC": "200000"])
        // The program: not ready for its first looks, then ready and working, then stuck, then working again.
        final class Script: @unchecked Sendable {
            let lock = NSLock()
            var looks = 0
            func next() -> SupervisorReport {
                lock.withLock {
                    looks += 1
                    let stuck = (8...11).contains(looks)
                    return SupervisorReport(ready: looks >= 3, alive: !stuck, status: "look \(looks)")
                }
            }
        }
        let script = Script()
        let service = SupervisorService(notifier: notifier, logger: Logger(label: "test"), poll: .milliseconds(10)) {
            script.next()
        }
        let group = ServiceGroup(
            configuration: .init(
                services: [.init(service: service)], gracefulShutdownSignals: [], logger: Logger(label: "test")))
        async let running: Void = group.run()
        // Received without blocking the test's thread for long. The bound only catches a service that
        // hangs: the test runs on threads of its own (TestThreads), so the suite around it no longer
        // delays its group (it once waited for the cooperative pool for over 900 s).
        func receive(until done: ([String]) -> Bool) async -> [String] {
            var received: [String] = []
            let deadline = ContinuousClock.now + .seconds(300)
            while !done(received) && ContinuousClock.now < deadline {
                if let message = socket.next(seconds: 0) {
                    received.append(message)
                } else {
                    try? await Task.sleep(for: .milliseconds(5))
                }
            }
            return received
        }
        let received = await receive { $0.count >= 10 }
        await group.triggerGracefulShutdown()
        try await running
        let stopping = await receive { $0.last == "STOPPING=1" }
        #expect(received.first == "READY=1\nSTATUS=look 3", "\(received)")
        let fed = received.dropFirst().map { $0.split(separator: "\n").first.map(String.init) ?? "" }
        #expect(fed.allSatisfy { $0 == "WATCHDOG=1" }, "\(received)")
        let looks = received.dropFirst().compactMap { $0.split(separator: " ").last.flatMap { Int($0) } }
        #expect(!looks.contains { (8...11).contains($0) }, "no watchdog while stuck: \(looks)")
        #expect(looks.contains { $0 > 11 }, "fed again once it works: \(looks)")
        #expect(stopping.last == "STOPPING=1", "\(stopping)")
    }

    @Test("a pulse says whether its loop went round since the last look")
    func pulse() {
        let pulse = Pulse()
        #expect(!pulse.movedSinceLastLook())
        pulse.beat()
        pulse.beat()
        #expect(pulse.movedSinceLastLook() && pulse.count == 2)
        #expect(!pulse.movedSinceLastLook())
    }
}

@Suite("journal priorities", .timed)
struct JournalTests {
    @Test("stderr is the journal only when JOURNAL_STREAM names its own device and inode")
    func detection() {
        var status = stat()
        #expect(fstat(2, &status) == 0)
        let own = "\(status.st_dev):\(status.st_ino)"
        #expect(ScanLogging.standardErrorIsJournal(environment: ["JOURNAL_STREAM": own]))
        for other in ["\(status.st_dev):\(status.st_ino + 1)", "", "12", "a:b", "1:2:3"] {
            #expect(!ScanLogging.standardErrorIsJournal(environment: ["JOURNAL_STREAM": other]), "\(other)")
        }
        #expect(!ScanLogging.standardErrorIsJournal(environment: [:]))
    }

    @Test("each level has syslog's priority")
    func levels() {
        let expected: [(Logger.Level, Int)] = [
            (.trace, 7), (.debug, 7), (.info, 6), (.notice, 5), (.warning, 4), (.error, 3), (.critical, 2),
        ]
        for (level, priority) in expected { #expect(ScanLogging.syslogPriority(level) == priority, "\(level)") }
    }
}
