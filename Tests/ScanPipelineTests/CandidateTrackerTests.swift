import Foundation
import ScanTestTiming
import Testing

@testable import ScanCore
@testable import ScanAgentConfig
@testable import ScanEvents
@testable import ScanPipeline
@testable import ScanVision

/// The candidate tracker and the pipeline's no-reads, driven by hand-made regions.
@Suite("no-read candidates", .timed)
struct CandidateTrackerTests {
    static let start = Timestamp(milliseconds: 1_795_800_000_000)
    static func time(_ frame: Int) -> Timestamp { start.adding(milliseconds: Int64(frame) * 1000 / 30) }
    static let area = Box(minX: 0, minY: 0, maxX: 639, maxY: 399)
    /// A frame with some texture, so that pictures have a sharpness.
    static let frame = GrayImage(
        width: 640, height: 400, pixels: (0..<(640 * 400)).map { UInt8(truncatingIfNeeded: ($0 % 640) / 3 * 40) })

    /// A linear code's region (edges across rows only) at (x, y).
    static func bars(x: Int, y: Int, width: Int = 120, height: Int = 60) -> CodeLocalizer.Region {
        CodeLocalizer.Region(
            box: Box(minX: x, minY: y, maxX: x + width - 1, maxY: y + height - 1), rowCells: 6, columnCells: 0, cells: 6
        )
    }

    static func run(
        frames: Int, minFrames: Int = 5, regions: (Int) -> [CodeLocalizer.Region], decoded: (Int) -> [Box] = { _ in [] }
    ) -> [CandidateTracker.NoRead] {
        var tracker = CandidateTracker(minFrames: minFrames, maxMissedFrames: 10, idPrefix: "cam-1-run")
        var ended: [CandidateTracker.NoRead] = []
        for index in 0..<frames {
            ended += tracker.step(
                frame: index, time: time(index), regions: regions(index), decoded: decoded(index), area: area,
                image: frame)
        }
        return ended
    }

    @Test("a region that crosses the view undecoded is one no-read, with its frames, family and picture")
    func undecodedCrossing() throws {
        // Enters at the left edge, crosses at 8 px a frame, leaves on the right; lost for 4 frames
        // in the middle (the localiser missed it), which does not split it.
        let noReads = Self.run(frames: 110) { index in
            let x = -100 + index * 8
            guard x + 120 > 0, x < 640, !(40..<44).contains(index) else { return [] }
            return [Self.bars(x: max(0, x), y: 150, width: min(120, x + 120, 640 - max(0, x)))]
        }
        #expect(noReads.count == 1)
        let noRead = try #require(noReads.first)
        #expect(noRead.trackId == "cam-1-run-n1")
        #expect(noRead.family == .linear)
        #expect(noRead.frames == 89)
        #expect(noRead.firstFrame == 0 && noRead.lastFrame == 92)
        let picture = try #require(noRead.image)
        // The region (120 × 60) with up to 24 pixels of margin each way (less at the frame's edge).
        #expect((120...168).contains(picture.width) && picture.height == 108)
        #expect(noRead.sharpness > 0)
    }

    @Test("a region a confirmed track covers in any frame is read, not a no-read")
    func decodedOnce() {
        let noReads = Self.run(
            frames: 80,
            regions: { index in index < 60 ? [Self.bars(x: 100 + index * 4, y: 150)] : [] },
            decoded: { index in index == 30 ? [Box(minX: 230, minY: 170, maxX: 330, maxY: 172)] : [] })
        #expect(noReads.isEmpty)
    }

    @Test("too few frames: no no-read; only ever cut by the area's edge: a cut-by-edge no-read")
    func tooBriefOrCut() {
        let brief = Self.run(frames: 40, minFrames: 5) { index in index < 4 ? [Self.bars(x: 200, y: 100)] : [] }
        #expect(brief.isEmpty)
        // Only ever cut by the edge: a label along it is a no-read that says so.
        let cut = Self.run(frames: 60) { index in index < 30 ? [Self.bars(x: 0, y: 100)] : [] }
        #expect(cut.map(\.reason) == [.cutByEdge])
        let briefCut = Self.run(frames: 60) { index in index < 3 ? [Self.bars(x: 0, y: 100)] : [] }
        #expect(briefCut.isEmpty)
    }

