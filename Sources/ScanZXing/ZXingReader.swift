internal import CZXing
import ScanCore
import ScanVision

/// A zxing-cpp call that failed, naming the function and the input.
public struct ZXingError: Error, Sendable, Equatable, CustomStringConvertible {
    public var function: String
    public var input: String
    public var message: String

    public var description: String { "\(function) failed for \(input): \(message)" }
}

/// What a reader looks for, and how hard.
public struct ZXingSettings: Sendable, Equatable {
    /// Symbologies to read; nil: every symbology zxing-cpp reads.
    public var symbologies: Set<Symbology>?
    /// zxing-cpp's thorough mode. Keep it on and narrow `symbologies` instead: with it off,
    /// DataMatrix reads collapse.
    public var tryHarder = true
    /// Also try the image rotated by 90° (linear codes) and inverted (light on dark).
    public var tryRotate = true
    public var tryInvert = true
    public var tryDownscale = true
    /// Stop after this many symbols in one image (0: no limit).
    public var maxSymbols = 0
    /// How grey becomes black and white: zxing-cpp's local average by default; a fixed threshold
    /// reads some low-contrast or unevenly lit codes the local one breaks up.
    public var binarizer = Binarizer.localAverage
    /// The image holds one symbol alone, upright and square to its rows (zxing-cpp's "pure"
    /// mode: the only way it reads MaxiCode, `MaxiCodeSampler` draws one so).
    public var isPure = false
    /// EAN/UPC reads on this many scan lines or fewer, and two reads of different values on one
    /// code, are read again on their place enlarged twice, which decides them
    /// (`ZXingReader.checkedRetail`); 0: taken as zxing-cpp gives them.
    public var weakRetailLines = 0

    public enum Binarizer: Sendable, Equatable {
        case localAverage, globalHistogram, fixedThreshold
    }

    public init(symbologies: Set<Symbology>? = nil) { self.symbologies = symbologies }

    /// The symbologies this engine is used for on a conveyor: what zbar cannot read.
    public static let matrixOnly = ZXingSettings(symbologies: [.dataMatrix, .pdf417])

    /// For a region the agent chose: the image as it is, neither turned, inverted nor downscaled
    /// (the plan already says which way its lines run and how large its codes are).
    public static func asPlanned(_ symbologies: Set<Symbology>, tryHarder: Bool = true) -> ZXingSettings {
        var settings = ZXingSettings(symbologies: symbologies)
        settings.tryHarder = tryHarder
        settings.tryRotate = false
        settings.tryInvert = false
        settings.tryDownscale = false
        return settings
    }
}

/// Owns one `ZXing_ReaderOptions`. zxing-cpp keeps no state between images, but the options
/// object is not documented as thread-safe, so a reader is used from one thread at a time.
public final class ZXingReader {
    private let options: OpaquePointer
    public let settings: ZXingSettings

    public init(settings: ZXingSettings = ZXingSettings()) throws(ZXingError) {
        // Checked before the options exist: a throwing initializer of a fully initialised class
        // still runs deinit, which would free them a second time.
        let formats = settings.symbologies.map {
            $0.sorted { $0.rawValue < $1.rawValue }.flatMap { ZXingFormats.formats(for: $0) }
        }
        if let formats, formats.isEmpty {
            throw ZXingError(
                function: "ZXing_ReaderOptions_setFormats",
                input: (settings.symbologies ?? []).map(\.rawValue).sorted().joined(separator: ", "),
                message: "zxing-cpp reads none of these symbologies")
        }
        guard let options = ZXing_ReaderOptions_new() else {
            throw ZXingError(function: "ZXing_ReaderOptions_new", input: "reader options", message: Self.lastError())
        }
        self.options = options
        self.settings = settings
        ZXing_ReaderOptions_setTryHarder(options, settings.tryHarder)
        ZXing_ReaderOptions_setTryRotate(options, settings.tryRotate)
        ZXing_ReaderOptions_setTryInvert(options, settings.tryInvert)
        ZXing_ReaderOptions_setTryDownscale(options, settings.tryDownscale)
        ZXing_ReaderOptions_setMaxNumberOfSymbols(options, Int32(settings.maxSymbols))
        ZXing_ReaderOptions_setIsPure(options, settings.isPure)
        switch settings.binarizer {
        case .localAverage: ZXing_ReaderOptions_setBinarizer(options, ZXing_Binarizer_LocalAverage)
        case .globalHistogram: ZXing_ReaderOptions_setBinarizer(options, ZXing_Binarizer_GlobalHistogram)
        case .fixedThreshold: ZXing_ReaderOptions_setBinarizer(options, ZXing_Binarizer_FixedThreshold)
        }
        // The bytes as the code holds them, GS1 separators as GS (0x1D), as zbar reports them;
        // `text(of:bytes:)` takes the text where a character set makes it differ.
        ZXing_ReaderOptions_setTextMode(options, ZXing_TextMode_Plain)
        ZXing_ReaderOptions_setEanAddOnSymbol(options, ZXing_EanAddOnSymbol_Read)
        if let formats {
            formats.withUnsafeBufferPointer { ZXing_ReaderOptions_setFormats(options, $0.baseAddress, Int32($0.count)) }
        }
    }

