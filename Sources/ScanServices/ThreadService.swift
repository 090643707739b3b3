import Foundation
import ServiceLifecycle

/// A service whose work is blocking C (zbar, libpq, cnats, V4L2): the body runs on a thread of
/// its own, off the cooperative pool, and `run()` returns when the body does. Graceful shutdown
/// and cancellation stop the body's token; the body returns as soon as it sees it.
public struct ThreadService: Service, CustomStringConvertible {
    public let name: String
    private let body: @Sendable (StopToken) throws -> Void

    public init(_ name: String, body: @escaping @Sendable (StopToken) throws -> Void) {
        self.name = name
        self.body = body
    }

    public var description: String { name }

    public func run() async throws {
        let token = StopToken()
        try await withTaskCancellationHandler {
            try await withGracefulShutdownHandler {
                try await runOnThread(token)
            } onGracefulShutdown: {
                token.stop()
            }
        } onCancel: {
            token.stop()
        }
    }

    private func runOnThread(_ token: StopToken) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let thread = Thread { [body] in
                do {
                    try body(token)
                    continuation.resume()
                } catch {
                    continuation.resume(throwing: error)
                }
            }
            thread.name = name
            thread.start()
        }
    }
}

/// One long-lived thread that runs one job at a time for its owner: the ingest loop hands each
/// batch's database write to it and fetches the next batch meanwhile (no thread per batch).
public final class BackgroundWorker: @unchecked Sendable {
    // @unchecked: `job`, `result` and `closed` are guarded by `condition`.
    private let condition = NSCondition()
    private var job: (@Sendable () -> Void)?
    private var busy = false
    private var closed = false

    public init(name: String) {
        let thread = Thread { [self] in loop() }
        thread.name = name
        thread.start()
    }

    /// Starts `work` on the worker thread; `wait()` returns once it has finished.
    public func start(_ work: @escaping @Sendable () -> Void) {
        condition.withLock {
            while busy { condition.wait() }
            job = work
            busy = true
            condition.broadcast()
        }
    }

    /// Waits for the job `start` began.
    public func wait() {
        condition.withLock {
            while busy { condition.wait() }
        }
    }

    /// Ends the thread once it is idle.
    public func close() {
        condition.withLock {
            closed = true
            condition.broadcast()
        }
    }

    private func loop() {
        while true {
            let next: (@Sendable () -> Void)? = condition.withLock {
                while job == nil && !closed { condition.wait() }
                defer { job = nil }
                return job
            }
            guard let next else { return }
            next()
            condition.withLock {
                busy = false
                condition.broadcast()
            }
        }
    }
}

extension BackgroundWorker {
    /// Runs `work` once on a thread of its own; `wait()` joins it (tests, benchmarks).
    public static func running(_ name: String, _ work: @escaping @Sendable () -> Void) -> BackgroundWorker {
        let worker = BackgroundWorker(name: name)
        worker.start(work)
        worker.close()
        return worker
    }
}
