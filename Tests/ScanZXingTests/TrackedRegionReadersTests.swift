import ScanCore
import ScanSynth
import ScanTestTiming
import ScanVision
import Testing

@testable import ScanZXing

/// zxing-cpp on the guided decoder's tracked regions: what it reads, what it leaves to zbar.
@Suite("zxing-cpp on tracked regions", .timed)
struct TrackedRegionReadersTests {
    static let symbologies: Set<Symbology> = [.ean13, .code128, .qrCode, .ean2, .ean5]

    /// A track of `value` expected exactly where its sprite was pasted.
    static func track(_ value: String, _ symbology: Symbology, at box: Box, alongRows: Bool? = true)
        -> DecodePlanner.TrackedCode
    {
        DecodePlanner.TrackedCode(
            symbology: symbology, value: Array(value.utf8), box: box, typicalWidth: box.width,
            typicalHeight: box.height, velocityX: 8, velocityY: 0, readAlongRows: alongRows, confirmed: true)
    }

    static func box(_ sprite: Sprite, _ x: Int, _ y: Int) -> Box {
        Box(minX: x, minY: y, maxX: x + sprite.width - 1, maxY: y + sprite.height - 1)
    }

    static func region(around boxes: [Box], tracks: [Int], in frame: Box, columns: Bool = false) -> DecodePlanner.Region
    {
        let joined = boxes.dropFirst().reduce(boxes[0]) { $0.union($1) }
        let margin = Box(
            minX: joined.minX - 24, minY: joined.minY - 8, maxX: joined.maxX + 24, maxY: joined.maxY + 8)
        return DecodePlanner.Region(
            box: margin.clamped(to: frame) ?? frame, purpose: .tracked, rowStep: 4, columnStep: columns ? 4 : 0,
            tracks: tracks)
    }

    @Test(
        "two codes on the same rows of one joined region are both read, the region is done, each read where its track is"
    )
    func joinedRegion() throws {
        let (left, leftValue) = try BarcodeRenderer.render(.code128, "LPN700001", moduleSize: 2)
        let (right, rightValue) = try BarcodeRenderer.render(.code128, "LPN700002", moduleSize: 2)
        let image = ZXingReaderTests.frame([(left, 40, 100), (right, 340, 104)], width: 700, height: 300)
        let tracks = [
            Self.track(leftValue, .code128, at: Self.box(left, 40, 100)),
            Self.track(rightValue, .code128, at: Self.box(right, 340, 104)),
        ]
        let region = Self.region(around: tracks.map(\.box), tracks: [0, 1], in: image.bounds)
        let readers = try TrackedRegionReaders(symbologies: Self.symbologies)
        let result = try readers.read(image, regions: [region], tracks: tracks, input: "test")
        #expect(Set(result.detections.compactMap(\.text)) == [leftValue, rightValue])
        #expect(result.read == [0] && result.plan == [region], "nothing left to zbar")
        #expect(readers.regionsRead == 1 && readers.regionsLeft == 0)
        // Each read takes its track's size, centred where zxing-cpp saw it.
        for (detection, track) in zip(result.detections.sorted { $0.text! < $1.text! }, tracks) {
            let box = try #require(detection.box)
            #expect(box.width == track.box.width && box.height == track.box.height, "\(box) against \(track.box)")
            #expect(abs(box.centerX - track.box.centerX) <= 4 && abs(box.centerY - track.box.centerY) <= 4)
        }
    }

