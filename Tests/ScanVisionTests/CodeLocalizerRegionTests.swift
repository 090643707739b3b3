import ScanTestTiming
import Testing

@testable import ScanCore
@testable import ScanVision

/// A localiser region's cells: kept with the region, and cut where read codes are.
@Suite("localiser regions' cells", .timed)
struct CodeLocalizerRegionTests {
    /// A frame with upright bars on the left (x 40–199) and a checkerboard of 4-px modules on
    /// the right (x 232–327), rows 64–159: an EAN and a DataMatrix beside it, close enough that
    /// their cells touch. Without the modules: bars only.
    static func label(modules: Bool = true) -> GrayImage {
        var pixels = [UInt8](repeating: 200, count: 400 * 240)
        for y in 64..<160 {
            for x in 40..<200 where (x / 3) % 2 == 0 { pixels[y * 400 + x] = 20 }
            for x in 232..<328 where modules && (x / 4 + y / 4) % 2 == 0 { pixels[y * 400 + x] = 20 }
        }
        return GrayImage(width: 400, height: 240, pixels: pixels)
    }

    @Test("the localiser keeps which cells of each region had edges which way")
    func marks() throws {
        let regions = CodeLocalizer(coarseFactor: 0).locate(Self.label())
        let region = try #require(regions.first)
        #expect(regions.count == 1, "the bars and the modules touch: one region")
        #expect(region.cellSize == 32)
        let columns = (region.box.width + 31) / 32
        #expect(region.marks.count == columns * ((region.box.height + 31) / 32))
        #expect(region.marks.count { $0 != 0 } == region.cells)
        #expect(region.marks.count { $0 & 1 != 0 } == region.rowCells)
        #expect(region.marks.count { $0 & 2 != 0 } == region.columnCells)
        #expect(!region.looksTwoDimensional, "mostly bars")
    }

    @Test("cut by a read code's box: the untouched 2-D cells are free, the rest stays")
    func cutByRead() throws {
        let region = try #require(CodeLocalizer(coarseFactor: 0).locate(Self.label()).first)
        let read = Box(minX: 40, minY: 64, maxX: 199, maxY: 159)
        let cut = region.cut(by: [read]) { $0.looksTwoDimensional }
        let free = try #require(cut.free.first)
        #expect(cut.free.count == 1)
        #expect(free.looksTwoDimensional)
        #expect(!free.box.intersects(read))
        #expect(free.box.minX >= 224 && free.box.maxX >= 312, "the modules' cells")
        #expect(cut.rest.reduce(0) { $0 + $1.cells } + free.cells == region.cells, "every cell is in one part")
        #expect(cut.rest.allSatisfy { $0.box.intersects(read) })

        // Bars left unread beyond a read part of them are not 2-D: free only with the modules.
        let partRead = Box(minX: 40, minY: 64, maxX: 100, maxY: 159)
        let withModules = region.cut(by: [partRead]) { $0.looksTwoDimensional }
        #expect(withModules.free.count == 1 && withModules.free.allSatisfy { $0.box.maxX >= 312 })
        let bars = try #require(CodeLocalizer(coarseFactor: 0).locate(Self.label(modules: false)).first)
        #expect(bars.cut(by: [partRead]) { $0.looksTwoDimensional }.free.isEmpty)
        // A read covering everything leaves nothing free; a region made by hand is never cut.
        #expect(region.cut(by: [region.box]) { _ in true }.free.isEmpty)
        let byHand = CodeLocalizer.Region(box: region.box, rowCells: 4, columnCells: 4, cells: 4)
        #expect(byHand.cut(by: [read]) { _ in true } == ([], [byHand]))
        // Marks that do not fill the box's grid (too few, too many) are not cut, and do not trap.
        for count in [1, region.marks.count - 1, region.marks.count + 5] {
            let odd = CodeLocalizer.Region(
                box: region.box, rowCells: 1, columnCells: 1, cells: 1, marks: [UInt8](repeating: 3, count: count),
                cellSize: 32)
            #expect(odd.cut(by: [read]) { _ in true } == ([], [odd]))
        }
    }
}
