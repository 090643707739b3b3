import Logging
import ScanServices
import ScanTestTiming
import Synchronization
import Testing

/// The one retry loop: backoff with jitter, log cadence, run-until-it-works, on a manual sleeper.
@Suite("retry loop", .timed)
struct RetryLogTests {
    typealias Recorder = EscapingLogHandlerTests.Recorder

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Records every wait and never sleeps; stops the token after `stopAfter` waits.
    final class ManualSleeper: RetrySleeper {
        let waits = Mutex<[Duration]>([])
        let stopAfter: Int
        init(stopAfter: Int = .max) { self.stopAfter = stopAfter }
        func sleep(for duration: Duration, stop: StopToken) -> Bool {
            let count = waits.withLock {
                $0.append(duration)
                return $0.count
            }
            if count >= stopAfter { stop.stop() }
            return stop.isStopped
        }
    }

    /// A seeded generator (SplitMix64), for jitter that tests can repeat.
    struct Seeded: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    static func logger(_ recorder: Recorder) -> Logger {
        Logger(label: "test") { _ in EscapingLogHandlerTests.Recording(recorder: recorder) }
    }

    @Test("the wait doubles from the first to the limit; jitter moves each by at most its share, not all alike")
    func backoff() {
        var plain = RetryLog(
            "x", logger: Self.logger(Recorder()),
            policy: RetryPolicy(first: .milliseconds(250), limit: .seconds(2), jitter: 0))
        var waits: [Duration] = []
        for _ in 0..<6 {
            plain.failed(Failure(description: "down"))
            waits.append(plain.backoff())
        }
        #expect(waits == [.milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2), .seconds(2), .seconds(2)])

        var jittered = RetryLog("x", logger: Self.logger(Recorder()), policy: .backoff, random: Seeded(state: 7))
        var drawn: [Duration] = []
        for _ in 0..<40 {
            jittered.failed(Failure(description: "down"))
            if jittered.failures >= 4 { drawn.append(jittered.backoff()) }
        }
        #expect(drawn.allSatisfy { $0 >= .milliseconds(1600) && $0 <= .milliseconds(2400) }, "\(drawn)")
        #expect(Set(drawn).count > 10, "replicas do not retry in step")
    }

    @Test("an error is logged when it is new and every logEvery failures while it stays; working again once")
    func cadence() {
        let recorder = Recorder()
        var retry = RetryLog(
            "server away", logger: Self.logger(recorder),
            policy: RetryPolicy(first: .milliseconds(1), limit: .milliseconds(1), logEvery: 5))
        for _ in 0..<12 { retry.failed(Failure(description: "refused")) }
        retry.failed(Failure(description: "timed out"))
        retry.succeeded("server back")
        retry.succeeded("server back")
        let lines = recorder.events.withLock { $0 }
        #expect(lines.map(\.message) == ["server away", "server away", "server away", "server away", "server back"])
        #expect(lines.map { $0.metadata["failures"]?.description } == ["1", "5", "10", "13", "13"])
        #expect(lines[3].metadata["error"] == "timed out")
        #expect(retry.failures == 0)
    }

    @Test("run tries until it works, waiting by the policy on the sleeper; a refused error is thrown; a stop ends it")
    func run() throws {
        let recorder = Recorder()
        let policy = RetryPolicy(first: .milliseconds(250), limit: .seconds(2), jitter: 0)
        var retry = RetryLog("store away", logger: Self.logger(recorder), policy: policy)
        let sleeper = ManualSleeper()
        var tries = 0
        let value = try retry.run(stop: StopToken(), sleeper: sleeper, recovered: "stored") { () throws -> Int in
            tries += 1
            if tries < 4 { throw Failure(description: "down") }
            return 42
        }
        #expect(value == 42 && tries == 4)
        #expect(sleeper.waits.withLock { $0 } == [.milliseconds(250), .milliseconds(500), .seconds(1)])
        #expect(recorder.events.withLock { $0 }.last?.message == "stored")

        var refusing = RetryLog("x", logger: Self.logger(Recorder()), policy: policy)
        #expect(throws: Failure.self) {
            _ = try refusing.run(stop: StopToken(), sleeper: sleeper, recovered: "", retryable: { _ in false }) {
                throw Failure(description: "wrong password")
            }
        }
        let stopping = ManualSleeper(stopAfter: 3)
        var endless = RetryLog("x", logger: Self.logger(Recorder()), policy: policy)
        let none: Int? = try endless.run(stop: StopToken(), sleeper: stopping, recovered: "") {
            throw Failure(description: "down")
        }
        #expect(none == nil && stopping.waits.withLock { $0.count } == 3)
    }
}
