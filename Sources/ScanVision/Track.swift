import ScanCore

/// One physical code followed across frames.
public struct Track: Sendable, Equatable {
    /// Empty until the track is confirmed; unique across cameras and restarts once set.
    public internal(set) var id: String
    public internal(set) var symbology: Symbology
    /// The value with the most decodes (conflicting reads are settled by vote).
    public internal(set) var value: [UInt8]
    public internal(set) var isGS1: Bool
    public internal(set) var addOn: String?
    /// The code as printed, when the value is its expansion (UPC-A or UPC-E as EAN-13).
    public internal(set) var printed: Detection.Printed?
    public internal(set) var firstFrame: Int
    public internal(set) var lastFrame: Int
    /// The last frame the code was decoded in, or its undecoded region seen where the track
    /// predicted it (`Tracker.sustain`): a track ends when it has been neither for too long.
    public internal(set) var presentFrame: Int
    /// Where the code was at `presentFrame`: predictions start here.
    public internal(set) var presentBox: Box
    public internal(set) var firstSeen: Timestamp
    public internal(set) var lastSeen: Timestamp
    public internal(set) var decodes: Int
    public internal(set) var firstBox: Box
    public internal(set) var lastBox: Box
    /// Pixels per frame, smoothed.
    public internal(set) var velocityX: Double = 0
    public internal(set) var velocityY: Double = 0
    public internal(set) var confirmed = false
    /// How zbar's scan lines crossed the code: along rows (true), down columns (false), or not
    /// known (2-D codes, reads by the second engine). Guided decoding scans it the same way.
    public internal(set) var readAlongRows: Bool?
    /// Its last read came from a view straightened along its bars: it lies at a steep angle, and
    /// guided decoding reads it that way again instead of on the frame's rows and columns.
    public internal(set) var readStraightened = false
    /// Whether any read covered more than a single scan-line hit. zbar can cut one code read on
    /// few lines into points at its two ends; a track made of such points alone is not confirmed
    /// (the code's fuller reads confirm the track they join, and the points fold into it).
    var sawExtent = false
    /// Recent box sizes. A linear code decoded on only some scan lines, or at one end, gives a
    /// smaller box; a rare mis-split a larger one. The size of the code is taken as the upper
    /// quartile of recent sizes.
    var recentWidths: [Int]
    var recentHeights: [Int]
    /// The last complete reading on each axis (centre and frame): speed is measured between two
    /// complete readings only, never from a read that showed one end of the code.
    var anchorX: Anchor
    var anchorY: Anchor

    /// A reading on one axis: its centre, extent and frame.
    struct Anchor: Sendable, Equatable {
        var center: Double
        var extent: Int
        var frame: Int
    }
    var measuredX = false
    var measuredY = false
    /// The first whole reading on each axis: with the last (`anchorX`, `anchorY`), the speed over
    /// the track's life (`steadyVelocity`).
    var originX: Anchor?
    var originY: Anchor?
    /// Set by the pipeline when the rule engine decides, at the first confirmed read.
    public var decision: TrackDecision?

    var votes: [VoteKey: Int] = [:]
    var lastUpdateSent: Timestamp?
    var lastUpdateBox: Box?
    /// Internal key for tentative tracks.
    let serial: Int

    struct VoteKey: Hashable, Sendable {
        var symbology: Symbology
        var value: [UInt8]
    }

    init(serial: Int, detection: Detection, box: Box, frame: Int, time: Timestamp) {
        self.serial = serial
        self.id = ""
        self.symbology = detection.symbology
        self.value = detection.value
        self.isGS1 = detection.isGS1
        self.addOn = detection.addOn
        self.printed = detection.printed
        self.firstFrame = frame
        self.lastFrame = frame
        self.presentFrame = frame
        self.presentBox = box
        self.firstSeen = time
        self.lastSeen = time
        self.decodes = 1
        self.firstBox = box
        self.lastBox = box
        self.votes = [VoteKey(symbology: detection.symbology, value: detection.value): 1]
        self.recentWidths = [box.width]
        self.recentHeights = [box.height]
        self.anchorX = Anchor(center: box.centerX, extent: box.width, frame: frame)
        self.anchorY = Anchor(center: box.centerY, extent: box.height, frame: frame)
        self.readAlongRows = Self.scanDirection(detection)
        self.readStraightened = detection.straightened
        self.sawExtent = Self.showsExtent(box)
    }

