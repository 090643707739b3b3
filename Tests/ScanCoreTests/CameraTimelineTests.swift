import ScanCore
import ScanTestTiming
import Testing

@Suite("frame times from the camera's clock", .timed)
struct CameraTimelineTests {
    /// A camera at 30 frames/s whose clock starts at `start` ns; frame i is exposed at wall time
    /// `wall0 + i*33` ms and arrives `delays[i]` ms later.
    static func frames(start: Int64, wall0: Int64, delays: [Int64]) -> [(
        camera: Int64, arrival: Timestamp, exposed: Int64
    )] {
        delays.enumerated().map { index, delay in
            let exposed = wall0 + Int64(index) * 33
            return (start + Int64(index) * 33_000_000, Timestamp(milliseconds: exposed + delay), exposed)
        }
    }

    @Test("the camera's spacing is kept without the arrival jitter, anchored at the quickest arrival")
    func jitter() {
        var timeline = CameraTimeline()
        let delays: [Int64] = [40, 12, 55, 9, 30, 80, 9, 15, 60, 9]
        let times = Self.frames(start: 5_000_000_000, wall0: 1_000_000, delays: delays).map {
            (timeline.time(cameraNanoseconds: $0.camera, arrival: $0.arrival), $0.exposed, $0.arrival)
        }
        for (time, _, arrival) in times { #expect(time <= arrival, "never later than the arrival") }
        // From the quickest arrival on (9 ms at frame 3), every frame is its exposure plus 9 ms.
        #expect(times[3...].allSatisfy { $0.0.milliseconds == $0.1 + 9 }, "\(times.map { $0.0.milliseconds - $0.1 })")
        #expect(timeline.anchors == 3 && timeline.cameraTimed == delays.count)
        // Arrival times would have jittered by 71 ms; these step by the frame period.
        let steps = zip(times[3...].dropFirst(), times[3...]).map { $0.0.milliseconds - $1.0.milliseconds }
        #expect(steps.allSatisfy { $0 == 33 }, "\(steps)")
    }

    @Test("a camera reboot (its clock starts again) or a clock falling behind re-anchors; times never go back")
    func jumps() {
        var timeline = CameraTimeline(toleranceMilliseconds: 500)
        var previous = Timestamp(milliseconds: 0)
        var seen: [Timestamp] = []
        for frame in Self.frames(start: 9_000_000_000, wall0: 2_000_000, delays: [10, 10, 10]) {
            seen.append(timeline.time(cameraNanoseconds: frame.camera, arrival: frame.arrival))
        }
        // Rebooted: its clock restarts near zero, 5 s later.
        for frame in Self.frames(start: 1_000_000, wall0: 2_005_000, delays: [12, 10]) {
            seen.append(timeline.time(cameraNanoseconds: frame.camera, arrival: frame.arrival))
        }
        #expect(seen[3].milliseconds == 2_005_012 && seen[4].milliseconds == 2_005_033 + 10)
        // A clock running slow: after more than the tolerance behind, anchored again.
        let slow = timeline.time(cameraNanoseconds: 1_000_000 + 66_000_000, arrival: Timestamp(milliseconds: 2_006_000))
        #expect(slow.milliseconds == 2_006_000)
        for time in seen + [slow] {
            #expect(previous <= time)
            previous = time
        }
        #expect(timeline.anchors == 4, "the first frame, the reboot, its quicker second frame, the slow clock")
        // No stamp: the arrival, still never before an earlier time.
        #expect(timeline.time(cameraNanoseconds: nil, arrival: Timestamp(milliseconds: 1)) == slow)
    }
}