    deinit { ZXing_ReaderOptions_delete(options) }

    /// Whether zxing-cpp reads the symbology.
    public static func reads(_ symbology: Symbology) -> Bool { !ZXingFormats.formats(for: symbology).isEmpty }

    /// Every symbol zxing-cpp finds in the image, as detections in image coordinates plus `origin`.
    /// `input` names the image in errors (a file, a camera's frame).
    public func read(_ image: GrayImage, origin: Point = Point(x: 0, y: 0), input: String = "a frame")
        throws(ZXingError) -> [Detection]
    {
        let detections = try decoded(image, origin: origin, input: input)
        guard settings.weakRetailLines > 0 else { return detections }
        return try checkedRetail(detections, in: image, origin: origin, input: input)
    }

    /// zxing-cpp's symbols in the image, as it gives them.
    private func decoded(_ image: GrayImage, origin: Point, input: String) throws(ZXingError) -> [Detection] {
        guard image.width > 0, image.height > 0 else {
            throw ZXingError(
                function: "ZXing_ImageView_new", input: input, message: "the image is \(image.width)x\(image.height)")
        }
        let outcome: Result<[Detection], ZXingError> = image.pixels.withUnsafeBufferPointer { pixels in
            guard
                let view = ZXing_ImageView_new_checked(
                    pixels.baseAddress, Int32(pixels.count), Int32(image.width), Int32(image.height),
                    ZXing_ImageFormat_Lum,
                    Int32(image.width), 1)
            else {
                return .failure(
                    ZXingError(function: "ZXing_ImageView_new_checked", input: input, message: Self.lastError()))
            }
            defer { ZXing_ImageView_delete(view) }
            guard let barcodes = ZXing_ReadBarcodes(view, options) else {
                return .failure(ZXingError(function: "ZXing_ReadBarcodes", input: input, message: Self.lastError()))
            }
            defer { ZXing_Barcodes_delete(barcodes) }
            var detections: [Detection] = []
            for index in 0..<ZXing_Barcodes_size(barcodes) {
                guard let barcode = ZXing_Barcodes_at(barcodes, index), ZXing_Barcode_isValid(barcode),
                    let detection = Self.detection(barcode, origin: origin)
                else { continue }
                detections.append(detection)
            }
            return .success(detections)
        }
        return try outcome.get()
    }