    @Test("a planned code zxing-cpp does not read leaves the region to zbar; in a joined region, only its own part")
    func missedCodes() throws {
        let (code, value) = try BarcodeRenderer.render(.code128, "LPN700003", moduleSize: 2)
        let image = ZXingReaderTests.frame([(code, 40, 100)], width: 700, height: 300)
        let here = Self.track(value, .code128, at: Self.box(code, 40, 100))
        // Expected at the right, where the frame is blank (a label covered by an arm).
        let gone = Self.track(
            "LPN700004", .code128,
            at: Box(minX: 360, minY: 100, maxX: 360 + code.width - 1, maxY: 100 + code.height - 1))
        let readers = try TrackedRegionReaders(symbologies: Self.symbologies)

        let alone = Self.region(around: [gone.box], tracks: [1], in: image.bounds)
        let single = try readers.read(image, regions: [alone], tracks: [here, gone], input: "test")
        #expect(single.read.isEmpty && single.plan == [alone] && single.detections.isEmpty)

        let joined = Self.region(around: [here.box, gone.box], tracks: [0, 1], in: image.bounds)
        let sweep = DecodePlanner.Region(box: image.bounds, purpose: .sweep, rowStep: 6, columnStep: 0)
        let result = try readers.read(image, regions: [joined, sweep], tracks: [here, gone], input: "test")
        #expect(result.detections.compactMap(\.text) == [value], "what zxing-cpp read stands")
        #expect(result.read.isEmpty)
        #expect(result.plan.count == 2 && result.plan[1] == sweep, "other regions pass through in order")
        let part = result.plan[0]
        #expect(
            part.purpose == .tracked && part.tracks == [0, 1],
            "planned for the region's codes (zbar keeps identical ones apart)")
        #expect(
            joined.box.covers(part.box, fraction: 1) && !part.box.intersects(here.box),
            "the missed code's part: \(part.box)")
        #expect(part.box.covers(gone.box, fraction: 1))
    }

    @Test("a code the tracker expects partly outside the frame is not looked for again")
    func leavingTheView() throws {
        let (code, _) = try BarcodeRenderer.render(.code128, "LPN700005", moduleSize: 2)
        let image = ZXingReaderTests.frame([], width: 700, height: 300)
        let leaving = Self.track(
            "LPN700005", .code128,
            at: Box(minX: 700 - code.width / 2, minY: 100, maxX: 699 + code.width / 2, maxY: 100 + code.height))
        let region = Self.region(around: [leaving.box], tracks: [0], in: image.bounds)
        let readers = try TrackedRegionReaders(symbologies: Self.symbologies)
        let result = try readers.read(image, regions: [region], tracks: [leaving], input: "test")
        #expect(result.read == [0] && result.detections.isEmpty)
    }

    @Test(
        "a read of another value in a tracked region, misread or new, leaves the whole region to zbar and is not reported"
    )
    func otherValues() throws {
        let (tracked, trackedValue) = try BarcodeRenderer.render(.code128, "LPN700006", moduleSize: 2)
        let (other, otherValue) = try BarcodeRenderer.render(.code128, "LPN700007", moduleSize: 2)
        // The tracker expects LPN700007 where LPN700006 is printed: a misread of that place.
        let image = ZXingReaderTests.frame([(tracked, 40, 60), (other, 40, 200)], width: 700, height: 320)
        let misplaced = Self.track(otherValue, .code128, at: Self.box(tracked, 40, 60))
        let readers = try TrackedRegionReaders(symbologies: Self.symbologies)
        let here = Self.region(around: [misplaced.box], tracks: [0], in: image.bounds)
        let result = try readers.read(image, regions: [here], tracks: [misplaced], input: "test")
        #expect(result.detections.isEmpty, "\(result.detections.compactMap(\.text))")
        #expect(result.plan == [here] && result.read.isEmpty, "zbar looks again")

        // A new code in a region planned for another: zbar's to read (its checks against phantoms).
        let (first, firstValue) = try BarcodeRenderer.render(.code128, "LPN700008", moduleSize: 2)
        let row = ZXingReaderTests.frame([(first, 20, 60), (tracked, 380, 60)], width: 800, height: 200)
        let truth = Self.track(trackedValue, .code128, at: Self.box(tracked, 380, 60))
        let wide = DecodePlanner.Region(
            box: Box(minX: 0, minY: 50, maxX: 799, maxY: 70 + tracked.height), purpose: .tracked, rowStep: 4,
            columnStep: 0, tracks: [0])
        let both = try readers.read(row, regions: [wide], tracks: [truth], input: "test")
        #expect(both.detections.isEmpty, "\(both.detections.compactMap(\.text)), not \(firstValue)")
        #expect(both.plan == [wide] && both.read.isEmpty)
    }

    @Test("a track that knows its code only as a sliver is left to zbar, which reads it on all its lines")
    func sliver() throws {
        let (code, value) = try BarcodeRenderer.render(.code128, "LPN700009", moduleSize: 2)
        let image = ZXingReaderTests.frame([(code, 40, 60)], width: 700, height: 300)
        let whole = Self.box(code, 40, 60)
        // zbar read it on three lines across the middle: as long as the code, 9 pixels high.
        var thin = Self.track(value, .code128, at: Box(minX: whole.minX, minY: 100, maxX: whole.maxX, maxY: 108))
        thin.typicalHeight = 9
        #expect(!TrackedRegionReaders.sized(thin) && TrackedRegionReaders.sized(Self.track(value, .code128, at: whole)))
        let region = DecodePlanner.Region(
            box: Box(minX: 16, minY: 40, maxX: 340, maxY: 180), purpose: .tracked, rowStep: 4, columnStep: 0,
            tracks: [0])
        let readers = try TrackedRegionReaders(symbologies: Self.symbologies)
        let result = try readers.read(image, regions: [region], tracks: [thin], input: "test")
        #expect(result.detections.isEmpty && result.read.isEmpty && result.plan == [region])
    }

    @Test(
        "a region of linear codes scanned along rows is read for linear codes only; one scanned both ways for every symbology"
    )
    func linearOnly() throws {
        let (code, value) = try BarcodeRenderer.render(.code128, "LPN700010", moduleSize: 2)
        let (qr, _) = try BarcodeRenderer.render(.qrCode, "TOTE-78", moduleSize: 4)
        let image = ZXingReaderTests.frame([(code, 40, 100), (qr, 420, 80)], width: 700, height: 300)
        let readers = try TrackedRegionReaders(symbologies: Self.symbologies)
        let wide = Box(minX: 0, minY: 70, maxX: 699, maxY: 90 + qr.height)
        // Along rows: the QR Code beside it is not looked for (no 2-D search on the region: the
        // planner keeps a discovery region for edges both ways, DecodePlannerTests).
        let alongRows = Self.track(value, .code128, at: Self.box(code, 40, 100))
        let rows = DecodePlanner.Region(box: wide, purpose: .tracked, rowStep: 4, columnStep: 0, tracks: [0])
        let read = try readers.read(image, regions: [rows], tracks: [alongRows], input: "test")
        #expect(read.detections.compactMap(\.text) == [value] && read.read == [0])
        // Both ways (its direction not known): the QR Code is found, a new code, left to zbar.
        let unknown = Self.track(value, .code128, at: Self.box(code, 40, 100), alongRows: nil)
        let both = DecodePlanner.Region(box: wide, purpose: .tracked, rowStep: 4, columnStep: 4, tracks: [0])
        let left = try readers.read(image, regions: [both], tracks: [unknown], input: "test")
        #expect(left.detections.isEmpty && left.read.isEmpty && left.plan == [both])
    }

    @Test("a QR Code's region is read with both directions and keeps zxing-cpp's corners")
    func qrCode() throws {
        let (qr, value) = try BarcodeRenderer.render(.qrCode, "TOTE-77", moduleSize: 4)
        let image = ZXingReaderTests.frame([(qr, 200, 80)], width: 500, height: 300)
        let track = Self.track(value, .qrCode, at: Self.box(qr, 200, 80), alongRows: nil)
        let region = Self.region(around: [track.box], tracks: [0], in: image.bounds, columns: true)
        let result = try TrackedRegionReaders(symbologies: Self.symbologies).read(
            image, regions: [region], tracks: [track], input: "test")
        #expect(result.read == [0])
        let box = try #require(result.detections.first?.box)
        #expect(
            box.covers(
                Box(minX: 200 + 4 * 4, minY: 80 + 4 * 4, maxX: 200 + qr.width - 20, maxY: 80 + qr.height - 20),
                fraction: 0.9))
    }
}

