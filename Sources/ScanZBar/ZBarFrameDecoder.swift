import ScanCore

/// A camera's decoder: its own zbar scanner set up from the agent's `decoder` config, and the
/// region of interest cut out of each frame before scanning.
public final class ZBarFrameDecoder {
    public let config: DecoderConfig
    private let scanner: ZBarScanner
    private let splitter: DetectionSplitter
    private var crop: [UInt8] = []
    /// Split parts that a rescan of their own region did not confirm (zbar phantoms).
    public private(set) var rejectedParts = 0
    /// Rescans made to check parts.
    public private(set) var rescans = 0
    /// Codes a rescan read in the last few frames, where the rescan found them: a part of the same
    /// value right there is the same code moved on, and needs no rescan of its own. Only rescans
    /// add entries, so an accepted part never vouches for the next one.
    private var recentlyConfirmed: [(value: [UInt8], box: Box, frame: Int)] = []
    private var frameCount = 0

    /// `testInverted`: also read light codes on a dark ground (still images; costs a second pass).
    public init(config: DecoderConfig, testInverted: Bool = false) throws(ZBarError) {
        self.config = config
        let settings = ZBarSettings(symbologies: Set(config.symbologies), density: config.density, testInverted: testInverted)
        self.scanner = try ZBarScanner(settings: settings)
        self.splitter = DetectionSplitter(density: config.density)
    }

    /// Whether zbar decodes the symbology (zbar 0.23 lists PDF417 but cannot decode it).
    public static func reads(_ symbology: Symbology) -> Bool {
        symbology != .pdf417 && symbology != .sqCode && ZBarSymbologyMap.zbarType(symbology) != nil
    }

    /// Every physical symbol in the frame's region of interest, in frame coordinates: zbar's merged
    /// symbols are split into one detection per code, and EAN/UPC parts are verified.
    public func decode(_ frame: GrayImage) throws(ZBarError) -> [Detection] {
        let raw: [Detection]
        let region = config.regionOfInterest
        if region.isWholeFrame {
            raw = try scanner.scan(frame)
        } else {
            let box = region.pixels(width: frame.width, height: frame.height)
            raw = try scanner.scan(cut(frame, box), origin: Point(x: box.minX, y: box.minY))
        }
        var result: [Detection] = []
        result.reserveCapacity(raw.count)
        frameCount += 1
        recentlyConfirmed.removeAll { frameCount - $0.frame > 3 }
        for detection in Self.mergeSameValue(raw) {
            let parts = splitter.split(detection)
            guard Self.phantomProne(detection.symbology) else {
                result += parts
                continue
            }
            for part in parts {
                // The geometry decides where it shows both halves; otherwise the part's own region
                // is rescanned (zbar also carries half-codes across the end of a scan line, joining
                // a label at one edge of the frame with one at the other).
                if let extent = splitter.eanExtent(part) {
                    let trimmed = DetectionSplitter.trim(part, low: extent.low, high: extent.high)
                    if extent.fits {
                        result.append(trimmed)
                    } else {
                        rejectedParts += 1
                    }
                } else if try confirms(part, in: frame) {
                    result.append(part)
                } else {
                    rejectedParts += 1
                }
            }
        }
        return Self.attachAddOns(result)
    }

    /// zbar reports an EAN-2/EAN-5 supplement as a symbol of its own: it belongs to the EAN/UPC
    /// code just left of it on the same scan lines, as that code's `addOn`. A supplement alone is
    /// not a code and is dropped.
    static func attachAddOns(_ detections: [Detection]) -> [Detection] {
        let addOns = detections.indices.filter { detections[$0].symbology == .ean2 || detections[$0].symbology == .ean5 }
        guard !addOns.isEmpty else { return detections }
        var result = detections
        for index in addOns {
            guard let addOnBox = detections[index].box else { continue }
            let owner = detections.indices.filter { candidate in
                guard Self.phantomProne(detections[candidate].symbology), let box = detections[candidate].box else { return false }
                // zbar places the supplement's points at its far end: up to a separator and an
                // EAN-5 (9 + 47 modules against the main code's 95) past the main code.
                let rowsOverlap = min(box.maxY, addOnBox.maxY) >= max(box.minY, addOnBox.minY)
                return rowsOverlap && addOnBox.minX >= box.maxX - 4 && addOnBox.maxX - box.maxX <= box.width * 3 / 4
            }.min { (detections[$0].box?.maxX ?? 0) > (detections[$1].box?.maxX ?? 0) }
            if let owner { result[owner].addOn = String(decoding: detections[index].value, as: UTF8.self) }
        }
        return result.enumerated().filter { !addOns.contains($0.offset) }.map(\.element)
    }

