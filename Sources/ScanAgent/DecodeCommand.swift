import ArgumentParser
import Foundation
import ScanCore
import ScanImages
import ScanJPEG
import ScanPNG
import ScanZBar
import ScanZXing
import ScanMedia
import ScanVision

/// `scan-agent decode FILE...`: the thorough mode for still images (a photo of a label): every
/// symbology, both engines, one JSON object (or `SYMBOLOGY:value` line) per symbol on stdout.
struct DecodeCommand: ParsableCommand {
    enum Format: String, ExpressibleByArgument, CaseIterable {
        case json, text
    }

    static let configuration = CommandConfiguration(
        commandName: "decode",
        abstract: "Decode still images with both engines and print one JSON object per symbol.",
        discussion: """
            Reads PNG (any colour type and depth), JPEG (baseline and progressive, by libjpeg-turbo), \
            WebP (lossy and lossless, by libwebp), TIFF (the first page, by libtiff), GIF (the first image, \
            by giflib), BMP (uncompressed, 1 to 32 bits a pixel) and binary PGM (P5) and PPM (P6) images, \
            told apart by their first bytes, whatever their names; colour becomes luma and transparency \
            white. `-` reads one image from standard input. Another format (JPEG 2000, HEIF, …) is named \
            in the error: convert it first, e.g. `convert label.heic label.png` (ImageMagick). \
            Every symbology of both engines is on: zbar (linear codes and QR, scanned along rows and \
            columns, also inverted) and zxing-cpp (also DataMatrix, PDF417, Aztec, MaxiCode, DataBar \
            Limited; rotated and inverted images tried). A symbol read by both is printed once with \
            engine "zbar+zxing". When that first look reads nothing, a second look takes the regions \
            where the localiser sees a code: zbar on three views of each (as it is, enlarged, smoothed; \
            two must agree), then zxing-cpp enlarged, then with a fixed threshold; its symbols say so in \
            their engine, e.g. "zxing (second look: zxing, enlarged)". \
            Each line: file, symbology, value (text in UTF-8 whatever the code's character set; \
            valueEncoding "base64" when the value is binary), aim (the AIM symbology identifier, e.g. ]E0, ]C1, ]d2), gs1 (true for GS1 data), \
            addOn (an EAN/UPC add-on, read with its main code), printedSymbology and printedValue (a UPC \
            reported in its EAN-13 form, as printed), engine, box (four corners, pixels). \
            --format text prints SYMBOLOGY:value, one line a symbol, as zbarimg does: zbar's names \
            (Codabar), and the value's bytes as the code holds them (a GS1 separator as the byte 1D) when \
            standard output is a file or a pipe; on a terminal, control characters are shown escaped and \
            a binary value in base64. --raw prints the values alone (zbarimg --raw). With text or --raw, \
            standard error ends with how many symbols were read from how many images, and a warning \
            when an image had none, unless -q (zbarimg -q).

            Exit codes: 0 a symbol was found; 4 none was found in any image (as zbarimg); 2 a file could \
            not be read (named on stderr; the other files are still decoded); 64 bad arguments.
            """)

    @Argument(help: "Images (PNG, JPEG, WebP, TIFF, GIF, BMP, PGM or PPM); - for standard input.") var files: [String]

    @Option(help: "json (an object a symbol) or text (SYMBOLOGY:value a line).") var format: Format = .json

    @Option(help: "Only these symbologies (comma-separated, e.g. DataMatrix,EAN-13); default all.")
    var symbologies: String?

    @Flag(
        help: "Report UPC-A and UPC-E as printed, not in their 13-digit EAN-13 form (events use that form by default).")
    var upcAsPrinted = false

    @Flag(help: "Print each value alone, a line a symbol (zbarimg --raw); text output.") var raw = false

    @Flag(name: [.customShort("q"), .long], help: "No summary on standard error (zbarimg -q).") var quiet = false