    @Test("two torn labels side by side are two no-reads; edges in both directions make a matrix one")
    func twoAndFamilies() {
        let noReads = Self.run(frames: 60) { index in
            guard index < 40 else { return [] }
            var matrix = Self.bars(x: 300 + index * 2, y: 250, width: 80, height: 80)
            matrix.columnCells = 6
            return [Self.bars(x: 20 + index * 2, y: 40), matrix]
        }
        #expect(noReads.count == 2)
        #expect(Set(noReads.compactMap(\.family)) == [.linear, .matrix])
        #expect(Set(noReads.map(\.trackId)).count == 2)
    }

    /// A label the localiser saw as one region at (x, y): 32-px cells, two rows, bars in the first
    /// eight columns and, after a gap of one column, `matrix` columns of cells with edges both
    /// ways (a DataMatrix beside an EAN), or of bars when `modules` is false.
    static func label(x: Int, y: Int, matrix: Int = 3, modules: Bool = true) -> CodeLocalizer.Region {
        let columns = 9 + matrix
        var marks = [UInt8](repeating: 0, count: columns * 2)
        for row in 0..<2 {
            for column in 0..<8 { marks[row * columns + column] = 1 }
            marks[row * columns + 8] = 1
            for column in 9..<columns { marks[row * columns + column] = modules ? 3 : 1 }
        }
        return CodeLocalizer.Region(
            box: Box(minX: x, minY: y, maxX: x + columns * 32 - 1, maxY: y + 63),
            rowCells: marks.count { $0 & 1 != 0 }, columnCells: marks.count { $0 & 2 != 0 }, cells: marks.count,
            marks: marks, cellSize: 32)
    }

    @Test("the unread 2-D part of a region shared with a read code is a no-read of its own; unread bars are not")
    func unreadPart() throws {
        func crossing(modules: Bool) -> [CandidateTracker.NoRead] {
            Self.run(
                frames: 120,
                regions: { index in
                    let x = index * 4
                    return x + 384 <= 640 ? [Self.label(x: x, y: 100, modules: modules)] : []
                },
                // The EAN is read from the fifth frame on: its bars, not the rest of the region.
                decoded: { index in
                    index >= 5 && index * 4 + 384 <= 640
                        ? [Box(minX: index * 4 + 8, minY: 104, maxX: index * 4 + 240, maxY: 160)] : []
                })
        }
        let noReads = crossing(modules: true)
        let noRead = try #require(noReads.first)
        #expect(noReads.count == 1, "the DataMatrix, not the EAN")
        #expect(noRead.family == .matrix)
        #expect(noRead.lastBox.minX >= noRead.lastFrame * 4 + 288, "the modules' cells only")
        // The same region with bars where the modules were: the rest of a code partly read.
        #expect(crossing(modules: false).isEmpty)
    }

    @Test("a 2-D region beside bars is not a piece of the same code")
    func notPieces() {
        var modules = Self.bars(x: 200, y: 100, width: 64, height: 60)
        modules.columnCells = 6
        #expect(!CandidateTracker.pieces(Self.bars(x: 60, y: 100), modules))
        #expect(CandidateTracker.pieces(Self.bars(x: 60, y: 100), Self.bars(x: 200, y: 100)), "a torn EAN's halves")
        #expect(CandidateTracker.joined([Self.bars(x: 60, y: 100), modules]).count == 2)
    }

    /// A frame with bars drawn at `degrees`: each label a band `length` px along the axis across
    /// its bars and `breadth` px along them, its middle at `centres`, with a blank band (the
    /// tear) `tear` px long across its middle; returns the frame and each piece's box.
    static func turnedBars(
        degrees: [Double], centres: [(Double, Double)], length: Double = 190, breadth: Double = 60, tear: Double = 30
    ) -> (image: GrayImage, pieces: [Box]) {
        var image = GrayImage(width: 640, height: 640, fill: 235)
        var pieces: [Box] = []
        for (angle, centre) in zip(degrees, centres) {
            let (c, s) = (cos(angle * .pi / 180), sin(angle * .pi / 180))
            var boxes = [Box](repeating: Box(minX: .max, minY: .max, maxX: .min, maxY: .min), count: 2)
            for y in 0..<image.height {
                for x in 0..<image.width {
                    let (dx, dy) = (Double(x) - centre.0, Double(y) - centre.1)
                    let (u, v) = (dx * c + dy * s, -dx * s + dy * c)
                    guard abs(u) <= length / 2, abs(v) <= breadth / 2, abs(u) > tear / 2 else { continue }
                    // Bars 2, 4 and 6 px wide in a fixed pattern.
                    let module = Int((u + length / 2) / 2)
                    if [0, 1, 3, 4, 5, 8, 11, 12, 14].contains(module % 16) { image.pixels[y * 640 + x] = 20 }
                    let side = u < 0 ? 0 : 1
                    boxes[side] = Box(
                        minX: min(boxes[side].minX, x), minY: min(boxes[side].minY, y),
                        maxX: max(boxes[side].maxX, x), maxY: max(boxes[side].maxY, y))
                }
            }
            pieces += boxes
        }
        return (image, pieces)
    }

