import ScanCore

/// Finds code-like regions in a frame without decoding: where bars or modules are, cheaply, so
/// that the decoder can look there instead of over the whole frame.
///
/// A barcode is many strong edges close together along one direction (1-D: across the bars) or
/// along both (2-D: QR, DataMatrix). The frame is cut into cells; on sampled lines through each
/// cell, the localiser counts edges, runs of strong contrast change that alternate in sign. The
/// belt's texture and sensor noise stay below the contrast threshold; a box or label edge is one
/// edge per line, a code is several. Cells with enough edges are joined into regions. The same is
/// done on a copy subsampled by `coarseFactor`, so that large codes (modules of 10 px and more, a
/// label held close to the camera) are found as well as small ones.
/// Pure and allocation-light: one pass over a quarter of the pixels in each direction; the counts
/// run on raw buffers in loops the compiler vectorises (`replay --profile`: about 0.7 ms of a
/// 1080p frame, 2.7 ms at 4K, one core).
public struct CodeLocalizer: Sendable {
    /// Cell size in pixels (square).
    public var cell: Int
    /// Every `lineStep`-th row (and column) is sampled.
    public var lineStep: Int
    /// Smallest grey-level change between pixels two apart that counts as an edge.
    public var contrast: Int
    /// Mean edges per sampled line within a cell for the cell to count as code-like.
    public var edgesPerLine: Int
    /// Regions of fewer cells are dropped (a stray mark, a corner).
    public var minCells: Int
    /// The second, coarse pass looks at every `coarseFactor`-th pixel of every `coarseFactor`-th
    /// row; 0 or 1 turns it off.
    public var coarseFactor: Int

    /// The cell's side in pixels unless set otherwise.
    public static let defaultCell = 32

    public init(
        cell: Int = defaultCell, lineStep: Int = 4, contrast: Int = 36, edgesPerLine: Int = 3, minCells: Int = 2,
        coarseFactor: Int = 4
    ) {
        self.cell = max(8, cell)
        self.lineStep = max(1, lineStep)
        self.contrast = contrast
        self.edgesPerLine = edgesPerLine
        self.minCells = minCells
        self.coarseFactor = coarseFactor
    }

    /// A code-like region: its bounding box in frame pixels and how it looked.
    public struct Region: Sendable, Equatable {
        public var box: Box
        /// Cells with edges across rows (vertical bars, or 2-D modules).
        public var rowCells: Int
        /// Cells with edges down columns (horizontal bars, or 2-D modules).
        public var columnCells: Int
        public var cells: Int
        /// Which cells of the box were code-like, row by row from its top-left corner, each
        /// `cellSize` pixels square: bit 1 edges across rows, bit 2 edges down columns, 0 not
        /// part of the region. Empty when not known (a region made by hand, pieces joined).
        public var marks: [UInt8]
        public var cellSize: Int

        public init(box: Box, rowCells: Int, columnCells: Int, cells: Int, marks: [UInt8] = [], cellSize: Int = 0) {
            self.box = box
            self.rowCells = rowCells
            self.columnCells = columnCells
            self.cells = cells
            self.marks = marks
            self.cellSize = cellSize
        }

        /// This region and `other` as one: the box around both, their cells added (the marks are
        /// not kept: pieces joined).
        public func joined(with other: Region) -> Region {
            Region(
                box: box.union(other.box), rowCells: rowCells + other.rowCells,
                columnCells: columnCells + other.columnCells, cells: cells + other.cells)
        }

        /// Cells with edges both ways (2-D modules, or print).
        public var bothWaysCells: Int { rowCells + columnCells - cells }

        /// Edges both ways in at least two cells, and as many cells with edges one way as, within
        /// a factor of two, the other: modules of a 2-D code, not bars.
        public var looksTwoDimensional: Bool {
            bothWaysCells >= 2 && min(rowCells, columnCells) * 2 >= max(rowCells, columnCells)
        }

