import ScanCore
import ScanTestTiming
import Testing
import ScanVision

@Suite("decode planner: where guided decoding looks", .timed)
struct DecodePlannerTests {
    static func track(
        _ box: Box, value: String = "4006381333931", symbology: Symbology = .ean13, rows: Bool? = true,
        confirmed: Bool = true,
        velocityX: Double = 8
    ) -> DecodePlanner.TrackedCode {
        DecodePlanner.TrackedCode(
            symbology: symbology, value: Array(value.utf8), box: box, typicalWidth: box.width,
            typicalHeight: box.height,
            velocityX: velocityX, velocityY: 0, readAlongRows: rows, confirmed: confirmed)
    }

    static func candidate(_ box: Box) -> CodeLocalizer.Region {
        CodeLocalizer.Region(box: box, rowCells: 4, columnCells: 0, cells: 4)
    }

    @Test("full mode: the whole region of interest at the configured density, every frame")
    func fullMode() {
        var config = DecoderConfig()
        config.mode = .full
        let regions = DecodePlanner(config: config).plan(
            frame: 3, width: 640, height: 400, tracks: [Self.track(Box(minX: 10, minY: 10, maxX: 200, maxY: 80))],
            candidates: [])
        #expect(
            regions == [
                DecodePlanner.Region(
                    box: Box(minX: 0, minY: 0, maxX: 639, maxY: 399), purpose: .whole, rowStep: 2, columnStep: 2)
            ])
    }

    @Test(
        "a tracked code read along rows is decoded along rows only, around where it is predicted, with its quiet zone")
    func trackedRegion() {
        var config = DecoderConfig()
        config.sweepFrames = 0
        let code = Box(minX: 400, minY: 100, maxX: 590, maxY: 160)
        let regions = DecodePlanner(config: config).plan(
            frame: 0, width: 1920, height: 1080, tracks: [Self.track(code)], candidates: [])
        #expect(regions.count == 1)
        let region = regions[0]
        #expect(region.purpose == .tracked && region.tracks == [0])
        #expect(region.rowStep == config.trackedDensity && region.columnStep == 0)
        // Holds the code with room left and right (quiet zone, prediction error), little above and below.
        #expect(region.box.covers(code, fraction: 1))
        #expect(region.box.minX <= code.minX - 60 && region.box.maxX >= code.maxX + 60)
        #expect(region.box.minY >= code.minY - 40 && region.box.maxY <= code.maxY + 40)
        // A 2-D code (or one whose direction is not known) is scanned both ways at the density.
        let qr = Self.track(
            Box(minX: 40, minY: 40, maxX: 120, maxY: 120), value: "TOTE-1", symbology: .qrCode, rows: nil)
        let both = DecodePlanner(config: config).plan(frame: 0, width: 1920, height: 1080, tracks: [qr], candidates: [])
        #expect(both.count == 1 && both[0].rowStep == config.density && both[0].columnStep == config.density)
    }

    @Test(
        "a code last read straightened along its bars gets a region of its own that no row or column scans; a code beside it is not joined to it, and a candidate there is still searched"
    )
    func straightenedTrack() {
        var config = DecoderConfig()
        config.sweepFrames = 0
        let angled = Box(minX: 300, minY: 200, maxX: 520, maxY: 420)
        var turned = Self.track(angled, rows: nil, velocityX: 8)
        turned.straightened = true
        // A code read along rows whose region would reach into the angled one's.
        let beside = Box(minX: 560, minY: 380, maxX: 750, maxY: 440)
        let regions = DecodePlanner(config: config).plan(
            frame: 0, width: 1920, height: 1080, tracks: [turned, Self.track(beside, value: "590123412345")],
            candidates: [CodeLocalizer.Region(box: angled, rowCells: 6, columnCells: 6, cells: 12)])
        let straightened = regions.filter { $0.purpose == .straightened }
        #expect(straightened.count == 1)
        #expect(straightened.first?.tracks == [0])
        #expect(straightened.first?.rowStep == 0 && straightened.first?.columnStep == 0)
        #expect(straightened.first.map { $0.box.covers(angled, fraction: 1) } == true)
        // Its neighbour keeps a region of its own, scanned along rows, not widened over the angled code.
        let tracked = regions.filter { $0.purpose == .tracked }
        #expect(tracked.count == 1 && tracked.first?.tracks == [1] && tracked.first?.columnStep == 0)
        #expect(tracked.first.map { !$0.box.covers(angled, fraction: 0.5) } == true)
        // What the localiser sees there may be another item put down in its place: still searched.
        #expect(regions.contains { $0.purpose == .discovery && $0.box.covers(angled, fraction: 1) })
        // The same code not read straightened is planned as before: scanned both ways.
        turned.straightened = false
        let before = DecodePlanner(config: config).plan(
            frame: 0, width: 1920, height: 1080, tracks: [turned], candidates: [])
        #expect(before.count == 1 && before[0].purpose == .tracked && before[0].rowStep > 0 && before[0].columnStep > 0)
    }

    @Test("a code seen at one end only is looked for a code's length along its scan lines")
    func oneEndRead() {
        var config = DecoderConfig()
        config.sweepFrames = 0
        let end = Box(minX: 800, minY: 300, maxX: 800, maxY: 360)  // a column of points: the right end of a code
        let regions = DecodePlanner(config: config).plan(
            frame: 0, width: 1920, height: 1080,
            tracks: [Self.track(end, value: "LPN1", symbology: .code128, rows: nil, confirmed: false)],
            candidates: [])
        #expect(regions.count == 1)
        // About ten times its half-height either way: a code up to five times as long as it is tall.
        #expect(regions[0].box.minX <= 800 - 250 && regions[0].box.maxX >= 800 + 250, "\(regions[0].box)")
        #expect(regions[0].columnStep == 0)
    }

    @Test(
        "what the localiser finds outside tracked regions is searched across the edges it saw; what lies inside them is not"
    )
    func discovery() {
        var config = DecoderConfig()
        config.sweepFrames = 0
        let code = Box(minX: 400, minY: 100, maxX: 590, maxY: 160)
        let inside = Self.candidate(Box(minX: 384, minY: 96, maxX: 607, maxY: 159))
        let elsewhere = Self.candidate(Box(minX: 1200, minY: 600, maxX: 1400, maxY: 680))
        let regions = DecodePlanner(config: config).plan(
            frame: 0, width: 1920, height: 1080, tracks: [Self.track(code)], candidates: [inside, elsewhere])
        let discovery = regions.filter { $0.purpose == .discovery }
        #expect(discovery.count == 1)
        #expect(discovery.first?.box.covers(elsewhere.box, fraction: 1) == true)
        // Bars crossed by rows (the localiser saw edges along rows): rows only.
        #expect(discovery.first.map { $0.rowStep == config.density && $0.columnStep == 0 } == true)
        // Bars crossed by columns, a 2-D code, and a linear code with a little text beside it.
        let planner = DecodePlanner(config: config)
        func steps(rowCells: Int, columnCells: Int) -> [Int] {
            let candidate = CodeLocalizer.Region(
                box: elsewhere.box, rowCells: rowCells, columnCells: columnCells, cells: 8)
            let found = planner.plan(frame: 0, width: 1920, height: 1080, tracks: [], candidates: [candidate])
            return found.flatMap { [$0.rowStep, $0.columnStep] }
        }
        #expect(steps(rowCells: 0, columnCells: 6) == [0, config.density])
        #expect(steps(rowCells: 5, columnCells: 6) == [config.density, config.density])
        #expect(steps(rowCells: 8, columnCells: 1) == [config.density, 0])
    }

    @Test(
        "a label the localiser sees as one region holding two tracked codes (an SSCC above an EAN-13) is not searched again, a few edges down columns (its text) included; with a code not tracked, or edges down columns enough for a 2-D code beside them, it is"
    )
    func discoveryCoveredByTwoTracks() {
        var config = DecoderConfig()
        config.sweepFrames = 0
        let sscc = Box(minX: 1200, minY: 1100, maxX: 1500, maxY: 1160)
        let ean = Box(minX: 1210, minY: 1250, maxX: 1400, maxY: 1360)
        // The localiser's region: both codes and the label between them.
        let label = CodeLocalizer.Region(
            box: Box(minX: 1190, minY: 1090, maxX: 1510, maxY: 1370), rowCells: 12, columnCells: 0, cells: 12)
        let planner = DecodePlanner(config: config)
        let ssccTrack = Self.track(sscc, value: "00340123450000000277", symbology: .code128)
        // The discovery regions planned for the label, with both codes tracked or the SSCC alone.
        func discovery(_ candidate: CodeLocalizer.Region, bothTracked: Bool) -> [DecodePlanner.Region] {
            planner.plan(
                frame: 0, width: 3840, height: 2160, tracks: bothTracked ? [ssccTrack, Self.track(ean)] : [ssccTrack],
                candidates: [candidate]
            ).filter { $0.purpose == .discovery }
        }
        #expect(discovery(label, bothTracked: true).isEmpty)
        // The SSCC alone tracked: the rest of the label (the EAN-13 not yet read) is searched.
        #expect(discovery(label, bothTracked: false).count == 1)
        // Edges down columns too: something there needs columns (a QR Code, a DataMatrix), which the
        // codes' regions, scanned along rows, do not give it.
        var matrixBeside = label
        matrixBeside.columnCells = 3
        #expect(discovery(matrixBeside, bothTracked: true).map(\.columnStep) == [config.density])
        // A few cells of edges down columns (the label's text, a logo): the search would scan rows
        // only, which the codes' regions do already; not searched again (at 4K such labels were
        // searched every frame, a third of the frame's zbar time).
        var withText = label
        withText.columnCells = 2
        #expect(discovery(withText, bothTracked: true).isEmpty)
        #expect(discovery(withText, bothTracked: false).map(\.columnStep) == [0], "still searched, rows only")
    }

    @Test(
        "bars inside the region of a tracked DataMatrix alone are searched (zbar does not scan that region); inside one holding a linear code, or a 2-D candidate there, they are not"
    )
    func barsBesideMatrixCode() {
        var config = DecoderConfig()
        config.sweepFrames = 0
        let planner = DecodePlanner(config: config)
        let matrix = Self.track(
            Box(minX: 400, minY: 400, maxX: 520, maxY: 520), value: "LP-1", symbology: .dataMatrix, rows: nil)
        // An EAN-8 coming into view beside the DataMatrix, wholly inside its region's margin.
        let bars = Self.candidate(Box(minX: 530, minY: 440, maxX: 560, maxY: 480))
        func discovery(_ tracks: [DecodePlanner.TrackedCode], _ candidate: CodeLocalizer.Region) -> [DecodePlanner
            .Region]
        {
            planner.plan(frame: 0, width: 1920, height: 1080, tracks: tracks, candidates: [candidate])
                .filter { $0.purpose == .discovery }
        }
        let tracked = planner.plan(frame: 0, width: 1920, height: 1080, tracks: [matrix], candidates: [])
        #expect(tracked.count == 1 && tracked[0].box.covers(bars.box, fraction: 1), "the test's premise")
        #expect(discovery([matrix], bars).map(\.rowStep) == [config.density])
        // A linear code tracked there too: its region holds the bars.
        var ean = Self.track(Box(minX: 530, minY: 440, maxX: 560, maxY: 480), value: "96385074", symbology: .ean8)
        ean.velocityX = 0
        #expect(discovery([matrix, ean], bars).isEmpty)
        // Edges both ways there: the DataMatrix itself, which its region holds.
        var modules = bars
        modules.columnCells = 4
        #expect(discovery([matrix], modules).isEmpty)
    }

    @Test(
        "the sweep covers the whole area in sweepFrames frames: rows stripe by stripe, columns reaching into the next stripe"
    )
    func sweepCoversTheFrame() {
        var config = DecoderConfig()
        config.sweepFrames = 8
        config.sweepOverlap = 120
        let planner = DecodePlanner(config: config)
        var rowsCovered = [Int](repeating: 0, count: 1080)
        var columnStripes: [Box] = []
        for frame in 0..<8 {
            let sweep = planner.plan(frame: frame, width: 1920, height: 1080, tracks: [], candidates: []).filter {
                $0.purpose == .sweep
            }
            #expect(sweep.count == 2)
            let rows = sweep.filter { $0.rowStep > 0 }
            let columns = sweep.filter { $0.columnStep > 0 }
            #expect(rows.count == 1 && columns.count == 1)
            guard let row = rows.first, let column = columns.first else { continue }
            #expect(row.columnStep == 0 && column.rowStep == 0)
            #expect(row.rowStep == config.sweepDensity && column.columnStep == config.sweepDensity)
            #expect(row.box.minX == 0 && row.box.maxX == 1919 && column.box.minX == 0 && column.box.maxX == 1919)
            #expect(column.box.minY == row.box.minY && column.box.covers(row.box, fraction: 1))
            for line in row.box.minY...row.box.maxY { rowsCovered[line] += 1 }
            columnStripes.append(column.box)
        }
        // Rows: every line of the area once in the cycle.
        #expect(rowsCovered.allSatisfy { $0 == 1 })
        // Columns: each stripe reaches into the next by the overlap, so an upright code up to that tall lies whole in one.
        for (a, b) in zip(columnStripes, columnStripes.dropFirst()) where b.maxY < 1079 {
            #expect(a.maxY - b.minY + 1 >= 120, "\(a) and \(b) overlap by the overlap")
        }
        // Frame 8 starts the cycle again.
        #expect(
            planner.plan(frame: 8, width: 1920, height: 1080, tracks: [], candidates: [])
                == planner.plan(
                    frame: 0, width: 1920, height: 1080, tracks: [], candidates: []))
    }

    @Test("overlapping tracked regions are joined, scanning as finely as the finer, in both their directions")
    func joining() {
        let a = DecodePlanner.Region(
            box: Box(minX: 0, minY: 0, maxX: 100, maxY: 50), purpose: .tracked, rowStep: 3, columnStep: 0, tracks: [0])
        let b = DecodePlanner.Region(
            box: Box(minX: 90, minY: 40, maxX: 200, maxY: 90), purpose: .tracked, rowStep: 2, columnStep: 2, tracks: [1]
        )
        let c = DecodePlanner.Region(
            box: Box(minX: 500, minY: 0, maxX: 600, maxY: 50), purpose: .tracked, rowStep: 3, columnStep: 0, tracks: [2]
        )
        let joined = DecodePlanner.joinOverlapping([a, b, c])
        #expect(joined.count == 2)
        #expect(
            joined[0]
                == DecodePlanner.Region(
                    box: Box(minX: 0, minY: 0, maxX: 200, maxY: 90), purpose: .tracked, rowStep: 2, columnStep: 2,
                    tracks: [0, 1]))
        #expect(joined[1] == c)
    }

    @Test("a region of interest bounds every region")
    func regionOfInterest() {
        var config = DecoderConfig()
        config.regionOfInterest = RegionOfInterest(x: 0.25, y: 0, width: 0.5, height: 1)
        let regions = DecodePlanner(config: config).plan(
            frame: 0, width: 1000, height: 400, tracks: [Self.track(Box(minX: 200, minY: 100, maxX: 390, maxY: 160))],
            candidates: [Self.candidate(Box(minX: 700, minY: 200, maxX: 900, maxY: 260))])
        #expect(!regions.isEmpty)
        for region in regions { #expect(region.box.minX >= 250 && region.box.maxX <= 749, "\(region)") }
    }
}

