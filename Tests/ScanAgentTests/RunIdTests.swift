import ScanTestTiming
import Testing

@testable import ScanAgent

/// Event ids are made from the run id: another camera must not be able to guess them.
@Suite("run ids", .timed)
struct RunIdTests {
    @Test("a run id is the start time and 128 random bits in base 36: 2,000 of them are all different")
    func unguessable() {
        let ids = (0..<2_000).map { _ in makeRunID() }
        #expect(Set(ids).count == ids.count)
        let base36 = Set("0123456789abcdefghijklmnopqrstuvwxyz")
        #expect(ids.allSatisfy { $0.count >= 34 && $0.allSatisfy(base36.contains) })
        // The 26 random characters differ between ids made in the same millisecond.
        let tails = Set(ids.map { String($0.suffix(26)) })
        #expect(tails.count == ids.count)
        // Every position of the random part takes many values: no fixed or narrow digits.
        for position in 0..<26 {
            let values = Set(ids.map { Array($0.suffix(26))[position] })
            #expect(values.count >= (position == 0 || position == 13 ? 2 : 20), "position \(position)")
        }
    }
}
