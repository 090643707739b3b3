import ScanAggregatorRuntime
import ScanTestTiming
import Testing

@Suite("heartbeat throttle", .timed)
struct HeartbeatThrottleTests {
    @Test(
        "a camera flooding heartbeats keeps one every 0.25 s, the rest counted; another camera, and one at its own pace, are untouched"
    )
    func flood() {
        var throttle = HeartbeatThrottle()
        var kept = 0
        // 10,000 heartbeats from cam-1 within 2 s, one from cam-2 among them.
        for n in 0..<10_000 {
            let at = Duration.microseconds(n * 200)
            if throttle.admit(site: "dc1", camera: "cam-1", at: at) { kept += 1 }
            if n == 5_000 {
                let other = throttle.admit(site: "dc1", camera: "cam-2", at: at)
                #expect(other, "another camera is not held back")
            }
        }
        #expect(kept == 8, "one every 0.25 s over 2 s")
        #expect(throttle.throttled == 10_000 - 8)
        // The same camera id on another site is another camera.
        let elsewhere = throttle.admit(site: "dc2", camera: "cam-1", at: .seconds(2))
        #expect(elsewhere)
        // An agent at its usual pace (every 0.5 s, a little early or late) loses none.
        var paced = HeartbeatThrottle()
        let times = [0, 490, 1_010, 1_500, 1_985, 2_500].map { Duration.milliseconds($0) }
        let admitted = times.map { paced.admit(site: "dc1", camera: "cam-9", at: $0) }
        #expect(admitted == Array(repeating: true, count: times.count))
        #expect(paced.throttled == 0)
    }
}