@Suite("code localiser: barcode-like regions without decoding", .timed)
struct CodeLocalizerTests {
    /// A belt-grey image with faint noise, a block of bars, a box edge and a 2-D checker block.
    static func scene() -> GrayImage {
        var image = GrayImage(width: 640, height: 360, fill: 80)
        var seed: UInt64 = 42
        for index in image.pixels.indices {
            seed = seed &* 6364136223846793005 &+ 1442695040888963407
            image.pixels[index] = UInt8(72 + Int(seed >> 60))  // noise of ±8 grey levels
        }
        // A label: white paper with bars of 2 and 4 pixels at x 100…299, y 60…119.
        for y in 50...129 { for x in 90...309 { image[x, y] = 235 } }
        var x = 100
        var wide = false
        while x < 300 {
            let bar = wide ? 4 : 2
            for column in x..<min(x + bar, 300) { for y in 60...119 { image[column, y] = 20 } }
            x += bar + (wide ? 2 : 4)
            wide.toggle()
        }
        // A box edge: a bright box from x 400 on, y 200…330 (one edge per row and column).
        for y in 200...330 { for x in 400...600 { image[x, y] = 170 } }
        // A 2-D code: 4-pixel checker, x 40…99, y 240…299.
        for y in 240..<300 { for x in 40..<100 { image[x, y] = ((x - 40) / 4 + (y - 240) / 4) % 2 == 0 ? 20 : 235 } }
        return image
    }

