/// At most one heartbeat a camera every `interval`, by when they arrive: a camera (or anyone
/// allowed on its status subject) that floods heartbeats fills neither the database nor the
/// aggregator's time. What is held back is counted, not stored.
public struct HeartbeatThrottle: Sendable {
    public let interval: Duration
    private var lastKept: [String: Duration] = [:]
    public private(set) var throttled = 0

    public init(interval: Duration = .milliseconds(250)) { self.interval = interval }

    /// Whether to keep a heartbeat of `site`/`camera` that arrived at `elapsed` (a monotonic
    /// clock's reading).
    public mutating func admit(site: String, camera: String, at elapsed: Duration) -> Bool {
        let key = site + "\u{0}" + camera
        if let last = lastKept[key], elapsed - last < interval {
            throttled += 1
            return false
        }
        lastKept[key] = elapsed
        return true
    }
}
