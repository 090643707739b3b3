import ScanTestTiming
import Testing

@testable import ScanCore
@testable import ScanVision

/// The tracker driven by hand-made detections and a manual frame clock.
@Suite("tracker", .timed)
struct TrackerTests {
    static let start = Timestamp(milliseconds: 1_795_800_000_000)
    static func time(_ frame: Int) -> Timestamp { start.adding(milliseconds: Int64(frame) * 1000 / 30) }

    /// A QR-like code: a square box at (x, y).
    static func code(_ value: String, x: Int, y: Int, size: Int = 60, symbology: Symbology = .qrCode) -> Detection {
        Detection(
            symbology: symbology, value: Array(value.utf8),
            points: [
                Point(x: x, y: y), Point(x: x, y: y + size), Point(x: x + size, y: y + size), Point(x: x + size, y: y),
            ])
    }

    /// Runs frames through a tracker; returns every sighting-worthy (removed) track.
    static func run(
        frames: Int, config: TrackingConfig = TrackingConfig(), detections: (Int) -> [Detection]
    ) -> (ended: [Track], events: [TrackerEvent]) {
        var tracker = Tracker(config: config, idPrefix: "cam-1-run")
        var events: [TrackerEvent] = []
        for frame in 0..<frames {
            events += tracker.step(frame: frame, time: time(frame), detections: detections(frame))
        }
        events += tracker.finish()
        let ended = events.compactMap { event -> Track? in if case .removed(let track) = event { track } else { nil } }
        return (ended, events)
    }

    @Test("a moving code is one track with one ID from start to end")
    func moving() throws {
        let result = Self.run(frames: 40) { frame in [Self.code("A", x: 10 + frame * 12, y: 50)] }
        let track = try #require(result.ended.first)
        #expect(result.ended.count == 1)
        #expect(track.id == "cam-1-run-1")
        #expect(track.firstFrame == 0 && track.lastFrame == 39 && track.decodes == 40)
        #expect(abs(track.velocityPixelsPerSecond - 360) < 1)
    }

    @Test(
        "a code that leaves the searched area ends in the first frame it is not seen; one hidden inside the area waits maxMissedFrames; no area, no early end"
    )
    func leavesTheView() {
        let area = Box(minX: 0, minY: 0, maxX: 639, maxY: 399)
        // A code moving 30 px a frame, read while wholly in view (its left edge at most 579).
        func frameOf(_ area: Box?, hiddenAt: Int? = nil) -> Int? {
            var tracker = Tracker(idPrefix: "cam-1-run")
            for frame in 0..<40 {
                let x = 10 + frame * 30
                let seen = x + 60 <= 639 && (hiddenAt.map { frame < $0 } ?? true)
                let events = tracker.step(
                    frame: frame, time: Self.time(frame), detections: seen ? [Self.code("A", x: x, y: 50)] : [],
                    area: area)
                if events.contains(where: { if case .removed = $0 { true } else { false } }) { return frame }
            }
            return nil
        }
        // Last read in frame 18 (x 550); its centre is out of view from frame 20 on.
        #expect(frameOf(area) == 20)
        #expect(frameOf(nil) == 29, "without an area: after maxMissedFrames (10)")
        // Hidden at frame 8, mid-view: it may come back, so it waits.
        #expect(frameOf(area, hiddenAt: 8) == 18)
    }

    @Test("identical codes side by side are two tracks")
    func identicalSideBySide() {
        let result = Self.run(frames: 30) { frame in
            [Self.code("SAME", x: 10 + frame * 8, y: 20), Self.code("SAME", x: 10 + frame * 8, y: 200)]
        }
        #expect(result.ended.count == 2)
        #expect(Set(result.ended.map(\.id)).count == 2)
    }

    @Test("identical codes back to back keep their order and IDs")
    func identicalBackToBack() {
        // Two equal codes 150 px apart moving right; each track must stay with its own code.
        let result = Self.run(frames: 30) { frame in
            [Self.code("SAME", x: 160 + frame * 10, y: 50), Self.code("SAME", x: 10 + frame * 10, y: 50)]
        }
        #expect(result.ended.count == 2)
        for track in result.ended {
            let moved = track.lastBox.minX - track.firstBox.minX
            #expect(moved == 290, "each track follows one code (moved \(moved))")
        }
    }