/// zxing-cpp for DataMatrix and the like on the plan's regions, every frame.
@Suite("zxing-cpp on the regions of matrix codes", .timed)
struct MatrixRegionReaderTests {
    @Test(
        "a DataMatrix is read where its track is expected and in a discovery region with edges both ways, not in a rows-only one"
    )
    func regions() throws {
        let (tracked, trackedValue) = try BarcodeRenderer.render(.dataMatrix, "LPN-000201", moduleSize: 4)
        let (found, foundValue) = try BarcodeRenderer.render(.dataMatrix, "LPN-000202", moduleSize: 4)
        let image = ZXingReaderTests.frame([(tracked, 40, 60), (found, 400, 60)], width: 700, height: 300)
        let reader = try #require(try MatrixRegionReader(symbologies: [.dataMatrix, .code128]))
        #expect(reader.symbologies == [.dataMatrix, .code128])
        let track = TrackedRegionReadersTests.track(
            trackedValue, .dataMatrix, at: TrackedRegionReadersTests.box(tracked, 40, 60), alongRows: nil)
        let trackRegion = TrackedRegionReadersTests.region(
            around: [track.box], tracks: [0], in: image.bounds, columns: true)
        let around = Box(minX: 380, minY: 40, maxX: 420 + found.width, maxY: 80 + found.height)
        let both = DecodePlanner.Region(box: around, purpose: .discovery, rowStep: 2, columnStep: 2)
        let rowsOnly = DecodePlanner.Region(box: around, purpose: .discovery, rowStep: 2, columnStep: 0)

        let read = try reader.read(image, regions: [trackRegion, both], tracks: [track], input: "test")
        #expect(Set(read.compactMap(\.text)) == [trackedValue, foundValue])
        #expect(read.allSatisfy { $0.engine == "zxing" && $0.symbology == .dataMatrix })
        let placed = try #require(read.first { $0.text == foundValue }?.box)
        #expect(placed.minX >= 396 && placed.minX <= 420, "frame coordinates: \(placed)")

        #expect(try reader.read(image, regions: [rowsOnly], tracks: [track], input: "test").isEmpty)
        let sweep = DecodePlanner.Region(box: image.bounds, purpose: .sweep, rowStep: 6, columnStep: 6)
        #expect(try reader.read(image, regions: [sweep], tracks: [], input: "test").isEmpty, "the sweep is not its")
        #expect(reader.regionsRead == 2)
    }

    @Test("no reader when zxing-cpp reads none of the symbologies")
    func none() throws {
        #expect(try MatrixRegionReader(symbologies: []) == nil)
        #expect(try MatrixRegionReader(symbologies: [.ean2]) == nil)
    }
}