    /// zbar sometimes reports one code as several symbols of the same value in one image (and
    /// sometimes several codes as one). Pooling the points per value lets the splitter decide.
    static func mergeSameValue(_ raw: [Detection]) -> [Detection] {
        guard raw.count > 1 else { return raw }
        var merged: [Detection] = []
        for detection in raw {
            if detection.symbology.isLinear,
                let index = merged.firstIndex(where: { $0.symbology == detection.symbology && $0.value == detection.value })
            {
                merged[index].points += detection.points
            } else {
                merged.append(detection)
            }
        }
        return merged
    }

    /// zbar decodes EAN/UPC halves separately and can join the halves of two different labels
    /// into a checksum-valid code that is in no label.
    static func phantomProne(_ symbology: Symbology) -> Bool {
        switch symbology {
        case .ean13, .ean8, .upcA, .upcE, .isbn10, .isbn13: true
        default: false
        }
    }

    /// Rescans run at density 1.
    static let verifierSplitter = DetectionSplitter(density: 1)

    /// Rescans the part's neighbourhood; true when the same value is read there.
    private func confirms(_ part: Detection, in frame: GrayImage) throws(ZBarError) -> Bool {
        guard let box = part.box else { return false }
        let near = Box(minX: box.minX - 32, minY: box.minY - 32, maxX: box.maxX + 32, maxY: box.maxY + 32)
        if recentlyConfirmed.contains(where: { $0.value == part.value && $0.box.intersectionOverUnion(near) > 0 }) {
            return true
        }
        rescans += 1
        // A read at one end of a code shows a thin column: look far enough along the scan lines
        // to hold the whole code (codes are rarely more than five times as wide as tall).
        let horizontal = DetectionSplitter.scansHorizontally(part.points)
        let along = max((horizontal ? box.width : box.height) / 3 + 16, 5 * (horizontal ? box.height : box.width) / 2)
        let marginX = horizontal ? along : 8
        let marginY = horizontal ? 8 : along
        let region = Box(
            minX: max(0, box.minX - marginX), minY: max(0, box.minY - marginY),
            maxX: min(frame.width - 1, box.maxX + marginX), maxY: min(frame.height - 1, box.maxY + marginY))
        // Only the symbology in question: cheaper to set up and to run.
        let found = try ZBarScanner(settings: ZBarSettings(symbologies: [part.symbology], density: 1)).scan(
            cut(frame, region), origin: Point(x: region.minX, y: region.minY))
        // The same value, read where the part is, with halves that fit: a rescan of two labels
        // could rebuild the same phantom.
        let match = found.first { symbol in
            guard symbol.symbology == part.symbology, symbol.value == part.value, let symbolBox = symbol.box else { return false }
            return symbolBox.intersectionOverUnion(box) > 0 && Self.verifierSplitter.eanHalvesFit(symbol) != false
        }
        guard let match, let matchBox = match.box else { return false }
        // Only a read whose halves were seen to fit vouches for the next frames.
        if Self.verifierSplitter.eanHalvesFit(match) == true { recentlyConfirmed.append((part.value, matchBox, frameCount)) }
        return true
    }

    private func cut(_ frame: GrayImage, _ box: Box) -> GrayImage {
        let width = box.width
        crop.removeAll(keepingCapacity: true)
        crop.reserveCapacity(width * box.height)
        frame.pixels.withUnsafeBufferPointer { pixels in
            for row in box.minY...box.maxY {
                let start = row * frame.width + box.minX
                crop.append(contentsOf: pixels[start..<start + width])
            }
        }
        return GrayImage(width: width, height: box.height, pixels: crop)
    }
}