    @Test(
        "the two pieces of a torn label turned to any angle are one code; two labels side by side at one angle, or pieces at different angles, are not",
        arguments: [35.0, 48, 122, 151])
    func piecesAtAnAngle(degrees: Double) {
        func region(_ box: Box) -> CodeLocalizer.Region {
            CodeLocalizer.Region(box: box, rowCells: 4, columnCells: 4, cells: 6)
        }
        let torn = Self.turnedBars(degrees: [degrees], centres: [(320, 320)])
        let (first, second) = (region(torn.pieces[0]), region(torn.pieces[1]))
        // No row or column joins them; the angle does.
        #expect(!CandidateTracker.pieces(first, second))
        #expect(CandidateTracker.piecesAtAnAngle(first, second, in: torn.image))
        #expect(CandidateTracker.joined([first, second], image: torn.image).count == 1)
        #expect(CandidateTracker.joined([first, second]).count == 2, "without the frame, no angle")

        // Two whole labels side by side on one box, at one angle: beside each other along the bars.
        let (c, s) = (cos(degrees * .pi / 180), sin(degrees * .pi / 180))
        let apart = 80.0
        let twins = Self.turnedBars(
            degrees: [degrees, degrees],
            centres: [(320 + s * apart, 320 - c * apart), (320 - s * apart, 320 + c * apart)],
            tear: 0)
        let whole = [twins.pieces[0].union(twins.pieces[1]), twins.pieces[2].union(twins.pieces[3])].map(region)
        #expect(!CandidateTracker.piecesAtAnAngle(whole[0], whole[1], in: twins.image))

        // The two halves turned 40° apart: two codes.
        let crossed = Self.turnedBars(
            degrees: [degrees, degrees + 40], centres: [(320 - c * 60, 320 - s * 60), (320 + c * 60, 320 + s * 60)],
            length: 100, tear: 0)
        let halves = [crossed.pieces[0].union(crossed.pieces[1]), crossed.pieces[2].union(crossed.pieces[3])]
            .map(region)
        #expect(!CandidateTracker.piecesAtAnAngle(halves[0], halves[1], in: crossed.image))
    }

    @Test(
        "a faint label the localiser splits in two for a frame is one candidate and one no-read; a second label below it is its own",
        arguments: [false, true])
    func splitRegion(beside: Bool) {
        func region(_ minX: Int, _ minY: Int, _ maxX: Int, _ maxY: Int) -> CodeLocalizer.Region {
            CodeLocalizer.Region(
                box: Box(minX: minX, minY: minY, maxX: maxX, maxY: maxY), rowCells: 4, columnCells: 4, cells: 6)
        }
        // The localiser's regions for an overexposed 2-D label entering the view on a rendered
        // faults scene (`scan-synth faults --seed 10`, frames 23–45): its 32 px cells flicker, the
        // box wobbles as it grows, and in one frame (the 17th here) it comes as two pieces no row,
        // column or angle joins, the bottom-left one nearer the label's centre. Then it crosses
        // whole at 4 px a frame.
        let recorded: [[Int]] = [
            [0, 128, 31, 191], [0, 128, 31, 191], [0, 128, 63, 191], [0, 128, 63, 191], [0, 128, 63, 191],
            [0, 96, 63, 191], [0, 96, 63, 191], [0, 96, 95, 191], [0, 96, 95, 191], [0, 128, 95, 191],
            [0, 128, 95, 191], [32, 96, 95, 191], [32, 96, 127, 191], [32, 96, 127, 191], [32, 128, 127, 191],
            [0, 128, 127, 255], [32, 96, 127, 191, 0, 192, 63, 255], [0, 96, 127, 255], [0, 96, 159, 255],
            [0, 96, 159, 255], [0, 128, 159, 255], [32, 128, 159, 255], [32, 96, 159, 255],
        ]
        func label(_ index: Int) -> [CodeLocalizer.Region] {
            var regions: [CodeLocalizer.Region] = []
            if index < recorded.count {
                let boxes = recorded[index]
                regions = stride(from: 0, to: boxes.count, by: 4).map {
                    region(boxes[$0], boxes[$0 + 1], boxes[$0 + 2], boxes[$0 + 3])
                }
            } else if 32 + (index - recorded.count) * 4 + 127 < 640 {
                let x = 32 + (index - recorded.count) * 4
                regions = [region(x, 96, x + 127, 255)]
            }
            // Another label 60 px below the first, crossing beside it.
            if beside, index < 130 { regions.append(region(index * 4, 316, index * 4 + 127, 379)) }
            return regions
        }
        let noReads = Self.run(frames: 160, regions: label)
        let found = noReads.map { ($0.firstFrame, $0.lastFrame, $0.firstBox) }
        #expect(noReads.count == (beside ? 2 : 1), "\(found)")
        // One candidate has the label from its first frame to its last.
        #expect(noReads.contains { $0.firstFrame == 0 && $0.lastBox.minY == 96 }, "\(found)")
    }

