import ScanCore

/// A camera's decoder: its own zbar scanner set up from the agent's `decoder` config, and the
/// region of interest cut out of each frame before scanning.
public final class ZBarFrameDecoder {
    public let config: DecoderConfig
    private let scanner: ZBarScanner
    /// A second scanner for verification rescans, so the main scanner's state is not disturbed.
    private let verifier: ZBarScanner
    private let splitter: DetectionSplitter
    private var crop: [UInt8] = []
    /// Split parts that a rescan of their own region did not confirm (zbar phantoms).
    public private(set) var rejectedParts = 0

    public init(config: DecoderConfig) throws(ZBarError) {
        self.config = config
        let settings = ZBarSettings(symbologies: Set(config.symbologies), density: config.density)
        self.scanner = try ZBarScanner(settings: settings)
        self.verifier = try ZBarScanner(settings: ZBarSettings(symbologies: Set(config.symbologies), density: 1))
        self.splitter = DetectionSplitter(density: config.density)
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
        for detection in raw {
            let parts = splitter.split(detection)
            guard parts.count > 1, Self.phantomProne(detection.symbology) else {
                result += parts
                continue
            }
            for part in parts {
                if try confirms(part, in: frame) { result.append(part) } else { rejectedParts += 1 }
            }
        }
        return result
    }

    /// zbar decodes EAN/UPC halves separately and can join the halves of two different labels
    /// into a checksum-valid code that is in no label. Their merged points then lie in several
    /// places, so a split EAN/UPC symbol gets each part rescanned on its own.
    static func phantomProne(_ symbology: Symbology) -> Bool {
        switch symbology {
        case .ean13, .ean8, .upcA, .upcE, .isbn10, .isbn13: true
        default: false
        }
    }

    /// Rescans the part's neighbourhood; true when the same value is read there.
    private func confirms(_ part: Detection, in frame: GrayImage) throws(ZBarError) -> Bool {
        guard let box = part.box else { return false }
        let marginX = box.width / 3 + 16
        let marginY = 8
        let region = Box(
            minX: max(0, box.minX - marginX), minY: max(0, box.minY - marginY),
            maxX: min(frame.width - 1, box.maxX + marginX), maxY: min(frame.height - 1, box.maxY + marginY))
        let found = try verifier.scan(cut(frame, region))
        return found.contains { $0.symbology == part.symbology && $0.value == part.value }
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
