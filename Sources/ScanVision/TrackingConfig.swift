/// How tracks are followed. Defaults suit conveyors at 25–60 fps.
public struct TrackingConfig: Sendable, Equatable {
    /// Frames a track survives without a decode (blur, an arm over the label) before it ends.
    public var maxMissedFrames: Int = 10
    /// Decodes needed before a track is confirmed; unconfirmed tracks never become sightings, so a
    /// one-frame misread is dropped. 1 confirms on first sight.
    public var minDecodes: Int = 2
    /// `track.updated` is sent at most this often per track.
    public var updateIntervalMilliseconds: Int = 500
    /// Smallest distance in pixels at which a detection may still continue a track.
    public var minGatePixels: Double = 24

    public init() {}
}
