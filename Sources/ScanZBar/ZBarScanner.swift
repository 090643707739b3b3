internal import CZBar
import ScanCore
import ScanVision

/// Owns one `zbar_image_scanner_t`.
///
/// zbar keeps state between images (its result cache and per-symbology decoders), so every
/// camera gets its own scanner and a scanner is used from one thread at a time: the type is
/// deliberately not `Sendable`.
public final class ZBarScanner {
    private let scanner: OpaquePointer
    public let settings: ZBarSettings

    public init(settings: ZBarSettings = .zbarDefaults) throws(ZBarError) {
        guard let scanner = zbar_image_scanner_create() else {
            throw ZBarError(code: .scannerUnavailable, function: "zbar_image_scanner_create", input: "a new scanner")
        }
        self.scanner = scanner
        self.settings = settings
        try configure(settings)
    }

    deinit {
        zbar_image_scanner_destroy(scanner)
    }

    private func configure(_ settings: ZBarSettings) throws(ZBarError) {
        if let symbologies = settings.symbologies {
            try setConfig(ZBAR_NONE, ZBAR_CFG_ENABLE, 0, input: "all symbologies off")
            for symbology in symbologies.sorted(by: { $0.rawValue < $1.rawValue }) {
                guard let type = ZBarSymbologyMap.zbarType(symbology) else { continue }
                try setConfig(type, ZBAR_CFG_ENABLE, 1, input: "enable \(symbology.rawValue)")
            }
        }
        let rows = settings.rowStep ?? settings.density
        let columns = settings.columnStep ?? settings.density
        guard settings.density >= 1, rows >= 0, columns >= 0, rows + columns > 0 else {
            throw ZBarError(
                code: .configRejected, function: "zbar_image_scanner_set_config",
                input: "density \(settings.density), rows every \(rows), columns every \(columns)")
        }
        // zbar's y density spaces the horizontal scan lines, its x density the vertical ones.
        if columns != 1 { try setConfig(ZBAR_NONE, ZBAR_CFG_X_DENSITY, Int32(columns), input: "x density \(columns)") }
        if rows != 1 { try setConfig(ZBAR_NONE, ZBAR_CFG_Y_DENSITY, Int32(rows), input: "y density \(rows)") }
        if settings.testInverted {
            try setConfig(ZBAR_NONE, ZBAR_CFG_TEST_INVERTED, 1, input: "test inverted")
        }
    }

    private func setConfig(
        _ symbology: zbar_symbol_type_t, _ config: zbar_config_t, _ value: Int32, input: String
    ) throws(ZBarError) {
        if zbar_image_scanner_set_config(scanner, symbology, config, value) != 0 {
            throw ZBarError(code: .configRejected, function: "zbar_image_scanner_set_config", input: input)
        }
    }

    /// Decodes every symbol in the image. `origin` is added to every point, so a region of
    /// interest cut out of a larger frame reports frame coordinates.
    public func scan(_ image: GrayImage, origin: Point = Point(x: 0, y: 0)) throws(ZBarError) -> [Detection] {
        guard image.width > 0, image.height > 0 else {
            throw ZBarError(
                code: .badImage, function: "zbar_image_set_size", input: "a \(image.width)x\(image.height) image")
        }
        guard let zimage = zbar_image_create() else {
            throw ZBarError(code: .scannerUnavailable, function: "zbar_image_create", input: "a new image")
        }
        defer { zbar_image_destroy(zimage) }
        zbar_image_set_format(zimage, scantrack_zbar_format_y800())
        zbar_image_set_size(zimage, UInt32(image.width), UInt32(image.height))

        let outcome: Result<[Detection], ZBarError> = image.pixels.withUnsafeBufferPointer { pixels in
            // zbar borrows the buffer (no cleanup handler); it stays valid for this closure, and the
            // image is detached from it before the closure returns.
            zbar_image_set_data(zimage, pixels.baseAddress, UInt(pixels.count), nil)
            defer { zbar_image_set_data(zimage, nil, 0, nil) }
            let found = zbar_scan_image(scanner, zimage)
            guard found >= 0 else {
                return .failure(
                    ZBarError(
                        code: .scanFailed, function: "zbar_scan_image", input: "a \(image.width)x\(image.height) image")
                )
            }
            var detections: [Detection] = []
            detections.reserveCapacity(Int(found))
            var symbol = zbar_image_first_symbol(zimage)
            while let current = symbol {
                detections.append(contentsOf: Self.detections(of: current, origin: origin))
                symbol = zbar_symbol_next(current)
            }
            return .success(detections)
        }
        return try outcome.get()
    }

