/// Waits until `condition` holds, sleeping between looks so the service group under test gets the
/// threads it needs. The bound only catches a hang: alone the runtime tests take a fraction of a
/// second, and since each test runs on threads of its own (ScanTestTiming's `TestThreads`) the
/// system tests beside them no longer hold the threads their groups run on (before, they waited
/// for the cooperative pool for up to the whole suite's length, and this bound was 2,400 s).
public func waitUntil(_ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + .seconds(300)
    while !condition() {
        if ContinuousClock.now > deadline { return false }
        try? await Task.sleep(for: .milliseconds(2))
    }
    return true
}