    func run() throws {
        var only: Set<Symbology>?
        if let symbologies {
            var set = Set<Symbology>()
            for name in symbologies.split(separator: ",") {
                guard let symbology = Symbology(name: String(name)) else {
                    throw ValidationError(
                        "--symbologies: '\(name)' is not a symbology (\(Symbology.allCases.map(\.rawValue).joined(separator: ", ")))"
                    )
                }
                set.insert(symbology)
            }
            only = set
        }
        let decoder = try StillDecoder(symbologies: only, normalizer: CodeNormalizer(upcAsEAN13: !upcAsPrinted))
        var unreadable = 0
        var found = 0
        var imagesWithout = 0
        let text = raw || format == .text
        let bytesAsHeld = isatty(STDOUT_FILENO) == 0
        for file in files {
            let image: GrayImage
            do {
                let data =
                    file == "-"
                    ? FileHandle.standardInput.readDataToEndOfFile() : FileManager.default.contents(atPath: file)
                guard let data else { throw PGM.ParseError(reason: "cannot read the file") }
                image = try StillImage.decode(Array(data))
            } catch {
                writeStandardError("scan-agent decode: \(file): \(error)")
                unreadable += 1
                continue
            }
            do {
                let symbols = try decoder.decode(image, name: file)
                if symbols.isEmpty { imagesWithout += 1 }
                for symbol in symbols {
                    found += 1
                    if text {
                        let name = raw ? "" : symbol.detection.symbology.zbarName + ":"
                        if bytesAsHeld {
                            FileHandle.standardOutput.write(Data(Array(name.utf8) + symbol.detection.value + [0x0A]))
                        } else {
                            let value = EncodedValue(bytes: symbol.detection.value).eventString
                            FileHandle.standardOutput.write(Data((TerminalText.escaped(name + value) + "\n").utf8))
                        }
                        continue
                    }
                    var writer = JSONWriter()
                    writer.field("file", file)
                    writer.field("symbology", symbol.detection.symbology.rawValue)
                    let value = EncodedValue(bytes: symbol.detection.value)
                    writer.field("value", value.eventString)
                    if value.encoding == "base64" { writer.field("valueEncoding", "base64") }
                    let detection = symbol.detection
                    writer.field(
                        "aim", detection.symbology.aimIdentifier(gs1: detection.isGS1, addOn: detection.addOn != nil))
                    if detection.isGS1 { writer.field("gs1", true) }
                    writer.field("addOn", detection.addOn)
                    if let printed = detection.printed {
                        writer.field("printedSymbology", printed.symbology.rawValue)
                        writer.field("printedValue", EncodedValue(bytes: printed.value).eventString)
                    }
                    writer.field("engine", symbol.engine)
                    writer.raw("box", JSONWriter.points(symbol.corners))
                    FileHandle.standardOutput.write(Data(writer.finished() + [0x0A]))
                }
            } catch {
                writeStandardError("scan-agent decode: \(file): \(error)")
                unreadable += 1
            }
        }
        if text && !quiet {
            let read = files.count - unreadable
            writeStandardError("scanned \(found) barcode symbols from \(read) images")
            if imagesWithout > 0 { writeStandardError("WARNING: barcode data was not detected in some image(s)") }
        }
        if unreadable > 0 { throw ExitCode(2) }
        if found == 0 { throw ExitCode(4) }
    }
}

/// Both engines on one still image, their results merged: a symbol both read is one symbol.
final class StillDecoder {
    struct Symbol {
        var detection: Detection
        var engine: String
        var corners: [Point]
    }

    /// zbar's set-up for the first look; a scanner is made from it for each image, since zbar
    /// keeps state from one image to the next (DataBar Expanded segments, which it then joins
    /// with the next image's into values on neither label).
    private let zbarConfig: DecoderConfig?
    private let zxing: ZXingReader?
    private let normalizer: CodeNormalizer
    /// zxing-cpp on the straightened views of linear codes at a steep angle (made once: its
    /// options are the same for every image).
    private let angledViews: ZXingReader?
    /// zxing-cpp in pure mode for MaxiCode drawn by `MaxiCodeSampler` (nil: MaxiCode not asked for).
    private let maxiCodeReader: ZXingReader?
    /// zxing-cpp with a fixed threshold, for second looks (made when first needed).
    private var fixedThreshold: ZXingReader?
    /// zbar's set-up without the first look's checks, for second looks.
    private let zbarSettings: ZBarSettings?

