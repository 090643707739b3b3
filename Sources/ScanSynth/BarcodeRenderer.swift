internal import CZint
import ScanCore

/// A grey picture with a mask: what gets pasted onto frames (labels, boxes).
public struct Sprite: Sendable {
    public var width: Int
    public var height: Int
    public var pixels: [UInt8]
    /// 0 transparent, 255 opaque.
    public var alpha: [UInt8]

    public init(width: Int, height: Int, fill: UInt8, opaque: Bool = true) {
        self.width = width
        self.height = height
        pixels = [UInt8](repeating: fill, count: width * height)
        alpha = [UInt8](repeating: opaque ? 255 : 0, count: width * height)
    }
}

/// What a synthetic label carries.
public enum SynthSymbology: String, Sendable, CaseIterable {
    case ean13, ean8, code128, code39, interleaved2of5, codabar, qrCode, dataMatrix, pdf417

    var zintType: Int32 {
        switch self {
        case .ean13, .ean8: BARCODE_EANX
        case .code128: BARCODE_CODE128
        case .code39: BARCODE_CODE39
        case .interleaved2of5: BARCODE_C25INTER
        case .codabar: BARCODE_CODABAR
        case .qrCode: BARCODE_QRCODE
        case .dataMatrix: BARCODE_DATAMATRIX
        case .pdf417: BARCODE_PDF417
        }
    }

    /// The name events use for it.
    public var contractSymbology: Symbology {
        switch self {
        case .ean13: .ean13
        case .ean8: .ean8
        case .code128: .code128
        case .code39: .code39
        case .interleaved2of5: .interleaved2of5
        case .codabar: .codabar
        case .qrCode: .qrCode
        case .dataMatrix: .dataMatrix
        case .pdf417: .pdf417
        }
    }

    public var isLinear: Bool { contractSymbology.isLinear }
}

public struct RenderError: Error, Sendable, CustomStringConvertible {
    public var value: String
    public var message: String
    public var description: String { "cannot render '\(value)': \(message)" }
}

/// Renders codes with zint's library.
public enum BarcodeRenderer {
    /// The code alone (black on white, no text), `moduleSize` pixels per module, and the value a
    /// reader returns (zint adds check digits where the symbology has them).
    public static func render(
        _ symbology: SynthSymbology, _ data: String, moduleSize: Int, barHeight: Int = 50, gs1: Bool = false
    ) throws(RenderError) -> (sprite: Sprite, value: String) {
        let (sprite, text) = try encode(
            symbology, Array(data.utf8), shown: data, moduleSize: moduleSize, barHeight: barHeight, gs1: gs1)
        let value: String
        switch symbology {
        case .ean13, .ean8: value = text.isEmpty ? data : text
        // GS1 data as a reader returns it: the AIs without brackets (fixed-length AIs only here;
        // a variable-length one would be followed by GS).
        default: value = gs1 ? data.filter { $0 != "[" && $0 != "]" } : data
        }
        return (sprite, value)
    }

    /// A 2-D code of these bytes as they are (zint's data mode: no character set, no ECI), for
    /// binary payloads and text in a legacy character set.
    public static func render(_ symbology: SynthSymbology, bytes: [UInt8], moduleSize: Int) throws(RenderError)
        -> Sprite
    {
        try encode(
            symbology, bytes, shown: bytes.map { String($0, radix: 16) }.joined(separator: " "), moduleSize: moduleSize,
            barHeight: 50, gs1: false
        ).sprite
    }

    private static func encode(
        _ symbology: SynthSymbology, _ bytes: [UInt8], shown data: String, moduleSize: Int, barHeight: Int, gs1: Bool
    ) throws(RenderError) -> (sprite: Sprite, text: String) {
        guard let symbol = ZBarcode_Create() else { throw RenderError(value: data, message: "zint out of memory") }
        defer { ZBarcode_Delete(symbol) }
        // GS1-128 is its own symbology to zint (Code 128 with FNC1 first).
        symbol.pointee.symbology = gs1 && symbology == .code128 ? BARCODE_GS1_128 : symbology.zintType
        symbol.pointee.scale = Float(moduleSize) / 2
        symbol.pointee.show_hrt = 0
        symbol.pointee.height = Float(barHeight)
        // GS1 data is written with its AIs in brackets ("[01]…[10]…"); zint encodes FNC1 for it.
        if gs1 { symbol.pointee.input_mode = Int32(GS1_MODE) }
        // EAN/UPC bitmaps include their quiet zones; other linear codes get ten modules each side.
        if symbology.isLinear && symbology != .ean13 && symbology != .ean8 { symbol.pointee.whitespace_width = 10 }
        let status = bytes.withUnsafeBufferPointer { raw in
            ZBarcode_Encode_and_Buffer(symbol, UnsafeMutablePointer(mutating: raw.baseAddress), Int32(raw.count), 0)
        }
        guard status < ZINT_ERROR else {
            let message = withUnsafeBytes(of: symbol.pointee.errtxt) {
                String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
            }
            throw RenderError(value: data, message: message)
        }
        let width = Int(symbol.pointee.bitmap_width)
        let height = Int(symbol.pointee.bitmap_height)
        guard let bitmap = symbol.pointee.bitmap, width > 0, height > 0 else {
            throw RenderError(value: data, message: "zint produced no bitmap")
        }
        var sprite = Sprite(width: width, height: height, fill: 255)
        for index in 0..<width * height { sprite.pixels[index] = bitmap[index * 3] < 128 ? 20 : 245 }
        let text = withUnsafeBytes(of: symbol.pointee.text) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        return (sprite, text)
    }
}
