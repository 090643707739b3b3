import Foundation

/// Where each test runs: on threads of its own, not on the cooperative pool, and only a few at once.
///
/// Swift Testing starts nearly every test at once on the cooperative pool, whose width is the number
/// of cores (two here). Most system tests block their thread while a program they started runs
/// (`ProcessRunner.run`, `Polling`), so on a two-core machine the pool was held by two of them at a
/// time, and a test whose service group runs on that pool (the systemd supervisor, the runtimes'
/// services) had each of its steps queued behind every test not yet started: a fresh-clone
/// `make test` kept one waiting for over 900 s of a 953 s suite. Now `TimedTrait` admits a test
/// case through `TestAdmission` (an `await`, which holds no thread) and runs it with
/// `TestThreads.shared` as its task executor, so a blocking test blocks a thread of its own, the
/// child tasks it starts (a service group under `async let`) get threads as they need them, and
/// the cooperative pool is left to the short jobs of unstructured tasks.
///
/// The admission is what the pool's width used to be by accident: a bound on how many tests run at
/// once, so that hundreds of agents and servers are not started together. `SCANTRACK_TEST_WIDTH`
/// sets it (default: twice the cores, since most tests wait on a program or a server rather
/// than compute).
public final class TestThreads: TaskExecutor, @unchecked Sendable {
    public static let shared = TestThreads()

    /// A thread waiting for a job; the job is handed to it directly, so no job waits in a queue
    /// while a thread is free, and none waits behind a blocked one.
    private final class Worker: @unchecked Sendable {
        let wake = DispatchSemaphore(value: 0)
        var job: UnownedJob?
    }

    private let lock = NSLock()
    private var idle: [Worker] = []
    /// How long a thread with nothing to do waits for a job before it ends.
    private let linger: DispatchTimeInterval = .seconds(5)

    private init() {}

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let worker: Worker? = lock.withLock {
            guard let worker = idle.popLast() else { return nil }
            worker.job = job
            return worker
        }
        if let worker {
            worker.wake.signal()
        } else {
            let thread = Thread { [self] in self.work(first: job) }
            thread.stackSize = 8 << 20
            thread.name = "test"
            thread.start()
        }
    }

    private func work(first: UnownedJob) {
        var next: UnownedJob? = first
        let worker = Worker()
        while let job = next {
            job.runSynchronously(on: asUnownedTaskExecutor())
            lock.withLock {
                worker.job = nil
                idle.append(worker)
            }
            next = nil
            if worker.wake.wait(timeout: .now() + linger) == .success {
                next = lock.withLock { worker.job }
            } else {
                // Timed out: still idle means nobody was handed this thread, and it ends; otherwise
                // a job was handed to it just now and its signal is on the way.
                let handed = lock.withLock { () -> Bool in
                    guard let index = idle.firstIndex(where: { $0 === worker }) else { return true }
                    idle.remove(at: index)
                    return false
                }
                if handed {
                    worker.wake.wait()
                    next = lock.withLock { worker.job }
                }
            }
        }
    }
}

/// A bound on how many test cases run at once; waiting for a place suspends, holding no thread.
/// First come, first admitted.
public final class TestAdmission: @unchecked Sendable {
    public static let shared = TestAdmission(
        width: ProcessInfo.processInfo.environment["SCANTRACK_TEST_WIDTH"].flatMap { Int($0) }.flatMap {
            $0 > 0 ? $0 : nil
        } ?? 2 * ProcessInfo.processInfo.activeProcessorCount)

    private let lock = NSLock()
    private var free: Int
    private var waiting: [CheckedContinuation<Void, Never>] = []
    private var head = 0

    public init(width: Int) { free = max(1, width) }

    public func enter() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let admitted = lock.withLock { () -> Bool in
                guard free > 0 else {
                    waiting.append(continuation)
                    return false
                }
                free -= 1
                return true
            }
            if admitted { continuation.resume() }
        }
    }

    public func leave() {
        let next = lock.withLock { () -> CheckedContinuation<Void, Never>? in
            guard head < waiting.count else {
                free += 1
                return nil
            }
            let continuation = waiting[head]
            head += 1
            if head > 256 && head * 2 > waiting.count {
                waiting.removeFirst(head)
                head = 0
            }
            return continuation
        }
        next?.resume()
    }
}