    @Test("finds the bars and the 2-D code, not the noise or the box edge")
    func findsCodes() {
        let regions = CodeLocalizer().locate(Self.scene())
        let bars = regions.filter { $0.box.covers(Box(minX: 110, minY: 70, maxX: 290, maxY: 110), fraction: 0.6) }
        #expect(bars.count == 1, "\(regions)")
        #expect(bars.first.map { $0.rowCells > 0 && $0.columnCells == 0 } == true, "bars have edges along rows only")
        let matrix = regions.filter { $0.box.intersects(Box(minX: 40, minY: 240, maxX: 99, maxY: 299)) }
        #expect(matrix.count == 1 && matrix.first.map { $0.rowCells > 0 && $0.columnCells > 0 } == true, "\(regions)")
        #expect(
            !regions.contains { $0.box.intersects(Box(minX: 380, minY: 180, maxX: 639, maxY: 359)) },
            "box edge: \(regions)")
        #expect(regions.count == 2)
    }

    @Test("a uniform or noisy frame has no code-like region; a small area is searched only there")
    func nothingAndArea() {
        #expect(CodeLocalizer().locate(GrayImage(width: 320, height: 240, fill: 128)).isEmpty)
        let image = Self.scene()
        #expect(CodeLocalizer().locate(image, in: Box(minX: 380, minY: 150, maxX: 639, maxY: 359)).isEmpty)
        let found = CodeLocalizer().locate(image, in: Box(minX: 0, minY: 0, maxX: 330, maxY: 180))
        #expect(found.count == 1 && found.allSatisfy { $0.box.maxX <= 330 && $0.box.maxY <= 180 })
    }
}
