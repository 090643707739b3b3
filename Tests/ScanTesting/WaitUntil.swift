/// Waits until `condition` holds, without blocking a thread of the cooperative pool (a service
/// group under test runs there). The bound only catches a hang: alone the runtime tests take a
/// fraction of a second, but in the full suite the pool's threads can be held for minutes by the
/// synchronous decoding tests running beside them, and the group waits its turn.
public func waitUntil(_ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + .seconds(600)
    while !condition() {
        if ContinuousClock.now > deadline { return false }
        try? await Task.sleep(for: .milliseconds(2))
    }
    return true
}