    init(symbologies: Set<Symbology>?, normalizer: CodeNormalizer) throws {
        self.normalizer = normalizer
        let zbarKinds = Symbology.allCases.filter { ZBarFrameDecoder.reads($0) && (symbologies?.contains($0) ?? true) }
        var config = DecoderConfig()
        config.symbologies = zbarKinds
        config.density = 1
        zbarConfig = zbarKinds.isEmpty ? nil : config
        zbarSettings =
            zbarKinds.isEmpty ? nil : ZBarSettings(symbologies: config.zbarSymbologies, density: 1, testInverted: true)
        let zxingKinds = symbologies.map { $0.filter { ZXingReader.reads($0) } }
        // A still has no next frame to confirm a weak retail read: the reader checks it
        // (`ZXingSettings.weakRetailLines`).
        var zxingSettings = ZXingSettings(symbologies: zxingKinds)
        zxingSettings.weakRetailLines = 3
        zxing = (zxingKinds?.isEmpty ?? false) ? nil : try ZXingReader(settings: zxingSettings)
        angledViews = try CameraDecoder.angledViewReader(zbarConfig?.zbarSymbologies ?? [])
        if symbologies?.contains(.maxiCode) ?? true {
            var pure = ZXingSettings.asPlanned([.maxiCode])
            pure.isPure = true
            maxiCodeReader = try ZXingReader(settings: pure)
        } else {
            maxiCodeReader = nil
        }
    }

    func decode(_ image: GrayImage, name: String) throws -> [Symbol] {
        let zbar = try zbarConfig.map { config throws(ZBarError) in
            try ZBarFrameDecoder(config: config, testInverted: true)
        }
        let first = try zbar?.decode(image) ?? []
        let zxingReads = try zxing?.read(image, input: name) ?? []
        // Linear codes at a steep angle: the localiser's regions that neither engine read,
        // straightened along their bars (`ZBarFrameDecoder.readAngled`).
        let regions = CodeLocalizer().locate(image)
        let angled =
            try zbar?.readAngled(
                image, regions: regions.map(\.box), besides: first + zxingReads,
                secondEngine: angledViews.map { reader in { (try? reader.read($0, input: name)) ?? [] } }) ?? []
        // Parts of an ITF code a slanted scan line crossed, by either engine, give way to the whole.
        let all = first + angled + zxingReads
        let symbols = merged(
            zbar: (first + angled).filter { !$0.isTruncation(among: all) },
            zxing: zxingReads.filter { !$0.isTruncation(among: all) })
        let sampled = try sampledMaxiCodes(image, besides: symbols, name: name)
        guard symbols.isEmpty else { return symbols + sampled }
        let second = try secondLook(image, regions: regions, name: name)
        return (second.isEmpty ? try zbarAsZbarimg(image) : second) + sampled
    }

    /// MaxiCode that is not square to the image (zxing-cpp reads it only so): each bullseye's
    /// symbol sampled and drawn pure (`MaxiCodeSampler`), read by zxing-cpp in pure mode; the
    /// first of the six turns it reads is the symbol. A bullseye inside a MaxiCode already read
    /// is left alone.
    private func sampledMaxiCodes(_ image: GrayImage, besides read: [Symbol], name: String) throws -> [Symbol] {
        guard let pure = maxiCodeReader else { return [] }
        var found: [Symbol] = []
        for bullseye in MaxiCodeSampler.bullseyes(in: image) {
            let centre = Point(x: Int(bullseye.x), y: Int(bullseye.y))
            let known = (read + found).contains { symbol in
                symbol.detection.symbology == .maxiCode
                    && (Box(enclosing: symbol.corners)?.intersects(
                        Box(minX: centre.x, minY: centre.y, maxX: centre.x, maxY: centre.y)) ?? false)
            }
            if known { continue }
            for drawing in MaxiCodeSampler.drawings(around: bullseye, in: image) {
                guard var detection = try pure.read(drawing.image, input: name).first else { continue }
                detection.points = drawing.corners
                found.append(
                    Symbol(
                        detection: normalize(detection), engine: "zxing (MaxiCode sampled from its bullseye)",
                        corners: drawing.corners))
                break
            }
        }
        return found
    }

    /// The last resort, when both looks read nothing: zbar on the whole image as `zbarimg` runs it,
    /// without the first look's checks of an EAN's extent (a curved or skewed retail code whose
    /// halves zbar sees not to fit, which `zbarimg` prints: 3 corpus images). Only a lone retail
    /// value is taken: a phantom needs two labels, and two values say there may be two. Other
    /// symbologies add nothing here, the first look having read them unchecked.
    private func zbarAsZbarimg(_ image: GrayImage) throws -> [Symbol] {
        guard let settings = zbarSettings else { return [] }
        let reads = ZBarFrameDecoder.attachAddOns(try ZBarScanner(settings: settings).scan(image))
        let retail = reads.filter { ZBarFrameDecoder.phantomProne($0.symbology) }
        guard Set(retail.map(\.value)).count == 1, reads.count == retail.count else { return [] }
        return merged(zbar: retail, zxing: []).map { symbol in
            var symbol = symbol
            symbol.engine += " (last look: whole image, unchecked, as zbarimg)"
            return symbol
        }
    }