        /// The region cut where `covered` boxes are: `free`, the groups of its cells that no box
        /// of `covered` touches and that `keeping` accepts (each joined again into a region), and
        /// `rest`, the groups of all its other cells. Nothing free when its cells are not known, or
        /// do not fill its box's grid.
        public func cut(by covered: [Box], keeping: (Region) -> Bool) -> (free: [Region], rest: [Region]) {
            guard cellSize > 0, !marks.isEmpty, box.width > 0, box.height > 0 else { return ([], [self]) }
            let columns = (box.width + cellSize - 1) / cellSize
            let rows = (box.height + cellSize - 1) / cellSize
            // Marks that do not fill the box's grid (made by hand) are not cut.
            guard marks.count == columns * rows else { return ([], [self]) }
            var untouched = marks
            for index in untouched.indices where untouched[index] != 0 {
                let x = box.minX + index % columns * cellSize
                let y = box.minY + index / columns * cellSize
                let cell = Box(minX: x, minY: y, maxX: x + cellSize - 1, maxY: y + cellSize - 1)
                if covered.contains(where: { $0.intersects(cell) }) { untouched[index] = 0 }
            }
            let free = CodeLocalizer.components(
                untouched, columns: columns, rows: rows, bounds: box, cell: cellSize, minCells: 1
            ).filter(keeping)
            guard !free.isEmpty else { return ([], [self]) }
            var rest = marks
            for part in free {
                let partColumns = (part.box.width + cellSize - 1) / cellSize
                let left = (part.box.minX - box.minX) / cellSize
                let top = (part.box.minY - box.minY) / cellSize
                for (index, mark) in part.marks.enumerated() where mark != 0 {
                    rest[(top + index / partColumns) * columns + left + index % partColumns] = 0
                }
            }
            return (
                free,
                CodeLocalizer.components(rest, columns: columns, rows: rows, bounds: box, cell: cellSize, minCells: 1)
            )
        }
    }

    /// Code-like regions inside `area` (default: the whole image), in frame coordinates: those of
    /// the fine pass, then those of the coarse pass that the fine pass did not find.
    public func locate(_ image: GrayImage, in area: Box? = nil) -> [Region] {
        let bounds = area ?? image.bounds
        // A noisy sensor makes strong changes between neighbours everywhere: the threshold rises
        // with the frame's noise, so that noise never counts as edges (a code's edges are far
        // stronger).
        var adapted = self
        adapted.contrast = max(contrast, 3 * Self.typicalChange(image, in: bounds))
        return adapted.locateBothScales(image, in: bounds)
    }

    /// The median change between pixels two apart along every 16th row of the area: on a belt
    /// (mostly flat) it is the sensor's noise.
    static func typicalChange(_ image: GrayImage, in bounds: Box) -> Int {
        var histogram = [Int](repeating: 0, count: 256)
        var count = 0
        image.pixels.withUnsafeBufferPointer { pixels in
            var y = bounds.minY + 8
            while y <= bounds.maxY {
                let base = y * image.width
                var x = bounds.minX + 1
                while x < bounds.maxX {
                    histogram[abs(Int(pixels[base + x + 1]) - Int(pixels[base + x - 1]))] += 1
                    count += 1
                    x += 2
                }
                y += 16
            }
        }
        var seen = 0
        for (change, n) in histogram.enumerated() {
            seen += n
            if seen * 2 >= count { return change }
        }
        return 0
    }

    private func locateBothScales(_ image: GrayImage, in bounds: Box) -> [Region] {
        let fine = locateOneScale(image, in: bounds)
        var regions = fine
        let factor = coarseFactor
        guard factor > 1, bounds.width >= factor * cell, bounds.height >= factor * cell else { return regions }
        // Every factor-th pixel of every factor-th row of the area.
        let width = bounds.width / factor
        let height = bounds.height / factor
        var pixels = [UInt8](repeating: 0, count: width * height)
        image.pixels.withUnsafeBufferPointer { source in
            for row in 0..<height {
                let from = (bounds.minY + row * factor) * image.width + bounds.minX
                for column in 0..<width { pixels[row * width + column] = source[from + column * factor] }
            }
        }
        var coarse = self
        coarse.lineStep = max(1, lineStep / 2)
        for found in coarse.locateOneScale(GrayImage(width: width, height: height, pixels: pixels), in: nil) {
            let box = Box(
                minX: bounds.minX + found.box.minX * factor, minY: bounds.minY + found.box.minY * factor,
                maxX: min(bounds.maxX, bounds.minX + (found.box.maxX + 1) * factor - 1),
                maxY: min(bounds.maxY, bounds.minY + (found.box.maxY + 1) * factor - 1))
            // Where the fine pass found anything, its regions stand (coarse sampling of small
            // bars aliases into large false regions around them).
            guard !fine.contains(where: { $0.box.intersects(box) }) else { continue }
            regions.append(
                Region(
                    box: box, rowCells: found.rowCells, columnCells: found.columnCells, cells: found.cells,
                    marks: found.marks, cellSize: found.cellSize * factor))
        }
        return regions
    }

