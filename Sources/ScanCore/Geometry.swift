/// A pixel position. Integer, as decoders report them.
public struct Point: Sendable, Hashable, Codable {
    public var x: Int
    public var y: Int
    public init(x: Int, y: Int) {
        self.x = x
        self.y = y
    }
}

/// An axis-aligned rectangle in pixels, `maxX`/`maxY` inclusive.
public struct Box: Sendable, Hashable {
    public var minX: Int
    public var minY: Int
    public var maxX: Int
    public var maxY: Int

    public init(minX: Int, minY: Int, maxX: Int, maxY: Int) {
        self.minX = minX
        self.minY = minY
        self.maxX = maxX
        self.maxY = maxY
    }

    /// The smallest box holding every point; nil for no points.
    public init?<S: Sequence>(enclosing points: S) where S.Element == Point {
        var iterator = points.makeIterator()
        guard let first = iterator.next() else { return nil }
        var box = Box(minX: first.x, minY: first.y, maxX: first.x, maxY: first.y)
        while let point = iterator.next() {
            box.minX = min(box.minX, point.x)
            box.minY = min(box.minY, point.y)
            box.maxX = max(box.maxX, point.x)
            box.maxY = max(box.maxY, point.y)
        }
        self = box
    }

    public var width: Int { maxX - minX + 1 }
    public var height: Int { maxY - minY + 1 }
    public var centerX: Double { Double(minX + maxX) / 2 }
    public var centerY: Double { Double(minY + maxY) / 2 }

    /// Its centre lies outside `area`: on a moving belt, what is mostly out of view.
    public func centreIsOutside(_ area: Box) -> Bool {
        centerX < Double(area.minX) || centerX > Double(area.maxX) || centerY < Double(area.minY)
            || centerY > Double(area.maxY)
    }

    /// The same box moved by `dx`, `dy` pixels.
    public func offset(dx: Int, dy: Int) -> Box {
        Box(minX: minX + dx, minY: minY + dy, maxX: maxX + dx, maxY: maxY + dy)
    }

    /// Corners clockwise from the top left: the polygon form events carry.
    public var corners: [Point] {
        [
            Point(x: minX, y: minY), Point(x: maxX, y: minY),
            Point(x: maxX, y: maxY), Point(x: minX, y: maxY),
        ]
    }

    public func intersectionOverUnion(_ other: Box) -> Double {
        let ix = min(maxX, other.maxX) - max(minX, other.minX) + 1
        let iy = min(maxY, other.maxY) - max(minY, other.minY) + 1
        guard ix > 0, iy > 0 else { return 0 }
        let intersection = Double(ix * iy)
        let union = Double(width * height + other.width * other.height) - intersection
        return intersection / union
    }
}

extension Box {
    /// The part of the box inside `area`, or nil when nothing of it is.
    public func clamped(to area: Box) -> Box? {
        let box = Box(
            minX: Swift.max(minX, area.minX), minY: Swift.max(minY, area.minY), maxX: Swift.min(maxX, area.maxX),
            maxY: Swift.min(maxY, area.maxY))
        return box.minX <= box.maxX && box.minY <= box.maxY ? box : nil
    }

    public func intersects(_ other: Box) -> Bool {
        minX <= other.maxX && other.minX <= maxX && minY <= other.maxY && other.minY <= maxY
    }

    public func union(_ other: Box) -> Box {
        Box(
            minX: Swift.min(minX, other.minX), minY: Swift.min(minY, other.minY), maxX: Swift.max(maxX, other.maxX),
            maxY: Swift.max(maxY, other.maxY))
    }

    /// The box grown by `x` pixels left and right and `y` pixels above and below (shrunk for
    /// negative margins). Not clamped: follow with `clamped(to:)` where it must stay in a frame.
    public func widened(x: Int, y: Int) -> Box {
        Box(minX: minX - x, minY: minY - y, maxX: maxX + x, maxY: maxY + y)
    }

    /// The box grown by `margin` pixels on every side.
    public func widened(by margin: Int) -> Box {
        widened(x: margin, y: margin)
    }

    /// How far apart the two boxes' nearest edge pixels lie along each axis: 1 for boxes side by
    /// side, 0 or less where their extents on that axis overlap.
    public func gap(to other: Box) -> (x: Int, y: Int) {
        (Swift.max(minX - other.maxX, other.minX - maxX), Swift.max(minY - other.maxY, other.minY - maxY))
    }

    /// Whether at least `fraction` of `other`'s area lies inside this box.
    public func covers(_ other: Box, fraction: Double) -> Bool {
        guard let common = other.clamped(to: self) else { return false }
        return Double(common.width * common.height) >= fraction * Double(other.width * other.height)
    }
}