    /// Regions a second look reads at most, the localiser's largest first.
    static let secondLookRegions = 4
    /// Regions larger than this (pixels) are not enlarged: enlarging is for small codes, and a
    /// photo's whole frame enlarged would cost four times its memory.
    static let largestEnlarged = 2_000_000

    /// The ways of a second look, in this order, each reading codes the ones before it miss (on the
    /// shared corpus together 17 images the first look read nothing in, BENCHMARKS.md).
    enum Attempt: String, CaseIterable {
        case zbarViews = "zbar, two views agree"
        case zxingDoubled = "zxing, enlarged"
        case zxingFixedThreshold = "zxing, fixed threshold"
    }

    /// When the first look read nothing: where the localiser sees code-like regions, the engines
    /// again on each region, in the ways `Attempt` lists, until one reads something there. Nothing
    /// more is spent on an image the first look read, or one where the localiser sees no code.
    private func secondLook(_ image: GrayImage, regions located: [CodeLocalizer.Region], name: String) throws
        -> [Symbol]
    {
        var symbols: [Symbol] = []
        let regions = located.sorted { $0.cells > $1.cells }.prefix(Self.secondLookRegions)
        for region in regions {
            // A region inside a code already read says nothing new.
            if symbols.contains(where: { $0.detection.box.map { $0.intersectionOverUnion(region.box) > 0 } ?? false }) {
                continue
            }
            // The region with a margin of half its size: the localiser's box may cut a quiet zone.
            let marginX = max(region.box.width / 2, 16)
            let marginY = max(region.box.height / 2, 16)
            guard let area = region.box.widened(x: marginX, y: marginY).clamped(to: image.bounds) else { continue }
            let crop = image.cropped(to: area)
            for attempt in Attempt.allCases {
                let found = try read(crop, at: area, attempt: attempt, name: name)
                guard !found.isEmpty else { continue }
                for symbol in found {
                    var symbol = symbol
                    symbol.engine += " (second look: \(attempt.rawValue))"
                    symbols.append(symbol)
                }
                break
            }
        }
        return symbols
    }

    private func read(_ crop: GrayImage, at area: Box, attempt: Attempt, name: String) throws -> [Symbol] {
        /// Points of the enlarged crop, back in the image.
        func halvedBack(_ detection: Detection) -> Detection {
            var moved = detection
            moved.points = detection.points.map { Point(x: area.minX + $0.x / 2, y: area.minY + $0.y / 2) }
            return moved
        }
        switch attempt {
        case .zbarViews:
            return merged(zbar: try zbarViews(crop, at: area), zxing: [])
        case .zxingDoubled:
            guard crop.width * crop.height <= Self.largestEnlarged else { return [] }
            return merged(zbar: [], zxing: try zxing?.read(crop.doubled(), input: name).map(halvedBack) ?? [])
        case .zxingFixedThreshold:
            guard let zxing else { return [] }
            if fixedThreshold == nil {
                var settings = zxing.settings
                settings.binarizer = .fixedThreshold
                fixedThreshold = try ZXingReader(settings: settings)
            }
            let origin = Point(x: area.minX, y: area.minY)
            return merged(zbar: [], zxing: try fixedThreshold?.read(crop, origin: origin, input: name) ?? [])
        }
    }

    /// zbar as it is on three views of the region (as it is, enlarged twice, smoothed), without
    /// the first look's checks of an EAN's extent, which a perspective or a blur defeats: a code
    /// counts when two views read the same value. A misread of noise is a chance pattern that a
    /// view at another scale does not repeat (none of the corpus's 49 images without a code reads).
    private func zbarViews(_ crop: GrayImage, at area: Box) throws -> [Detection] {
        guard let settings = zbarSettings else { return [] }
        var views: [(image: GrayImage, scale: Int)] = [(crop, 1), (crop.blurred(), 1)]
        if crop.width * crop.height <= Self.largestEnlarged { views.insert((crop.doubled(), 2), at: 1) }
        var reads: [[Detection]] = []
        for view in views {
            let found = ZBarFrameDecoder.attachAddOns(try ZBarScanner(settings: settings).scan(view.image))
            reads.append(
                found.map { detection in
                    var moved = detection
                    moved.points = detection.points.map {
                        Point(x: area.minX + $0.x / view.scale, y: area.minY + $0.y / view.scale)
                    }
                    return moved
                })
        }
        var agreed: [Detection] = []
        for (index, view) in reads.enumerated() {
            for detection in view where !agreed.contains(where: { Self.sameRead($0, detection) }) {
                if reads.indices.contains(where: { $0 != index && reads[$0].contains { Self.sameRead($0, detection) } })
                {
                    agreed.append(detection)
                }
            }
        }
        return agreed
    }

