import Logging

/// "Retry, and log each new error once": a loop that keeps trying something that fails for a
/// while (a server restarting) logs when the error changes, every `repeatEvery` failures while it
/// stays the same, and once when it works again, instead of a line per attempt.
public struct RetryLog {
    public let what: String
    public let logger: Logger
    public let repeatEvery: Int
    public private(set) var failures = 0
    private var lastError = ""

    public init(_ what: String, logger: Logger, repeatEvery: Int = 40) {
        self.what = what
        self.logger = logger
        self.repeatEvery = repeatEvery
    }

    /// Notes a failure; logs it at warning when it is new (or every `repeatEvery` failures).
    public mutating func failed(_ error: any Error, metadata: Logger.Metadata = [:]) {
        failures += 1
        let text = "\(error)"
        guard text != lastError || failures % repeatEvery == 0 else { return }
        lastError = text
        var fields = metadata
        fields["error"] = "\(text)"
        fields["failures"] = "\(failures)"
        logger.warning("\(what)", metadata: fields)
    }

    /// How long to wait before the next try: `first` after the first failure, doubling with each
    /// one after it, never more than `limit` (a camera rebooting is back within seconds; a camera
    /// gone for good is not hammered).
    public func backoff(first: Duration = .milliseconds(250), limit: Duration = .seconds(2)) -> Duration {
        var delay = first
        for _ in 1..<max(1, min(failures, 16)) where delay < limit { delay *= 2 }
        return min(delay, limit)
    }

    /// Notes a success; after failures, logs that it works again.
    public mutating func succeeded(_ message: String) {
        guard failures > 0 else { return }
        logger.info("\(message)", metadata: ["failures": "\(failures)"])
        failures = 0
        lastError = ""
    }
}
