import Dispatch

/// Runs independent pieces of blocking C work on up to `threads` threads (GCD's worker threads,
/// never Swift's cooperative pool) and returns the results in input order, so the outcome does not
/// depend on the number of threads or on which thread took which piece.
public enum ParallelWork {
    public static func map<Input: Sendable, Output: Sendable>(
        _ inputs: [Input], threads: Int, _ body: @Sendable (Input) -> Output
    ) -> [Output] {
        let workers = max(1, min(threads, inputs.count))
        guard workers > 1 else { return inputs.map(body) }
        let results = ResultSlots<Output>(count: inputs.count)
        // Worker w takes inputs w, w + workers, …: a fixed split, no shared counter.
        DispatchQueue.concurrentPerform(iterations: workers) { worker in
            var index = worker
            while index < inputs.count {
                results.store(body(inputs[index]), at: index)
                index += workers
            }
        }
        return results.collect()
    }
}

/// One slot per input, each written by exactly one worker before `concurrentPerform` returns.
private final class ResultSlots<Output>: @unchecked Sendable {
    // @unchecked: every slot is written once, by one thread, and read only after all writers have
    // finished (concurrentPerform returns after its last iteration). The slots are raw memory, not
    // an array property, so concurrent writes to different slots never touch shared state.
    private let slots: UnsafeMutableBufferPointer<Output?>

    init(count: Int) {
        slots = .allocate(capacity: count)
        slots.initialize(repeating: nil)
    }

    deinit {
        slots.deinitialize()
        slots.deallocate()
    }

    func store(_ value: Output, at index: Int) { slots[index] = value }

    /// Every slot was stored by the time this runs.
    func collect() -> [Output] { slots.compactMap { $0 } }
}