    private func locateOneScale(_ image: GrayImage, in area: Box?) -> [Region] {
        let bounds = area ?? image.bounds
        guard bounds.width > 4, bounds.height > 4 else { return [] }
        let columns = (bounds.width + cell - 1) / cell
        let rows = (bounds.height + cell - 1) / cell
        var acrossRows = [Int32](repeating: 0, count: columns * rows)
        var downColumns = [Int32](repeating: 0, count: columns * rows)
        let width = image.width
        let threshold = Int32(contrast)
        image.pixels.withUnsafeBufferPointer { image in
            acrossRows.withUnsafeMutableBufferPointer { acrossRows in
                downColumns.withUnsafeMutableBufferPointer { downColumns in
                    guard let pixels = image.baseAddress, let across = acrossRows.baseAddress,
                        let down = downColumns.baseAddress
                    else { return }
                    let sampling = Sampling(
                        pixels: pixels, width: width, bounds: bounds, cell: cell, lineStep: lineStep,
                        threshold: threshold, columns: columns)
                    Self.countAlongRows(sampling, into: across)
                    Self.countDownColumns(sampling, into: down)
                }
            }
        }
        // A cell is code-like when its sampled lines average `edgesPerLine` edges per cell width.
        // Cells cut by the area's edge hold fewer and shorter lines, and need fewer edges.
        var marks = [UInt8](repeating: 0, count: columns * rows)
        let full = Double(edgesPerLine) * Double(cell / lineStep)
        for row in 0..<rows {
            let height = min(cell, bounds.height - row * cell)
            for column in 0..<columns {
                let width = min(cell, bounds.width - column * cell)
                let needed = Int32((full * Double(width) / Double(cell) * Double(height) / Double(cell)).rounded(.up))
                let index = row * columns + column
                if acrossRows[index] >= max(needed, 2) { marks[index] |= 1 }
                if downColumns[index] >= max(needed, 2) { marks[index] |= 2 }
            }
        }
        return Self.components(marks, columns: columns, rows: rows, bounds: bounds, cell: cell, minCells: minCells)
    }

    /// What the edge counts walk: a frame's pixels (`width` a row), the area, its cells (`cell`
    /// pixels square, `columns` a row) and every `lineStep`-th line from `lineStep / 2`, and the
    /// smallest change between pixels two apart that is strong.
    struct Sampling {
        var pixels: UnsafePointer<UInt8>
        var width: Int
        var bounds: Box
        var cell: Int
        var lineStep: Int
        var threshold: Int32
        var columns: Int

        /// The threshold as a 16-bit change: beyond ±256 it counts every change or none, as it
        /// does at ±256.
        var strong: Int16 { Int16(min(max(threshold, -256), 256)) }
    }

    /// Edges along the sampled rows, added to each cell's count in `across`. Each row in two
    /// steps: the sign of every change (-1, 0 or 1), a loop the compiler turns into vector
    /// instructions; then the edges among the signs (`edges(among:)`).
    static func countAlongRows(_ sampling: Sampling, into across: UnsafeMutablePointer<Int32>) {
        let bounds = sampling.bounds
        // Changes at x = minX + 1 ..< maxX (pixels x - 1 and x + 1 inside the area).
        let span = bounds.maxX - bounds.minX - 1
        guard span > 0 else { return }
        let strong = sampling.strong
        let signs = UnsafeMutablePointer<Int8>.allocate(capacity: span)
        defer { signs.deallocate() }
        signs.initialize(repeating: 0, count: span)
        var y = bounds.minY + sampling.lineStep / 2
        while y <= bounds.maxY {
            let left = sampling.pixels + y * sampling.width + bounds.minX
            let right = left + 2
            for index in 0..<span {
                let change = Int16(right[index]) &- Int16(left[index])
                signs[index] = change >= strong ? 1 : (change <= -strong ? -1 : 0)
            }
            edges(
                among: UnsafeBufferPointer(start: signs, count: span), cell: sampling.cell,
                into: across + (y - bounds.minY) / sampling.cell * sampling.columns)
            y += sampling.lineStep
        }
    }