    private static func sameRead(_ a: Detection, _ b: Detection) -> Bool {
        a.symbology == b.symbology && a.value == b.value
    }

    /// Both engines' reads as symbols: a code both read (or zxing-cpp twice, with and without its
    /// add-on) is one symbol.
    private func merged(zbar zbarReads: [Detection], zxing zxingReads: [Detection]) -> [Symbol] {
        var symbols: [Symbol] = []
        for detection in zbarReads.map(normalize) {
            let corners = detection.box.map { $0.corners } ?? detection.points
            symbols.append(Symbol(detection: detection, engine: "zbar", corners: corners))
        }
        for detection in zxingReads.map(normalize) {
            guard let box = detection.box else { continue }
            // One code is one symbol: read by both engines, or by zxing-cpp twice (with and
            // without its add-on).
            if let same = symbols.firstIndex(where: { symbol in
                Self.sameValue(symbol.detection, detection)
                    && Self.sameFamily(symbol.detection.symbology, detection.symbology)
                    && (symbol.detection.box.map { $0.intersectionOverUnion(box) > 0 } ?? false)
            }) {
                if symbols[same].engine == "zbar" {
                    symbols[same].engine = "zbar+zxing"
                    symbols[same].corners = detection.points  // zxing-cpp reports the symbol's corners
                    // A Code 39 zbar printed as its characters and zxing-cpp in full ASCII: the
                    // full ASCII reading (what the label means: +A is a, not two characters).
                    symbols[same].detection.value = detection.value
                }
                if symbols[same].detection.addOn == nil { symbols[same].detection.addOn = detection.addOn }
            } else {
                // One code the engines read as two values: zxing-cpp's reading is the code's. It
                // reads what zbar does not: Code 128's Latin-1 characters (FNC4, which zbar drops:
                // "ó" read as "s"), DataBar Expanded's compressed dates (zbar misreads AI 15), a QR
                // Code's character set where zbar guesses another (the corpus's Shift_JIS
                // katakana as Chinese characters). EAN/UPC are left to `oneValuePerCode`: there
                // a valid wrong value is zxing-cpp's as often as zbar's.
                if !ZBarFrameDecoder.phantomProne(detection.symbology) {
                    symbols.removeAll { symbol in
                        symbol.engine == "zbar" && symbol.detection.symbology == detection.symbology
                            && !Self.sameValue(symbol.detection, detection)
                            && (Box(enclosing: symbol.corners)?.intersects(box) ?? false)
                    }
                }
                symbols.append(Symbol(detection: detection, engine: "zxing", corners: detection.points))
            }
        }
        return Self.oneValuePerCode(Self.onePerSymbol(symbols))
    }

    /// EAN/UPC reads of different values on one place (their outlines meet) are one code read two
    /// ways, one of them wrong: a value both engines read stands, one an engine read alone beside
    /// it gives way; two values each read by one engine are both dropped (neither is sure, and a
    /// wrong value is worse than none). zxing-cpp's own pairs its reader has decided
    /// (`ZXingSettings.weakRetailLines`).
    static func oneValuePerCode(_ symbols: [Symbol]) -> [Symbol] {
        func rivals(_ a: Symbol, _ b: Symbol) -> Bool {
            guard ZBarFrameDecoder.phantomProne(a.detection.symbology),
                ZBarFrameDecoder.phantomProne(b.detection.symbology), a.detection.value != b.detection.value,
                let one = Box(enclosing: a.corners), let other = Box(enclosing: b.corners)
            else { return false }
            return one.intersects(other)
        }
        func agreed(_ symbol: Symbol) -> Bool { symbol.engine.hasPrefix("zbar+zxing") }
        return symbols.filter { symbol in
            !symbols.contains { other in rivals(symbol, other) && (agreed(other) || !agreed(symbol)) }
        }
    }