    @Test("a code keeps its ID through 10 frames without a decode, predicted where it moved")
    func survivesMisses() {
        let result = Self.run(frames: 50) { frame in
            (20..<30).contains(frame) ? [] : [Self.code("A", x: frame * 9, y: 40)]
        }
        #expect(result.ended.count == 1)
        #expect(result.ended.first?.decodes == 40)
    }

    @Test("after more than maxMissedFrames the track ends, and the code starts a new one")
    func endsAfterMisses() {
        var config = TrackingConfig()
        config.maxMissedFrames = 5
        let result = Self.run(frames: 40, config: config) { frame in
            (10..<16).contains(frame) ? [] : [Self.code("A", x: 100, y: 40)]
        }
        #expect(result.ended.count == 2)
    }

    @Test("a read in one frame only never becomes a sighting")
    func oneFrameMisread() {
        let result = Self.run(frames: 20) { frame in frame == 7 ? [Self.code("GHOST", x: 300, y: 300)] : [] }
        #expect(result.ended.isEmpty)
        #expect(!result.events.contains { if case .added = $0 { true } else { false } })
    }

    @Test(
        "a code read in one frame whose check digit proves it (EAN-13, GS1-128 SSCC or GTIN) is a sighting when it ends, also at the stream's end; without such a check, or beside another track, or read twice as two values, it is dropped"
    )
    func provenSingleRead() throws {
        func single(
            _ value: String, _ symbology: Symbology, gs1: Bool = false, frames: Int = 30, at frame: Int = 7,
            others: (Int) -> [Detection] = { _ in [] }
        ) -> [Track] {
            Self.run(frames: frames) { index in
                var code = Self.code(value, x: 300, y: 100, size: 80, symbology: symbology)
                code.isGS1 = gs1
                return (index == frame ? [code] : []) + others(index)
            }.ended.filter { $0.value == Array(value.utf8) }
        }
        let ean = try #require(single("4006381333931", .ean13).first)
        #expect(ean.id == "cam-1-run-1" && ean.decodes == 1 && ean.lastFrame == 7)
        #expect(single("4006381333931", .ean13, frames: 9).count == 1, "ended by the stream's end")
        #expect(single("003401234500000000171526123", .code128, gs1: true).count == 1, "SSCC, check digit 7")
        #expect(single("0109501101530003", .code128, gs1: true).count == 1, "GTIN, check digit 3")
        #expect(single("003401234500000000181526123", .code128, gs1: true).isEmpty, "SSCC with a wrong check digit")
        #expect(single("003401234500000000171526123", .code128).isEmpty, "not GS1: no AI to check")
        #expect(single("ABC-123", .code128).isEmpty)
        #expect(single("4006381333931", .qrCode).isEmpty)
        // Read where another code is tracked: a misread of that code, not a label of its own.
        let neighbour = single("4006381333931", .ean13) { index in
            [Self.code("5901234123457", x: 310, y: 110, symbology: .ean13)]
        }
        #expect(neighbour.isEmpty)
        // Two values read on one place (fewer reads than minDecodes): no proof of either.
        var three = TrackingConfig()
        three.minDecodes = 3
        var votes = Tracker(config: three, idPrefix: "cam-1-run")
        _ = votes.step(
            frame: 0, time: Self.time(0), detections: [Self.code("4006381333931", x: 300, y: 100, symbology: .ean13)])
        _ = votes.step(
            frame: 1, time: Self.time(1), detections: [Self.code("4006381333948", x: 300, y: 100, symbology: .ean13)])
        #expect(votes.finish().isEmpty)
    }

    @Test(
        "items swapped at one spot within maxMissedFrames (a pack bench) are a track each; a misread between reads is still a vote"
    )
    func benchSwap() {
        // A read in frames 0-29, taken away; B put down at frame 34, read from 36; C from 72.
        let values = ["4006381333931", "5901234123457", "9780201379624"]
        let result = Self.run(frames: 110) { frame in
            let item: Int? =
                switch frame {
                case 0..<30: 0
                case 36..<66: 1
                case 72..<100: 2
                default: nil
                }
            return item.map { [Self.code(values[$0], x: 300 + $0 * 6, y: 200 - $0 * 5, size: 120, symbology: .ean13)] }
                ?? []
        }
        #expect(result.ended.map { String(decoding: $0.value, as: UTF8.self) } == values)
        #expect(result.ended.map(\.firstFrame) == [0, 36, 72])
        // One misread between good reads of one code: outvoted, one track.
        let misread = Self.run(frames: 30) { frame in
            [Self.code(frame == 12 ? values[1] : values[0], x: 300, y: 200, size: 120, symbology: .ean13)]
        }
        #expect(misread.ended.map { String(decoding: $0.value, as: UTF8.self) } == [values[0]])
    }