    /// The edges among one line's signs (of the changes from the area's second pixel on), added to
    /// its cells' counts: a sign that differs from the last non-zero one, carried from cell to cell.
    /// Eight signs at a time are passed over where all are 0 (a flat belt, a box's side: most of
    /// a frame).
    static func edges(among signs: UnsafeBufferPointer<Int8>, cell: Int, into cells: UnsafeMutablePointer<Int32>) {
        guard let raw = UnsafeRawPointer(signs.baseAddress) else { return }
        var last: Int8 = 0
        var index = 0
        var column = 0
        while index < signs.count {
            // The cell's changes: the first lies at its second pixel in cell 0, its first after.
            let end = min(signs.count, (column + 1) * cell - 1)
            var count: Int32 = 0
            while index < end {
                if end - index >= 8 && raw.loadUnaligned(fromByteOffset: index, as: UInt64.self) == 0 {
                    index += 8
                    continue
                }
                let sign = signs[index]
                count &+= sign != 0 && sign != last ? 1 : 0
                last = sign == 0 ? last : sign
                index += 1
            }
            cells[column] &+= count
            column += 1
        }
    }

    /// Edges down the sampled columns, added to each cell's count in `down`. One band of a cell's rows at a time
    /// (the band stays in the cache), row by row across every column from the first sampled one to
    /// the last, each with the sign of its last strong change: a loop the compiler turns into
    /// vector instructions, many neighbouring columns at once. The columns between the sampled
    /// ones are counted too and dropped, which costs less than picking the sampled ones out. The
    /// same counts as `countDownColumnsOneByOne`, which takes cells a byte cannot count.
    static func countDownColumns(_ sampling: Sampling, into down: UnsafeMutablePointer<Int32>) {
        let (pixels, width, bounds, cell) = (sampling.pixels, sampling.width, sampling.bounds, sampling.cell)
        let (lineStep, columns) = (sampling.lineStep, sampling.columns)
        let first = bounds.minX + lineStep / 2
        guard first <= bounds.maxX else { return }
        guard cell <= 255 else { return countDownColumnsOneByOne(sampling, into: down) }
        let sampled = (bounds.maxX - first) / lineStep + 1
        let span = (sampled - 1) * lineStep + 1
        let strong = sampling.strong
        // Per column of the span: whether its last strong change rose (lighter below) or fell
        // (1 or 0), and its edges in the band. Two bits rather than one signed last change, as
        // `edge` keeps: the compiler vectorises these ands and ors, not that form's selects (the
        // localiser at 4K took 8.7 ms with it, 2.7 with these).
        let state = UnsafeMutablePointer<UInt8>.allocate(capacity: 3 * span)
        defer { state.deallocate() }
        state.initialize(repeating: 0, count: 3 * span)
        let rose = state
        let fell = state + span
        let count = state + 2 * span
        var bandTop = bounds.minY + 1
        while bandTop < bounds.maxY {
            let cellRow = down + (bandTop - bounds.minY) / cell * columns
            let bandEnd = min(bounds.maxY, bounds.minY + ((bandTop - bounds.minY) / cell + 1) * cell)
            count.update(repeating: 0, count: span)
            for y in bandTop..<bandEnd {
                let above = pixels + (y - 1) * width + first
                let below = above + 2 * width
                for column in 0..<span {
                    let change = Int16(below[column]) &- Int16(above[column])
                    let rising: UInt8 = change >= strong ? 1 : 0
                    let falling: UInt8 = change <= -strong ? rising ^ 1 : 0
                    let up = rose[column]
                    let upDown = fell[column]
                    count[column] &+= (rising & (up ^ 1)) | (falling & (upDown ^ 1))
                    rose[column] = rising | (up & (falling ^ 1))
                    fell[column] = falling | (upDown & (rising ^ 1))
                }
            }
            for index in 0..<sampled {
                let offset = index * lineStep
                cellRow[(first + offset - bounds.minX) / cell] &+= Int32(count[offset])
            }
            bandTop = bandEnd
        }
    }