    /// EAN/UPC has one check digit, so zxing-cpp's reading of a blurred or curved retail code on
    /// its minimum of two scan lines is now and then a valid wrong value; on the shared corpus's
    /// retail images 4 of zxing-cpp's 117 reads (tryHarder, rotations) were, all on at most 4
    /// lines, one of them beside the right value of the same code. Each such read (lines at most
    /// `weakRetailLines`, or another retail value within its place) is read again on its place
    /// enlarged twice, where the bars are wide enough for many lines to agree: a read there of its value confirms it; a different value read on
    /// more than twice its lines (the view has twice the rows) replaces it; else it stays as it
    /// was, unless another value was read on that code (then neither is sure: it is dropped).
    /// Wrong values gone on the corpus: 4, each replaced by the printed value; right ones lost: 0.
    private func checkedRetail(_ detections: [Detection], in image: GrayImage, origin: Point, input: String)
        throws(ZXingError) -> [Detection]
    {
        func place(_ detection: Detection) -> Box? {
            guard let box = detection.box else { return nil }
            let length = max(box.width, box.height)
            return box.widened(x: length / 4, y: length / 2)
        }
        var result: [Detection] = []
        for detection in detections {
            guard detection.symbology.isRetail, let area = place(detection) else {
                result.append(detection)
                continue
            }
            let rivalled = detections.contains { other in
                other.symbology.isRetail && other.value != detection.value
                    && (other.box.map(area.intersects) ?? false)
            }
            guard rivalled || (detection.lines ?? 0) <= settings.weakRetailLines else {
                result.append(detection)
                continue
            }
            guard let crop = area.offset(dx: -origin.x, dy: -origin.y).clamped(to: image.bounds) else {
                if !rivalled { result.append(detection) }
                continue
            }
            let enlarged = try decoded(image.cropped(to: crop).doubled(), origin: Point(x: 0, y: 0), input: input)
            let again = enlarged.filter { $0.symbology.isRetail }
            if again.contains(where: { $0.value == detection.value }) {
                result.append(detection)
            } else if let better = again.max(by: { ($0.lines ?? 0) < ($1.lines ?? 0) }),
                (better.lines ?? 0) > 2 * (detection.lines ?? 0)
            {
                var taken = better
                taken.points = better.points.map {
                    Point(x: $0.x / 2 + crop.minX + origin.x, y: $0.y / 2 + crop.minY + origin.y)
                }
                result.append(taken)
            } else if !rivalled {
                result.append(detection)
            }
        }
        // A read replaced by the value of another read of the same code is that read.
        var kept: [Detection] = []
        for detection in result where !kept.contains(where: { $0.isSameCode(as: detection) }) {
            kept.append(detection)
        }
        return kept
    }

    private static func detection(_ barcode: OpaquePointer, origin: Point) -> Detection? {
        guard let symbology = ZXingFormats.symbology(of: ZXing_Barcode_format(barcode)) else { return nil }
        var length: Int32 = 0
        guard let raw = ZXing_Barcode_bytes(barcode, &length) else { return nil }
        defer { ZXing_free(raw) }
        var value = Array(UnsafeBufferPointer(start: raw, count: Int(max(length, 0))))
        if let text = Self.text(of: barcode, bytes: value) { value = text }
        let position = ZXing_Barcode_position(barcode)
        let points = [position.topLeft, position.topRight, position.bottomRight, position.bottomLeft].map {
            Point(x: Int($0.x) + origin.x, y: Int($0.y) + origin.y)
        }
        let (main, addOn) = splitAddOn(value, symbology: symbology)
        var detection = Detection(
            symbology: symbology, value: main, points: points,
            isGS1: ZXing_Barcode_contentType(barcode) == ZXing_ContentType_GS1, addOn: addOn,
            engine: "zxing")
        let lines = Int(ZXing_Barcode_lineCount(barcode))
        if lines > 0 { detection.lines = lines }
        return detection
    }

    /// The text a code's bytes stand for, in UTF-8, when that differs from the bytes: a QR Code in
    /// Shift_JIS, a Code 128 with Latin-1 characters (FNC4), a DataMatrix with ECIs. zxing-cpp
    /// reads the character set from the code's ECIs or, without one, tells it from the bytes (its
    /// plain text mode). zbar too gives a QR Code's text in UTF-8, by a guess of its own that for
    /// some Shift_JIS codes differs from zxing-cpp's (then the two readings are two values). Binary content (and text in a character set zxing-cpp does not know) keeps its bytes: what
    /// is not text is not made text.
    static func text(of barcode: OpaquePointer, bytes: [UInt8]) -> [UInt8]? {
        guard bytes.contains(where: { $0 >= 0x80 }), ZXing_Barcode_contentType(barcode) == ZXing_ContentType_Text,
            let text = ZXing_Barcode_text(barcode)
        else { return nil }
        defer { ZXing_free(text) }
        return Array(String(cString: text).utf8)
    }

    /// zxing-cpp appends an EAN/UPC add-on's digits to the main code's: the main code and the 2
    /// or 5 digits after it, apart. The main code is 13 digits for EAN-13, 8 for EAN-8, 12 for
    /// UPC-A and 8 for UPC-E, or 13 for either UPC when zxing-cpp expanded it; its check digit
    /// must hold.
    static func splitAddOn(_ value: [UInt8], symbology: Symbology) -> (value: [UInt8], addOn: String?) {
        let bases: [Int]
        switch symbology {
        case .ean13, .isbn13: bases = [13]
        case .upcA: bases = [12, 13]
        case .ean8: bases = [8]
        case .upcE: bases = [8, 13]
        default: return (value, nil)
        }
        guard value.allSatisfy({ (0x30...0x39).contains($0) }) else { return (value, nil) }
        for base in bases where value.count == base + 2 || value.count == base + 5 {
            let main = Array(value.prefix(base))
            let checkable = base == 8 && symbology == .upcE ? CodeNormalizer.expandUPCE(main) ?? main : main
            guard Symbology.hasValidGS1CheckDigit(checkable) else { continue }
            return (main, String(decoding: value.dropFirst(base), as: UTF8.self))
        }
        return (value, nil)
    }

