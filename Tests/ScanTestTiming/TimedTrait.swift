import Foundation
import Testing

/// Times each test's own run, from when its body starts to when it ends, and appends the figure to
/// the file that `SCANTRACK_TEST_TIMES` names (nothing is written when the variable is unset).
///
/// Swift Testing's own "passed after N seconds" counts from when a test was scheduled, and it
/// schedules nearly every test at once, so on a busy run those figures say when a test finished,
/// not how long it took. `make test` reads this file to list the slowest tests
/// (scripts/slowest-tests.py). Each suite carries the trait (`@Suite("…", .timed)`); it is
/// recursive, so every test in the suite and its nested suites is timed. It times each test case
/// (a test that is not parameterised has one), not the test as a whole: a test's own scope opens
/// before its cases are admitted, so on a busy run it would count the wait for a place too. The
/// script adds up a test's cases.
///
/// It also says where a test case runs: admitted by `TestAdmission` and on `TestThreads`, off the
/// cooperative pool (see `TestThreads`), so the trait on every suite is what keeps blocking tests
/// from starving the others.
public struct TimedTrait: SuiteTrait, TestTrait, TestScoping {
    public var isRecursive: Bool { true }

    public func scopeProvider(for test: Test, testCase: Test.Case?) -> Self? {
        test.isSuite || testCase == nil ? nil : self
    }

    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        // Admitted first, then timed: the figure is the case's own run, not its wait for a place.
        await TestAdmission.shared.enter()
        defer { TestAdmission.shared.leave() }
        let start = ContinuousClock.now
        defer { TestTimesFile.shared?.append(test: test, elapsed: ContinuousClock.now - start) }
        try await withTaskExecutorPreference(TestThreads.shared) { try await function() }
    }
}

extension Trait where Self == TimedTrait {
    /// Times every test of the suite (see `TimedTrait`).
    public static var timed: Self { TimedTrait() }
}

/// The file of test times: one line a test case, `seconds<TAB>id<TAB>name`, where the name is spelt as
/// Swift Testing's log spells it (`"display name"` or `function()`), so that a failure in the log
/// can be matched to its line. Lines are appended with O_APPEND, one `write` each, so tests that
/// end at once do not interleave.
final class TestTimesFile: Sendable {
    static let shared: TestTimesFile? = ProcessInfo.processInfo.environment["SCANTRACK_TEST_TIMES"].flatMap {
        $0.isEmpty ? nil : TestTimesFile(path: $0)
    }

    private let path: String

    private init(path: String) { self.path = path }

    func append(test: Test, elapsed: Duration) {
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let name = test.displayName.map { "\"\($0)\"" } ?? test.name
        let line = "\(String(format: "%.3f", seconds))\t\(Self.field(test.id.description))\t\(Self.field(name))\n"
        let descriptor = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
        let bytes = Array(line.utf8)
        _ = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
    }

    /// A tab or a line break in a name would split the line.
    private static func field(_ text: String) -> String {
        String(text.map { $0 == "\t" || $0.isNewline ? " " : $0 })
    }
}
