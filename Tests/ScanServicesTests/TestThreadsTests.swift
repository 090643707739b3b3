import Foundation
import ScanTestTiming
import Testing

/// Where the tests run (ScanTestTiming's `TestThreads` and `TestAdmission`): the guarantees the
/// whole suite relies on not to starve its service groups.
@Suite("test threads and admission", .timed)
struct TestThreadsTests {
    final class Flag: @unchecked Sendable {
        let done = DispatchSemaphore(value: 0)
    }

    @Test("a test that blocks its thread does not stop the child tasks it started")
    func blockingTestWithChildren() async {
        // Eight children that each block until the test lets them go: on a pool as wide as the
        // cores they could not all be running at once, and the test's own wait would never end.
        let count = 8
        let started = Flag()
        let release = Flag()
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<count {
                group.addTask {
                    started.done.signal()
                    release.done.wait()
                }
            }
            var all = true
            for _ in 0..<count where started.done.wait(timeout: .now() + 120) != .success { all = false }
            #expect(all, "every child ran while the others and the test blocked their threads")
            for _ in 0..<count { release.done.signal() }
        }
    }

    @Test("every child task of many rounds runs once, whatever threads are idle or busy", arguments: [4, 8, 12])
    func manyJobs(children: Int) async {
        var total = 0
        for round in 0..<50 {
            total += await withTaskGroup(of: Int.self) { group in
                for index in 0..<children { group.addTask { index + round } }
                return await group.reduce(0, +)
            }
        }
        let perRound = (0..<children).reduce(0, +)
        #expect(total == 50 * perRound + (0..<50).reduce(0, +) * children)
    }

    @Test("admission lets no more than its width in at once, and everyone in")
    func admission() async {
        final class Count: @unchecked Sendable {
            let lock = NSLock()
            var inside = 0
            var most = 0
            var admitted: [Int] = []
        }
        let admission = TestAdmission(width: 3)
        let count = Count()
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<20 {
                group.addTask {
                    await admission.enter()
                    count.lock.withLock {
                        count.inside += 1
                        count.most = max(count.most, count.inside)
                        count.admitted.append(index)
                    }
                    try? await Task.sleep(for: .milliseconds(2))
                    count.lock.withLock { count.inside -= 1 }
                    admission.leave()
                }
            }
        }
        #expect(count.most <= 3 && count.most >= 1)
        #expect(count.admitted.count == 20 && Set(count.admitted).count == 20, "each admitted once")
        #expect(count.inside == 0)
    }
}
