import Foundation

/// Runs `body` on a thread of its own; `wait` joins it.
public final class WorkerThread: @unchecked Sendable {
    // @unchecked: the semaphore is thread-safe.
    private let done = DispatchSemaphore(value: 0)
    public func wait() { done.wait() }
    fileprivate func finished() { done.signal() }
}

public func startThread(_ name: String, _ body: @escaping @Sendable () -> Void) -> WorkerThread {
    let worker = WorkerThread()
    let thread = Thread {
        body()
        worker.finished()
    }
    thread.name = name
    thread.start()
    return worker
}
