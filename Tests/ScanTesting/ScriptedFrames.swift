import Foundation
import ScanAgentRuntime
import ScanCore
import ScanServices
import ScanAgentConfig
import ScanEvents
import ScanPipeline
import ScanVision

/// Frames that say which frame they are: the index is written into the pixels, so a
/// `ScriptedDecoder` can answer with that frame's detections whatever was skipped or paused.
public enum ScriptedFrames {
    public static func image(_ index: Int) -> GrayImage {
        let value = UInt32(truncatingIfNeeded: index)
        return GrayImage(width: 4, height: 1, pixels: (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) })
    }

    public static func index(of image: GrayImage) -> Int {
        image.pixels.prefix(4).enumerated().reduce(0) { $0 | Int($1.element) << (8 * $1.offset) }
    }
}

/// A frame source that plays `count` frames, `interval` apart in frame time, then either ends the
/// stream (a clip) or waits until stopped (a camera).
public final class ScriptedFrameSource: FrameSource, @unchecked Sendable {
    // @unchecked: `stateWord` is guarded by the lock; the rest is immutable.
    public let kind: SourceConfig.Kind
    public let blocking = true
    public let count: Int
    public let start: Timestamp
    public let interval: Duration
    public let endsStream: Bool
    private let lock = NSLock()
    private var stateWord = SourceStatus.starting

    public init(
        kind: SourceConfig.Kind = .clip, count: Int, start: Timestamp, interval: Duration = .milliseconds(100),
        endsStream: Bool = true
    ) {
        self.kind = kind
        self.count = count
        self.start = start
        self.interval = interval
        self.endsStream = endsStream
    }

    public var state: SourceStatus { lock.withLock { stateWord } }
    private var lastError: String?
    public var health: SourceHealth { lock.withLock { SourceHealth(error: lastError) } }

    /// The camera lost (the source reconnects), with the error it gave.
    public func lose(error: String) {
        lock.withLock {
            stateWord = .reconnecting
            lastError = error
        }
    }

    /// The camera back.
    public func back() {
        lock.withLock {
            stateWord = .streaming
            lastError = nil
        }
    }

    public func frame(_ index: Int) -> CapturedFrame {
        let offset = Int64((interval.seconds * 1000).rounded()) * Int64(index)
        return CapturedFrame(image: ScriptedFrames.image(index), index: index, time: start.adding(milliseconds: offset))
    }

    public func capture(into queue: FrameQueue, stop: StopToken) {
        lock.withLock { stateWord = .streaming }
        for index in 0..<count where !stop.isStopped {
            guard queue.put(frame(index)) else { break }
        }
        if endsStream && !stop.isStopped {
            lock.withLock { stateWord = .ended }
            queue.finish()
            return
        }
        while !stop.sleep(for: .milliseconds(20)) {}
        lock.withLock { stateWord = .ended }
    }
}

/// A decoder that answers each frame with what the script says for its index.
public final class ScriptedDecoder: FrameDecoding {
    private let script: (Int) -> [Detection]
    /// Code-like regions per frame, decoded or not (no-reads).
    private let regions: (Int) -> [Box]
    // The decoding thread writes, tests read while it runs: both under the lock.
    private let lock = NSLock()
    private var decoded: [Int] = []
    private var lastLocated: LocatedRegions?
    /// The frames decoded so far, in order.
    public var decodedFrames: [Int] { lock.withLock { decoded } }
    public var located: LocatedRegions? { lock.withLock { lastLocated } }
    /// Frames that fail to decode (an engine error).
    public var failing: Set<Int> = []

    public init(_ script: @escaping (Int) -> [Detection], regions: @escaping (Int) -> [Box] = { _ in [] }) {
        self.script = script
        self.regions = regions
    }

    public struct EngineError: Error {}

    public func decode(_ frame: GrayImage, expected: [DecodePlanner.TrackedCode]) throws -> [Detection] {
        let index = ScriptedFrames.index(of: frame)
        if failing.contains(index) { throw EngineError() }
        // Regions are placed on a 640 × 400 view of the frame (scripted frames are tiny).
        let located = LocatedRegions(
            regions: regions(index).map {
                CodeLocalizer.Region(box: $0, rowCells: 4, columnCells: 0, cells: 4)
            }, area: Self.view.bounds, image: Self.view)
        lock.withLock {
            decoded.append(index)
            lastLocated = located
        }
        return script(index)
    }

    /// What the scripted regions are cut from: a striped 640 × 400 picture.
    static let view = GrayImage(
        width: 640, height: 400, pixels: (0..<(640 * 400)).map { ($0 % 640) / 4 % 2 == 0 ? 30 : 220 })

    public func takeWindow() -> DecodingWindow { DecodingWindow(mode: "scripted") }
    public var summary: String { "scripted: \(decodedFrames.count) frames" }

    /// A square code at (x, y), as a decoder reports it.
    public static func code(_ value: String, x: Int, y: Int, size: Int = 60) -> Detection {
        Detection(
            symbology: .qrCode, value: Array(value.utf8),
            points: [
                Point(x: x, y: y), Point(x: x, y: y + size), Point(x: x + size, y: y + size), Point(x: x + size, y: y),
            ])
    }
}