    static func lastError() -> String {
        guard let message = ZXing_LastErrorMsg() else { return "no message" }
        defer { ZXing_free(message) }
        let text = String(cString: message)
        return text.isEmpty ? "no message" : text
    }
}

/// Between ScanTrack's symbology names (the event contract) and zxing-cpp's formats.
enum ZXingFormats {
    static func formats(for symbology: Symbology) -> [ZXing_BarcodeFormat] {
        switch symbology {
        case .ean13, .isbn13: [ZXing_BarcodeFormat_EAN13]
        case .ean8: [ZXing_BarcodeFormat_EAN8]
        case .upcA: [ZXing_BarcodeFormat_UPCA]
        case .upcE: [ZXing_BarcodeFormat_UPCE]
        case .code128: [ZXing_BarcodeFormat_Code128]
        case .code39: [ZXing_BarcodeFormat_Code39]
        case .code93: [ZXing_BarcodeFormat_Code93]
        case .interleaved2of5: [ZXing_BarcodeFormat_ITF]
        case .codabar: [ZXing_BarcodeFormat_Codabar]
        case .dataBar: [ZXing_BarcodeFormat_DataBar]
        case .dataBarExpanded: [ZXing_BarcodeFormat_DataBarExp]
        case .dataBarLimited: [ZXing_BarcodeFormat_DataBarLtd]
        case .qrCode: [ZXing_BarcodeFormat_QRCode]
        case .pdf417: [ZXing_BarcodeFormat_PDF417]
        case .dataMatrix: [ZXing_BarcodeFormat_DataMatrix]
        case .aztec: [ZXing_BarcodeFormat_Aztec]
        case .maxiCode: [ZXing_BarcodeFormat_MaxiCode]
        case .ean2, .ean5, .isbn10, .sqCode: []
        }
    }

    /// The contract name of what zxing-cpp read; variants (QR Model 2, Compact PDF417, DataBar
    /// Stacked, ITF-14 …) report their family's name.
    static func symbology(of format: ZXing_BarcodeFormat) -> Symbology? {
        let family = ZXing_BarcodeFormatSymbology(format)
        let table: [(ZXing_BarcodeFormat, Symbology)] = [
            (ZXing_BarcodeFormat_EAN13, .ean13), (ZXing_BarcodeFormat_EAN8, .ean8), (ZXing_BarcodeFormat_UPCA, .upcA),
            (ZXing_BarcodeFormat_UPCE, .upcE), (ZXing_BarcodeFormat_ISBN, .ean13),
            (ZXing_BarcodeFormat_DataBarExp, .dataBarExpanded), (ZXing_BarcodeFormat_DataBarExpStk, .dataBarExpanded),
            (ZXing_BarcodeFormat_DataBarLtd, .dataBarLimited),
        ]
        if let exact = table.first(where: { $0.0 == format }) { return exact.1 }
        let families: [(ZXing_BarcodeFormat, Symbology)] = [
            (ZXing_BarcodeFormat_Code128, .code128), (ZXing_BarcodeFormat_Code39, .code39),
            (ZXing_BarcodeFormat_Code93, .code93),
            (ZXing_BarcodeFormat_ITF, .interleaved2of5), (ZXing_BarcodeFormat_Codabar, .codabar),
            (ZXing_BarcodeFormat_DataBar, .dataBar),
            (ZXing_BarcodeFormat_QRCode, .qrCode), (ZXing_BarcodeFormat_PDF417, .pdf417),
            (ZXing_BarcodeFormat_DataMatrix, .dataMatrix),
            (ZXing_BarcodeFormat_Aztec, .aztec), (ZXing_BarcodeFormat_MaxiCode, .maxiCode),
            (ZXing_BarcodeFormat_EANUPC, .ean13),
        ]
        return families.first(where: { $0.0 == family })?.1
    }
}