    /// One zbar symbol as detections; a composite (EAN/UPC with an add-on) becomes its main
    /// code with `addOn` set.
    private static func detections(of symbol: OpaquePointer, origin: Point) -> [Detection] {
        let type = zbar_symbol_get_type(symbol)
        if type == ZBAR_COMPOSITE, let components = zbar_symbol_get_components(symbol) {
            var main: Detection?
            var addOn: String?
            var component = zbar_symbol_set_first_symbol(components)
            while let current = component {
                let componentType = zbar_symbol_get_type(current)
                if componentType == ZBAR_EAN2 || componentType == ZBAR_EAN5 {
                    addOn = String(decoding: bytes(of: current), as: UTF8.self)
                } else if main == nil {
                    main = detection(of: current, type: componentType, origin: origin)
                }
                component = zbar_symbol_next(current)
            }
            guard var result = main else { return [] }
            result.addOn = addOn
            if result.points.isEmpty { result.points = points(of: symbol, origin: origin) }
            return [result]
        }
        guard let detection = detection(of: symbol, type: type, origin: origin) else { return [] }
        return [detection]
    }

    private static func detection(of symbol: OpaquePointer, type: zbar_symbol_type_t, origin: Point) -> Detection? {
        guard let symbology = ZBarSymbologyMap.symbology(type) else { return nil }
        let modifiers = zbar_symbol_get_modifiers(symbol)
        let isGS1 = modifiers & (1 << ZBAR_MOD_GS1.rawValue) != 0
        // zbar's orientation: up or down for a symbol read by its horizontal pass (along rows).
        let orientation = zbar_symbol_get_orientation(symbol)
        let alongRows: Bool? =
            switch orientation {
            case ZBAR_ORIENT_UP, ZBAR_ORIENT_DOWN: true
            case ZBAR_ORIENT_LEFT, ZBAR_ORIENT_RIGHT: false
            default: nil
            }
        return Detection(
            symbology: symbology, value: bytes(of: symbol), points: points(of: symbol, origin: origin), isGS1: isGS1,
            alongRows: symbology.isLinear ? alongRows : nil)
    }

    private static func bytes(of symbol: OpaquePointer) -> [UInt8] {
        let length = Int(zbar_symbol_get_data_length(symbol))
        guard length > 0, let data = zbar_symbol_get_data(symbol) else { return [] }
        return data.withMemoryRebound(to: UInt8.self, capacity: length) {
            Array(UnsafeBufferPointer(start: $0, count: length))
        }
    }

    private static func points(of symbol: OpaquePointer, origin: Point) -> [Point] {
        let count = zbar_symbol_get_loc_size(symbol)
        var points: [Point] = []
        points.reserveCapacity(Int(count))
        for index in 0..<count {
            points.append(
                Point(
                    x: Int(zbar_symbol_get_loc_x(symbol, index)) + origin.x,
                    y: Int(zbar_symbol_get_loc_y(symbol, index)) + origin.y))
        }
        return points
    }
}

/// zbar's symbol types and the names of the event contract.
enum ZBarSymbologyMap {
    private static let pairs: [(zbar_symbol_type_t, Symbology)] = [
        (ZBAR_EAN13, .ean13), (ZBAR_EAN8, .ean8), (ZBAR_UPCA, .upcA), (ZBAR_UPCE, .upcE),
        (ZBAR_EAN2, .ean2), (ZBAR_EAN5, .ean5), (ZBAR_ISBN10, .isbn10), (ZBAR_ISBN13, .isbn13),
        (ZBAR_CODE128, .code128), (ZBAR_CODE39, .code39), (ZBAR_CODE93, .code93), (ZBAR_I25, .interleaved2of5),
        (ZBAR_CODABAR, .codabar), (ZBAR_DATABAR, .dataBar), (ZBAR_DATABAR_EXP, .dataBarExpanded),
        (ZBAR_QRCODE, .qrCode), (ZBAR_SQCODE, .sqCode), (ZBAR_PDF417, .pdf417),
    ]

    static func symbology(_ type: zbar_symbol_type_t) -> Symbology? {
        pairs.first(where: { $0.0 == type })?.1
    }

    static func zbarType(_ symbology: Symbology) -> zbar_symbol_type_t? {
        pairs.first(where: { $0.1 == symbology })?.0
    }
}
