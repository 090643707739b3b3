/// Frame times from the camera's own clock. A camera stamps each frame when it is exposed (GigE
/// Vision's timestamp, an RTSP stream's presentation time); the agent's clock sees it only when it
/// arrives, later by a varying network and driver delay. The timeline anchors the camera's clock
/// to the wall clock at the quickest arrival seen, so frame times keep the camera's exact spacing
/// without the arrival jitter, and are never later than the arrival. When the camera's clock jumps
/// (a reboot resets it, a stream restarts) or drifts more than `tolerance` behind, it is anchored
/// again. Times never go backwards. One timeline per connection.
public struct CameraTimeline: Sendable {
    /// The camera's time and the wall time it was anchored at.
    private var anchor: (camera: Int64, wall: Int64)?
    private var last: Int64 = .min
    public let toleranceMilliseconds: Int64
    /// Frames timed by the camera's clock, and times the clock was anchored again.
    public private(set) var cameraTimed = 0
    public private(set) var anchors = 0

    public init(toleranceMilliseconds: Int64 = 1000) {
        self.toleranceMilliseconds = toleranceMilliseconds
    }

    /// The time of a frame the camera stamped `cameraNanoseconds` (nil: no stamp) and that
    /// arrived at `arrival`.
    public mutating func time(cameraNanoseconds: Int64?, arrival: Timestamp) -> Timestamp {
        guard let camera = cameraNanoseconds else { return monotonic(arrival.milliseconds) }
        if let anchor {
            let mapped = anchor.wall + (camera - anchor.camera) / 1_000_000
            if mapped <= arrival.milliseconds && arrival.milliseconds - mapped <= toleranceMilliseconds {
                cameraTimed += 1
                return monotonic(mapped)
            }
        }
        // The first frame, a quicker arrival than the anchor's, or a jump: anchor here.
        anchor = (camera, arrival.milliseconds)
        anchors += 1
        cameraTimed += 1
        return monotonic(arrival.milliseconds)
    }

    private mutating func monotonic(_ milliseconds: Int64) -> Timestamp {
        last = max(last, milliseconds)
        return Timestamp(milliseconds: last)
    }
}