    /// More than a point: a box at least three pixels across in one direction (two scan lines).
    static func showsExtent(_ box: Box) -> Bool { box.width > 2 || box.height > 2 }

    /// The scan direction of a zbar read of a linear code (`Detection.readsAlongRows`); nil for
    /// other reads, and where zbar gave no orientation and fewer than three points show no order.
    static func scanDirection(_ detection: Detection) -> Bool? {
        guard detection.engine == "zbar", detection.symbology.isLinear,
            detection.alongRows != nil || detection.points.count >= 3
        else { return nil }
        return detection.readsAlongRows
    }

    /// Frames from the first to the last decode, both included.
    public var frames: Int { lastFrame - firstFrame + 1 }

    /// Mean speed between first and last decode, in pixels per second.
    public var velocityPixelsPerSecond: Double {
        let seconds = Double(lastSeen.milliseconds - firstSeen.milliseconds) / 1000
        guard seconds > 0 else { return 0 }
        let dx = lastBox.centerX - firstBox.centerX
        let dy = lastBox.centerY - firstBox.centerY
        return (dx * dx + dy * dy).squareRoot() / seconds
    }

    /// Pixels per frame on each axis from the first whole reading to the last, at least
    /// `steadyFrames` apart; nil on an axis without two such readings. The smoothed
    /// `velocityX`/`velocityY` follow each read and swing by pixels a frame along a linear code's
    /// bars, where the scan lines that read it show more or less of its height (80 % of it counts
    /// as whole); over the track's life that is a fraction of a pixel a frame.
    public var steadyVelocity: (x: Double?, y: Double?) {
        func speed(_ origin: Anchor?, _ last: Anchor) -> Double? {
            guard let origin, last.frame - origin.frame >= Self.steadyFrames else { return nil }
            return (last.center - origin.center) / Double(last.frame - origin.frame)
        }
        return (speed(originX, anchorX), speed(originY, anchorY))
    }

    /// Frames between two whole readings for a steady speed.
    public static let steadyFrames = 4

    /// Where the code should be at `frame`, if it keeps moving as it did.
    public func predictedBox(at frame: Int) -> Box {
        let elapsed = Double(frame - presentFrame)
        let dx = Int((velocityX * elapsed).rounded())
        let dy = Int((velocityY * elapsed).rounded())
        return presentBox.offset(dx: dx, dy: dy)
    }

    /// The box of the last read, unless its region kept the track since: then where it is now.
    func place(at frame: Int) -> Box { presentFrame > lastFrame ? predictedBox(at: frame) : lastBox }

    static func upperQuartile(_ values: [Int]) -> Int {
        let sorted = values.sorted()
        return sorted[min(sorted.count - 1, sorted.count * 3 / 4)]
    }

    public var typicalWidth: Int { Self.upperQuartile(recentWidths) }
    public var typicalHeight: Int { Self.upperQuartile(recentHeights) }

    /// Learns the code's size from reads that show it whole (or larger: a few mis-splits are
    /// outvoted by the quartile); partial reads never shrink it.
    mutating func recordSize(_ box: Box) {
        Self.record(box.width, into: &recentWidths)
        Self.record(box.height, into: &recentHeights)
    }

    private static func record(_ extent: Int, into window: inout [Int]) {
        guard extent * 10 >= upperQuartile(window) * 8 else { return }
        window.append(extent)
        if window.count > 9 { window.removeFirst() }
    }

    func matches(_ detection: Detection) -> Bool {
        detection.symbology == symbology && detection.value == value
    }
}

/// What the rule engine decided for a track, once, at its first confirmed read.
public struct TrackDecision: Sendable, Equatable {
    public var accepted: Bool
    public var ruleId: String?
    public var role: String?

    public init(accepted: Bool, ruleId: String? = nil, role: String? = nil) {
        self.accepted = accepted
        self.ruleId = ruleId
        self.role = role
    }

    public static let acceptedByDefault = TrackDecision(accepted: true)
}
