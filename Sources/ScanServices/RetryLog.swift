import Logging

/// How a retry loop waits between tries and how often it logs.
public struct RetryPolicy: Sendable, Equatable {
    /// The wait after the first failure; it doubles with each failure after it, up to `limit`.
    public var first: Duration
    public var limit: Duration
    /// A share of each wait (0…1) drawn at random either way, so that replicas and agents that
    /// lost the same server do not all come back in the same millisecond.
    public var jitter: Double
    /// A failure with the same error as the one before is logged again every `logEvery` failures.
    public var logEvery: Int

    public init(first: Duration, limit: Duration, jitter: Double = 0.2, logEvery: Int = 40) {
        self.first = first
        self.limit = max(first, limit)
        self.jitter = min(max(jitter, 0), 1)
        self.logEvery = max(1, logEvery)
    }

    /// A server coming back (a camera rebooting, JetStream electing a leader): 0.25 s doubling to 2 s.
    public static let backoff = RetryPolicy(first: .milliseconds(250), limit: .seconds(2))
    /// A poll that should notice the return at once (a fetch or store loop already paced by the
    /// server's own timeouts): every 0.25 s.
    public static let poll = RetryPolicy(first: .milliseconds(250), limit: .milliseconds(250))
    /// Background work that can wait (partition maintenance): 30 s.
    public static let slow = RetryPolicy(first: .seconds(30), limit: .seconds(30), jitter: 0.1)
}

/// Waits between tries, cut short by a stop: the wall clock in the programs, a manual clock in
/// the tests (which then never sleep).
public protocol RetrySleeper: Sendable {
    /// Waits `duration` or until `stop`; true when stopped.
    func sleep(for duration: Duration, stop: StopToken) -> Bool
}

/// The wall clock.
public struct WallSleeper: RetrySleeper {
    public init() {}
    public func sleep(for duration: Duration, stop: StopToken) -> Bool { stop.sleep(for: duration) }
}

/// The one retry loop of the programs: keep trying something that fails for a while (a server
/// restarting), wait by the policy's backoff with jitter, log when the error changes, every
/// `logEvery` failures while it stays the same, and once when it works again — instead of a
/// line per attempt.
public struct RetryLog {
    public let what: String
    public let logger: Logger
    public let policy: RetryPolicy
    public private(set) var failures = 0
    private var lastError = ""
    private var random: any RandomNumberGenerator

    public init(
        _ what: String, logger: Logger, policy: RetryPolicy = .backoff,
        random: any RandomNumberGenerator = SystemRandomNumberGenerator()
    ) {
        self.what = what
        self.logger = logger
        self.policy = policy
        self.random = random
    }

    /// Notes a failure; logs it at warning when it is new (or every `logEvery` failures).
    public mutating func failed(_ error: any Error, metadata: Logger.Metadata = [:]) {
        failures += 1
        let text = "\(error)"
        guard text != lastError || failures % policy.logEvery == 0 else { return }
        lastError = text
        var fields = metadata
        fields["error"] = "\(text)"
        fields["failures"] = "\(failures)"
        logger.warning("\(what)", metadata: fields)
    }

    /// How long to wait before the next try: `first` after the first failure, doubling with each
    /// one after it, never more than `limit`, then moved by up to ± `jitter` of itself.
    public mutating func backoff() -> Duration {
        var delay = policy.first
        for _ in 1..<max(1, min(failures, 32)) where delay < policy.limit { delay *= 2 }
        delay = min(delay, policy.limit)
        guard policy.jitter > 0 else { return delay }
        let share = Double.random(in: -policy.jitter...policy.jitter, using: &random)
        return delay + delay * share
    }

    /// Notes a failure and waits the backoff; true when stopped meanwhile.
    @discardableResult
    public mutating func failedAndWait(
        _ error: any Error, stop: StopToken, sleeper: any RetrySleeper = WallSleeper(), metadata: Logger.Metadata = [:]
    ) -> Bool {
        failed(error, metadata: metadata)
        return sleeper.sleep(for: backoff(), stop: stop)
    }

    /// Notes a success; after failures, logs that it works again.
    public mutating func succeeded(_ message: String) {
        guard failures > 0 else { return }
        logger.info("\(message)", metadata: ["failures": .stringConvertible(failures)])
        failures = 0
        lastError = ""
    }

    /// Runs `body` until it returns (then logs `recovered` if it had failed), waiting between
    /// tries; nil when stopped first. An error `retryable` refuses is thrown at once.
    public mutating func run<T>(
        stop: StopToken, sleeper: any RetrySleeper = WallSleeper(), recovered: String,
        retryable: (any Error) -> Bool = { _ in true }, _ body: () throws -> T
    ) throws -> T? {
        while !stop.isStopped {
            do {
                let value = try body()
                succeeded(recovered)
                return value
            } catch  where retryable(error) {
                failedAndWait(error, stop: stop, sleeper: sleeper)
            }
        }
        return nil
    }
}
