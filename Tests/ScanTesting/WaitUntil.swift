/// Waits until `condition` holds, without blocking a thread of the cooperative pool (a service
/// group under test runs there). The bound only catches a hang: alone the runtime tests take a
/// fraction of a second, but in the full suite the pool's two threads (one a core) can be held by
/// the synchronous system tests running beside them until nearly all of those are done, and the
/// group waits its turn. So the bound is longer than the whole suite takes (12 minutes here; 600 s
/// was once too short), and still well inside CI's 90 minutes.
public func waitUntil(_ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + .seconds(2_400)
    while !condition() {
        if ContinuousClock.now > deadline { return false }
        try? await Task.sleep(for: .milliseconds(2))
    }
    return true
}