    @Test("minDecodes 1 confirms on first sight")
    func minDecodesOne() {
        var config = TrackingConfig()
        config.minDecodes = 1
        #expect(
            Self.run(frames: 3, config: config) { frame in frame == 1 ? [Self.code("X", x: 0, y: 0)] : [] }.ended.count
                == 1)
    }

    @Test("conflicting reads of one code are settled by vote")
    func vote() throws {
        let result = Self.run(frames: 20) { frame in
            [Self.code(frame % 5 == 0 ? "B" : "A", x: 50 + frame * 4, y: 50)]
        }
        let track = try #require(result.ended.first)
        #expect(result.ended.count == 1)
        #expect(track.value == Array("A".utf8))
        #expect(track.decodes == 20)
    }

    @Test("a code fixed in view is one track for the whole stream")
    func fixed() {
        let result = Self.run(frames: 300) { frame in frame % 7 == 3 ? [] : [Self.code("LANE-3", x: 500, y: 400)] }
        #expect(result.ended.count == 1)
        #expect(result.ended.first?.frames == 300)
    }

    @Test("track.updated is throttled")
    func throttled() {
        var config = TrackingConfig()
        config.updateIntervalMilliseconds = 500
        let result = Self.run(frames: 60, config: config) { frame in [Self.code("A", x: frame * 5, y: 0)] }
        let updates = result.events.filter { if case .updated = $0 { true } else { false } }.count
        #expect(updates == 3, "two seconds at 30 fps, an update every 500 ms after the add")
    }

    @Test("a second partial read of a code already tracked does not start a track")
    func fragmentsAbsorbed() {
        // A linear code read whole plus a one-end fragment inside it, every frame.
        let result = Self.run(frames: 20) { frame in
            let x = 40 + frame * 6
            let whole = Detection(
                symbology: .code128, value: Array("LPN-1".utf8),
                points: (0..<20).map { Point(x: $0 % 2 == 0 ? x : x + 200, y: 100 + $0) })
            let fragment = Detection(
                symbology: .code128, value: Array("LPN-1".utf8), points: [Point(x: x, y: 140), Point(x: x, y: 142)])
            return [whole, fragment]
        }
        #expect(result.ended.count == 1)
    }

    @Test(
        "a confirmed edge-only track that ends beside the whole code's track is folded into it, not a second sighting")
    func edgeTrackFoldedAtEnd() {
        // Frames 0-4: only one end of a linear code is read (a point, 40 px left of where the whole
        // code shows); from frame 5 the whole code is read and starts its own track, the edge reads stop.
        let value = Array("LPN-2".utf8)
        let result = Self.run(frames: 40) { frame in
            if frame < 5 {
                return [
                    Detection(
                        symbology: .code128, value: value,
                        points: [Point(x: 20 + frame * 6, y: 100), Point(x: 20 + frame * 6, y: 102)])
                ]
            }
            let x = 60 + frame * 6
            return [
                Detection(
                    symbology: .code128, value: value,
                    points: (0..<20).map { Point(x: $0 % 2 == 0 ? x : x + 200, y: 100 + $0) })
            ]
        }
        #expect(result.ended.count == 1)
        let merged = result.events.filter { if case .merged = $0 { true } else { false } }
        #expect(merged.count == 1)
        #expect(result.ended.first?.firstFrame == 0, "the whole code's track took over the edge track's start")
    }

    @Test(
        "a track read twice on the view's edge with a speed far off is folded into the track that picks its code up later; the same value on another row is not"
    )
    func pickedUpAgain() {
        // As on fast-rows seed 6: an EAN-13 entering at the left edge is read by zbar, then by
        // zxing-cpp on a band of rows 60 px higher (its box placed there: a speed of -60 px a
        // frame across the bars), then missed four frames; the track that reads it from frame 6
        // on, 20 px a frame along the rows, starts apart from it.
        func ean(x: Int, y: Int, height: Int, engine: String = "zbar") -> Detection {
            let points =
                engine == "zbar"
                ? (0..<8).map { Point(x: $0 % 2 == 0 ? x : x + 192, y: y + $0 * (height - 1) / 7) }
                : Box(minX: x, minY: y, maxX: x + 192, maxY: y + height - 1).corners
            return Detection(
                symbology: .ean13, value: Array("4091005579123".utf8), points: points, engine: engine,
                alongRows: engine == "zbar" ? true : nil)
        }
        var config = TrackingConfig()
        config.minDecodes = 2
        func run(secondRow: Int) -> (ended: [Track], events: [TrackerEvent]) {
            Self.run(frames: 50, config: config) { frame in
                switch frame {
                case 0: [ean(x: 1, y: 371, height: 27)]
                case 1: [ean(x: 15, y: 311, height: 27, engine: "zxing")]
                case 6..<36: [ean(x: 115 + (frame - 6) * 20, y: secondRow, height: 57)]
                default: []
                }
            }
        }
        let again = run(secondRow: 338)
        #expect(again.ended.count == 1)
        #expect(again.events.contains { if case .merged = $0 { true } else { false } })
        #expect(again.ended.first?.firstFrame == 0)
        // Read 150 px lower: another label with the same code.
        #expect(run(secondRow: 488).ended.count == 2)
    }

    @Test(
        "a long code read on single lines at different heights is one track: the lines' heights are not motion across them"
    )
    func lineReadsAtDifferentHeights() throws {
        // A Code 128 300 px long moving 10 px a frame along rows, read on one line per frame
        // (widened to its length), on line 100, then 124, then not for three frames, then on 112.
        let value = Array("00340123450000080019".utf8)
        let lines = [0: 100, 1: 124, 5: 112, 6: 112, 7: 112]
        let result = Self.run(frames: 12) { frame in
            guard let y = lines[frame] else { return [] }
            let x = 40 + frame * 10
            return [
                Detection(
                    symbology: .code128, value: value, points: [Point(x: x, y: y), Point(x: x + 300, y: y)],
                    alongRows: true)
            ]
        }
        #expect(result.ended.count == 1, "\(result.ended.map { ($0.firstFrame, $0.lastFrame) })")
        let track = try #require(result.ended.first)
        #expect(track.firstFrame == 0 && track.lastFrame == 7)
        #expect(abs(track.velocityY) < 1, "no motion across the lines: \(track.velocityY)")
    }

    @Test(
        "a read's scan direction is zbar's orientation when known, in whatever order its points come; else their order")
    func scanDirection() {
        func direction(_ points: [(Int, Int)], alongRows: Bool? = nil, engine: String = "zbar") -> Bool? {
            Track.scanDirection(
                Detection(
                    symbology: .code128, value: Array("LPN-1".utf8), points: points.map { Point(x: $0.0, y: $0.1) },
                    engine: engine,
                    alongRows: alongRows))
        }
        // Along rows, back and forth: each line's point at the end where the decode completed.
        let rows = [(1581, 386), (1795, 398), (1581, 410), (1795, 422), (1581, 434)]
        #expect(direction(rows) == true)
        #expect(direction(rows, alongRows: true) == true)
        // The same lines' points in an order that misleads (reads of several regions are joined):
        // the orientation does not.
        let joined = [(1581, 434), (1795, 422), (1795, 398), (1581, 410), (1581, 386)]
        #expect(direction(joined) == false)
        #expect(direction(joined, alongRows: true) == true)
        // Down columns.
        #expect(direction(rows.map { ($0.1, $0.0) }) == false)
        #expect(direction(joined.map { ($0.1, $0.0) }, alongRows: false) == false)
        // Two points without an orientation tell nothing; with one they do.
        #expect(direction([(460, 715), (674, 717)]) == nil)
        #expect(direction([(460, 715), (674, 717)], alongRows: true) == true)
        // Other engines' reads carry corners, not scan lines.
        #expect(direction([(0, 0), (200, 0), (200, 100), (0, 100)], alongRows: true, engine: "zxing") == nil)
        // Reads joined from two directions lose it.
        var merged = Detection(
            symbology: .code128, value: Array("LPN-1".utf8), points: [Point(x: 1, y: 1)], alongRows: true)
        merged.absorb(
            Detection(symbology: .code128, value: Array("LPN-1".utf8), points: [Point(x: 2, y: 2)], alongRows: true))
        #expect(merged.alongRows == true && merged.points.count == 2)
        merged.absorb(
            Detection(symbology: .code128, value: Array("LPN-1".utf8), points: [Point(x: 3, y: 3)], alongRows: false))
        #expect(merged.alongRows == nil)
    }
}
