import Foundation
import Logging
import ScanServices
import ScanTestTiming
import ServiceLifecycle
import Testing

@Suite("services plumbing", .timed)
struct ServicesPlumbingTests {
    @Test("a stop token wakes a sleeper, runs its actions once, and runs late registrations at once")
    func stopToken() {
        let token = StopToken()
        let count = Counter()
        token.whenStopped { count.add() }
        let sleeper = BackgroundWorker.running("sleeper") { count.add(token.sleep(for: .seconds(60)) ? 10 : 100) }
        token.stop()
        token.stop()
        sleeper.wait()
        #expect(count.value == 11, "one action, and the sleeper returned true")
        token.whenStopped { count.add() }
        #expect(count.value == 12)
    }

    @Test("a background worker runs one job at a time on its thread, in order")
    func backgroundWorker() {
        let worker = BackgroundWorker(name: "worker")
        let log = Counter()
        for n in 1...5 {
            worker.start { log.append(n) }
            worker.wait()
        }
        worker.close()
        #expect(log.items == [1, 2, 3, 4, 5])
    }

    @Test("a thread service ends when graceful shutdown stops its body, and its error reaches the group")
    func threadService() async throws {
        let stopped = Counter()
        let service = ThreadService("test") { stop in
            while !stop.sleep(for: .seconds(60)) {}
            stopped.add()
        }
        let group = programGroup([.init(service: service)], stopsOnSignals: false, logger: Logger(label: "test"))
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            try await Task.sleep(for: .milliseconds(20))
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
        #expect(stopped.value == 1)

        struct Broken: Error {}
        let failing = programGroup(
            [.init(service: ThreadService("failing") { _ in throw Broken() })], stopsOnSignals: false,
            logger: Logger(label: "test"))
        await #expect(throws: (any Error).self) { try await failing.run() }
    }

    @Test("log levels: every level parses; anything else is an error naming the flag and the levels")
    func logLevels() throws {
        #expect(try ScanLogging.level("debug") == .debug)
        #expect(try ScanLogging.level("WARNING") == .warning)
        #expect(throws: LogLevelError.self) { try ScanLogging.level("loud") }
        do {
            _ = try ScanLogging.level("loud")
        } catch {
            #expect(
                error.description
                    == "--log-level: 'loud' is not a log level (trace, debug, info, notice, warning, error, critical)")
        }
    }

    @Test("duration seconds round-trip")
    func durations() {
        #expect(Duration.seconds(1.5) == .milliseconds(1500))
        #expect(Duration.milliseconds(250).seconds == 0.25)
    }
}

final class Counter: @unchecked Sendable {
    // @unchecked: guarded by the lock.
    private let lock = NSLock()
    private var total = 0
    private var list: [Int] = []
    func add(_ amount: Int = 1) { lock.withLock { total += amount } }
    func append(_ item: Int) { lock.withLock { list.append(item) } }
    var value: Int { lock.withLock { total } }
    var items: [Int] { lock.withLock { list } }
}