    /// `countDownColumns` one sampled column at a time, each column down the band with its state
    /// in registers.
    static func countDownColumnsOneByOne(_ sampling: Sampling, into down: UnsafeMutablePointer<Int32>) {
        let (pixels, width, bounds, cell) = (sampling.pixels, sampling.width, sampling.bounds, sampling.cell)
        let (lineStep, threshold, columns) = (sampling.lineStep, sampling.threshold, sampling.columns)
        let first = bounds.minX + lineStep / 2
        guard first <= bounds.maxX else { return }
        let sampled = (bounds.maxX - first) / lineStep + 1
        var lastSigns = [Int32](repeating: 0, count: sampled)
        lastSigns.withUnsafeMutableBufferPointer { lastSigns in
            var bandTop = bounds.minY + 1
            while bandTop < bounds.maxY {
                let cellRow = down + (bandTop - bounds.minY) / cell * columns
                let bandEnd = min(bounds.maxY, bounds.minY + ((bandTop - bounds.minY) / cell + 1) * cell)
                for index in 0..<sampled {
                    let x = first + index * lineStep
                    var last = lastSigns[index]
                    var count: Int32 = 0
                    var above = pixels + (bandTop - 1) * width + x
                    for _ in bandTop..<bandEnd {
                        count &+= edge(Int32(above[2 * width]) &- Int32(above[0]), threshold: threshold, after: &last)
                        above += width
                    }
                    lastSigns[index] = last
                    cellRow[(x - bounds.minX) / cell] &+= count
                }
                bandTop = bandEnd
            }
        }
    }

    /// One edge: a strong change whose sign differs from the line's last strong change. Written
    /// as selects, not branches (on a textured belt a branch here is mispredicted half the time).
    @inline(__always)
    static func edge(_ change: Int32, threshold: Int32, after last: inout Int32) -> Int32 {
        let sign: Int32 = change >= threshold ? 1 : (change <= -threshold ? -1 : 0)
        let counted: Int32 = sign != 0 && sign != last ? 1 : 0
        last = sign == 0 ? last : sign
        return counted
    }

    /// Joins marked cells (`cell` pixels square, from `bounds`' corner) that touch
    /// (8-neighbourhood) into regions of at least `minCells` cells.
    static func components(
        _ marks: [UInt8], columns: Int, rows: Int, bounds: Box, cell: Int, minCells: Int
    ) -> [Region] {
        var seen = [Bool](repeating: false, count: marks.count)
        var regions: [Region] = []
        var stack: [Int] = []
        var members: [Int] = []
        for start in marks.indices where marks[start] != 0 && !seen[start] {
            seen[start] = true
            stack.append(start)
            members.removeAll(keepingCapacity: true)
            var minColumn = Int.max
            var maxColumn = Int.min
            var minRow = Int.max
            var maxRow = Int.min
            var region = Region(box: Box(minX: 0, minY: 0, maxX: 0, maxY: 0), rowCells: 0, columnCells: 0, cells: 0)
            while let index = stack.popLast() {
                members.append(index)
                let column = index % columns
                let row = index / columns
                minColumn = min(minColumn, column)
                maxColumn = max(maxColumn, column)
                minRow = min(minRow, row)
                maxRow = max(maxRow, row)
                region.cells += 1
                if marks[index] & 1 != 0 { region.rowCells += 1 }
                if marks[index] & 2 != 0 { region.columnCells += 1 }
                for dy in -1...1 {
                    for dx in -1...1 where dx != 0 || dy != 0 {
                        let c = column + dx
                        let r = row + dy
                        guard c >= 0, c < columns, r >= 0, r < rows else { continue }
                        let neighbour = r * columns + c
                        if marks[neighbour] != 0 && !seen[neighbour] {
                            seen[neighbour] = true
                            stack.append(neighbour)
                        }
                    }
                }
            }
            guard region.cells >= minCells else { continue }
            region.box = Box(
                minX: bounds.minX + minColumn * cell, minY: bounds.minY + minRow * cell,
                maxX: min(bounds.maxX, bounds.minX + (maxColumn + 1) * cell - 1),
                maxY: min(bounds.maxY, bounds.minY + (maxRow + 1) * cell - 1))
            let width = maxColumn - minColumn + 1
            region.marks = [UInt8](repeating: 0, count: width * (maxRow - minRow + 1))
            for index in members {
                region.marks[(index / columns - minRow) * width + index % columns - minColumn] = marks[index]
            }
            region.cellSize = cell
            regions.append(region)
        }
        return regions
    }
}