    /// One line a physical symbol: zbar can report one code as several symbols of its value (a
    /// band of its scan lines, one end), which the first look keeps apart when its checks do not
    /// join them. Symbols of one value whose boxes overlap or lie closer than half the smaller
    /// one's short side are one: the one with zxing-cpp's corners is kept (the symbol's outline),
    /// else the first. Codes of one value apart from each other (two labels) stay two.
    static func onePerSymbol(_ symbols: [Symbol]) -> [Symbol] {
        var kept: [Symbol] = []
        for symbol in symbols {
            guard let box = Box(enclosing: symbol.corners),
                let same = kept.firstIndex(where: { other in
                    guard sameValue(other.detection, symbol.detection),
                        sameFamily(other.detection.symbology, symbol.detection.symbology),
                        let otherBox = Box(enclosing: other.corners)
                    else { return false }
                    let gap = max(4, min(box.width, box.height, otherBox.width, otherBox.height) / 2)
                    return otherBox.widened(by: gap).intersects(box)
                })
            else {
                kept.append(symbol)
                continue
            }
            if !kept[same].engine.contains("zxing") && symbol.engine.contains("zxing") {
                var taken = symbol
                if taken.detection.addOn == nil { taken.detection.addOn = kept[same].detection.addOn }
                kept[same] = taken
            } else if kept[same].detection.addOn == nil {
                kept[same].detection.addOn = symbol.detection.addOn
            }
        }
        return kept
    }

    /// One product, one value: UPC in its EAN-13 form (unless asked otherwise), whichever engine
    /// read it (zxing-cpp already expands some UPC-E to 13 digits).
    private func normalize(_ detection: Detection) -> Detection {
        var result = normalizer.normalize(detection)
        if normalizer.upcAsEAN13, result.symbology == .upcA || result.symbology == .upcE, result.value.count == 13 {
            result.symbology = .ean13
        }
        return result
    }

    /// The same value, or for Code 39 the same once zbar's characters are read in full ASCII
    /// (`A+A-1234` is `Aa-1234`).
    static func sameValue(_ zbar: Detection, _ zxing: Detection) -> Bool {
        if zbar.value == zxing.value { return true }
        return zbar.symbology == .code39 && zxing.symbology == .code39
            && Code39FullASCII.decode(zbar.value) == zxing.value
    }

    /// The engines name some retail codes differently (an EAN-13 starting 0 is a UPC-A).
    static func sameFamily(_ a: Symbology, _ b: Symbology) -> Bool {
        let retail: Set<Symbology> = [.ean13, .upcA, .upcE, .isbn13]
        return a == b || (retail.contains(a) && retail.contains(b))
    }
}

/// A still image file told apart by its first bytes: PNG, JPEG, WebP, TIFF, GIF, BMP, PGM/PPM;
/// any other format is named in the error.
enum StillImage {
    struct UnsupportedFormat: Error, CustomStringConvertible {
        var format: String
        var description: String {
            "\(format) images are not read (PNG, JPEG, WebP, TIFF, GIF, BMP, PGM and PPM are): convert it first, e.g. convert FILE FILE.png"
        }
    }

    static func decode(_ bytes: [UInt8]) throws -> GrayImage {
        if PNGImage.isPNG(bytes) { return try PNGImage.decode(bytes) }
        if JPEGImage.isJPEG(bytes) { return try JPEGImage.decode(bytes) }
        if WebPImage.isWebP(bytes) { return try WebPImage.decode(bytes) }
        if TIFFImage.isTIFF(bytes) { return try TIFFImage.decode(bytes) }
        if GIFImage.isGIF(bytes) { return try GIFImage.decode(bytes) }
        if BMP.isBMP(bytes) { return try BMP.parse(bytes) }
        if bytes.starts(with: Array("P5".utf8)) || bytes.starts(with: Array("P6".utf8)) { return try PGM.parse(bytes) }
        if let format = otherFormat(bytes) { throw UnsupportedFormat(format: format) }
        return try PGM.parse(bytes)  // its error says what it expected
    }

    /// Formats someone may hand `decode`, by their signatures.
    static func otherFormat(_ bytes: [UInt8]) -> String? {
        let signatures: [(String, [UInt8])] = [
            ("JPEG 2000", [0x00, 0x00, 0x00, 0x0C, 0x6A, 0x50, 0x20, 0x20]), ("PDF", Array("%PDF".utf8)),
            ("ASCII PGM/PPM (P2/P3)", Array("P2".utf8)), ("ASCII PGM/PPM (P2/P3)", Array("P3".utf8)),
            ("PBM", Array("P4".utf8)),
        ]
        if let match = signatures.first(where: { bytes.starts(with: $0.1) }) { return match.0 }
        if bytes.count >= 12 && Array(bytes[4..<8]) == Array("ftyp".utf8) { return "HEIF/AVIF" }
        return nil
    }
}