    @Test("a read beside a region whose cells reach a few pixels over it does not make it read; a read on it does")
    func readBeside() {
        func crossing(readTop: Int, readBottom: Int) -> [CandidateTracker.NoRead] {
            Self.run(
                frames: 80, regions: { index in index < 60 ? [Self.bars(x: 100 + index * 4, y: 100)] : [] },
                decoded: { index in
                    index < 60
                        ? [Box(minX: 110 + index * 4, minY: readTop, maxX: 210 + index * 4, maxY: readBottom)] : []
                })
        }
        // An EAN's read under a long label's region (y 100–159), over its last 3 rows.
        #expect(crossing(readTop: 157, readBottom: 209).count == 1)
        // A read of a band of the label's own rows.
        #expect(crossing(readTop: 120, readBottom: 132).isEmpty)
    }

    @Test("a confirmed track kept between reads does not make the label its prediction drifts onto read")
    func driftingPrediction() throws {
        var pipeline = ScanPipeline(camera: CameraIdentity(id: "cam-1"), idPrefix: "cam-1-run")
        var events: [AgentEvent] = []
        for index in 0..<60 {
            // Read in frames 0–7 only, moving 8 px a frame down: kept ten frames more, its
            // prediction goes on down over the unread label below.
            let top = 40 + index * 8
            let detections =
                index < 8
                ? [
                    Detection(
                        symbology: .code128, value: Array("LPN-A".utf8),
                        points: Box(minX: 100 + index * 4, minY: top, maxX: 219 + index * 4, maxY: top + 39).corners,
                        engine: "zxing")
                ] : []
            let label = index < 40 ? [Self.bars(x: 100 + index * 4, y: 200)] : []
            events += pipeline.process(
                frame: index, time: Self.time(index), detections: detections,
                located: LocatedRegions(regions: label, area: Self.area, image: Self.frame))
        }
        events += pipeline.finish(time: Self.time(60))
        #expect(events.count { $0.kind == .sighting } == 1)
        #expect(events.count { $0.kind == .noread } == 1, "the label below was never read")
    }

    @Test(
        "a label seen whole and still in view when the stream ends or the agent stops is a no-read with that reason; one only ever cut by the edge is not",
        arguments: [CandidateTracker.Ending.streamEnded, .stopped])
    func inViewAtTheEnd(ending: CandidateTracker.Ending) throws {
        var tracker = CandidateTracker(minFrames: 5, maxMissedFrames: 10, idPrefix: "cam")
        for index in 0..<30 {
            // One whole, one cut by the left edge (a label entering as the stream ends), one
            // whole but seen in 3 frames only.
            var regions = [Self.bars(x: 200, y: 100), Self.bars(x: 0, y: 250, width: 60)]
            if index >= 27 { regions.append(Self.bars(x: 450, y: 100)) }
            #expect(
                tracker.step(
                    frame: index, time: Self.time(index), regions: regions, decoded: [], area: Self.area, image: nil
                ).isEmpty)
        }
        let ended = tracker.finish(ending)
        #expect(tracker.live.isEmpty)
        #expect(ended.count == 1, "\(ended.map(\.lastBox))")
        let noRead = try #require(ended.first)
        #expect(noRead.lastBox.minX == 200 && noRead.frames == 30)
        #expect(noRead.reason == (ending == .streamEnded ? .clipEnded : .stopped))
    }

    @Test(
        "why a label that left was not read: its picture's reason (here damaged: sharp, large, contrasty, yet unread), unconfirmed (a read lay on it), cut-by-edge"
    )
    func reasons() throws {
        var tracker = CandidateTracker(minFrames: 5, maxMissedFrames: 10, idPrefix: "cam")
        var ended: [CandidateTracker.NoRead] = []
        for index in 0..<60 {
            let x = 100 + index * 4
            // Three labels moving right, the third along the bottom edge (cut in every frame);
            // a fourth along the top edge with a confirmed track's place on it: the end of a read
            // code, not a label.
            let regions =
                index < 40
                ? [
                    Self.bars(x: x, y: 100), Self.bars(x: x, y: 200), Self.bars(x: x, y: 360, height: 40),
                    Self.bars(x: x, y: 0, height: 30),
                ] : []
            let tentative = index == 20 ? [Box(minX: x + 10, minY: 210, maxX: x + 100, maxY: 212)] : []
            let tracked = index < 40 ? [Box(minX: x, minY: -40, maxX: x + 119, maxY: 20)] : []
            ended += tracker.step(
                frame: index, time: Self.time(index), regions: regions, decoded: [], tentative: tentative,
                tracked: tracked, area: Self.area, image: Self.frame)
        }
        let reasons = Dictionary(uniqueKeysWithValues: ended.map { ($0.firstBox.minY, $0.reason) })
        #expect(reasons == [100: .damaged, 200: .unconfirmed, 360: .cutByEdge], "\(ended)")
        let label = try #require(ended.first { $0.firstBox.minY == 100 })
        #expect((label.quality?.contrast ?? 0) > 100 && label.quality?.pixelsPerModule != nil, "\(label)")
    }

    @Test("the pipeline sends a noread event that parses back, in the session it happened in")
    func pipelineEvent() throws {
        var pipeline = ScanPipeline(camera: CameraIdentity(id: "cam-1", site: "dc1", lane: "L1"), idPrefix: "cam-1-run")
        var events: [AgentEvent] = []
        for index in 0..<40 {
            let regions = index < 25 ? [Self.bars(x: 100 + index * 6, y: 120)] : []
            events += pipeline.process(
                frame: index, time: Self.time(index), detections: [],
                located: LocatedRegions(regions: regions, area: Self.area, image: Self.frame))
        }
        let noRead = try #require(events.first { $0.kind == .noread })
        #expect(noRead.isDurable && noRead.subjectFamily == .noread)
        let unsaved = try #require(noRead.unsavedNoRead)
        #expect(unsaved.picture != nil)
        let parsed = try NoReadEvent.parse(try JSONValue.parse(noRead.json))
        #expect(parsed.camera == "cam-1" && parsed.site == "dc1" && parsed.lane == "L1")
        #expect(parsed.sessionId == pipeline.currentSessionId && parsed.sessionId != nil)
        #expect(parsed.family == "linear" && parsed.frames == 25 && parsed.image == nil)
        #expect(parsed.imageFileName == "cam-1-run-n1.png")
    }

    @Test("no-reads off: regions are not followed")
    func disabled() {
        var config = NoReadConfig()
        config.enabled = false
        var pipeline = ScanPipeline(camera: CameraIdentity(id: "cam-1"), noread: config, idPrefix: "cam-1-run")
        var events: [AgentEvent] = []
        for index in 0..<40 {
            events += pipeline.process(
                frame: index, time: Self.time(index), detections: [],
                located: LocatedRegions(
                    regions: index < 25 ? [Self.bars(x: 100, y: 120)] : [], area: Self.area, image: Self.frame))
        }
        #expect(pipeline.candidates == nil)
        #expect(!events.contains { $0.kind == .noread })
    }

    @Test("halving an image averages each 2 × 2 block")
    func halved() {
        let image = GrayImage(width: 4, height: 2, pixels: [0, 10, 20, 30, 40, 50, 60, 70])
        let half = image.halved()
        #expect(half.width == 2 && half.height == 1)
        #expect(half.pixels == [25, 45])
    }
}
