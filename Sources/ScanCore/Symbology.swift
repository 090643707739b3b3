/// The barcode types ScanTrack names in events, spelled as zbar names them (the event contract).
public enum Symbology: String, Sendable, Hashable, Codable, CaseIterable {
    case ean13 = "EAN-13"
    case ean8 = "EAN-8"
    case upcA = "UPC-A"
    case upcE = "UPC-E"
    case ean2 = "EAN-2"
    case ean5 = "EAN-5"
    case isbn10 = "ISBN-10"
    case isbn13 = "ISBN-13"
    case code128 = "CODE-128"
    case code39 = "CODE-39"
    case code93 = "CODE-93"
    case interleaved2of5 = "I2/5"
    case codabar = "CODABAR"
    case dataBar = "DataBar"
    case dataBarExpanded = "DataBar-Exp"
    /// Read by the second engine (zxing-cpp) only, like DataMatrix, PDF417, Aztec and MaxiCode.
    case dataBarLimited = "DataBar-Ltd"
    case qrCode = "QR-Code"
    case sqCode = "SQ-Code"
    case pdf417 = "PDF417"
    case dataMatrix = "DataMatrix"
    case aztec = "Aztec"
    case maxiCode = "MaxiCode"

    /// Linear (1D) codes: zbar reports scan-line hits for them, not corners.
    public var isLinear: Bool {
        switch self {
        case .qrCode, .sqCode, .pdf417, .dataMatrix, .aztec, .maxiCode: false
        default: true
        }
    }

    /// EAN/UPC and the ISBNs they carry: one check digit over a short value, so a misread is
    /// now and then valid (the engines' reads of them are checked harder).
    public var isRetail: Bool {
        switch self {
        case .ean13, .ean8, .upcA, .upcE, .isbn10, .isbn13: true
        default: false
        }
    }

    /// Codes whose last digit is a mod-10 check digit over the others (GS1 family).
    public var hasGS1CheckDigit: Bool {
        switch self {
        case .ean13, .ean8, .upcA, .upcE, .isbn13: true
        default: false
        }
    }

    /// The GS1 mod-10 check digit of `digits` (each 0-9): weights 3 and 1 alternating from the
    /// rightmost digit.
    public static func gs1CheckDigit(_ digits: some Sequence<Int>) -> Int {
        let sum = digits.reversed().enumerated().reduce(0) { $0 + $1.element * ($1.offset % 2 == 0 ? 3 : 1) }
        return (10 - sum % 10) % 10
    }

    /// The GS1 mod-10 check over all ASCII digits but the last; true when the last digit matches
    /// (false for anything but two or more digits).
    public static func hasValidGS1CheckDigit(_ value: some BidirectionalCollection<UInt8>) -> Bool {
        guard value.count >= 2, value.allSatisfy({ (0x30...0x39).contains($0) }), let last = value.last else {
            return false
        }
        return gs1CheckDigit(value.dropLast().map { Int($0 - 0x30) }) == Int(last - 0x30)
    }

    /// The AIM symbology identifier (ISO/IEC 15424) a scanner sends before the data, so that a
    /// GS1 parser downstream knows what it reads: `]E0` EAN/UPC (as EAN-13, UPC-A or UPC-E),
    /// `]E4` EAN-8, `]C0`/`]C1` Code 128 plain/GS1-128, `]d1`/`]d2` DataMatrix plain/GS1,
    /// `]Q1`/`]Q3` QR plain/GS1, `]e0` DataBar, … nil where none is defined. `addOn`: an EAN-13,
    /// UPC-A or UPC-E read with its EAN-2/EAN-5 supplement, sent as one: `]E3`.
    public func aimIdentifier(gs1: Bool, addOn: Bool = false) -> String? {
        switch self {
        case .ean13, .upcA, .upcE, .isbn13: addOn ? "]E3" : "]E0"
        case .ean8: "]E4"
        case .ean2, .ean5: "]E0"
        case .isbn10: "]X0"
        case .code128: gs1 ? "]C1" : "]C0"
        case .code39: "]A0"
        case .code93: "]G0"
        case .interleaved2of5: "]I0"
        case .codabar: "]F0"
        case .dataBar, .dataBarExpanded, .dataBarLimited: "]e0"
        case .qrCode: gs1 ? "]Q3" : "]Q1"
        case .dataMatrix: gs1 ? "]d2" : "]d1"
        case .pdf417: "]L2"
        case .aztec: gs1 ? "]z1" : "]z0"
        case .maxiCode: "]U0"
        case .sqCode: nil
        }
    }

    /// Accepts the contract names and a few common spellings ("ean13", "code128", "qr").
    /// The name zbar and zbarimg use: the contract's, but `Codabar`.
    public var zbarName: String { self == .codabar ? "Codabar" : rawValue }

    public init?(name: String) {
        if let exact = Symbology(rawValue: name) {
            self = exact
            return
        }
        let folded = String(name.lowercased().filter { $0.isLetter || $0.isNumber })
        guard
            let match = Symbology.allCases.first(where: { candidate in
                String(candidate.rawValue.lowercased().filter { $0.isLetter || $0.isNumber }) == folded
            }) ?? Symbology.aliases[folded]
        else { return nil }
        self = match
    }

    private static let aliases: [String: Symbology] = [
        "qr": .qrCode, "itf": .interleaved2of5, "interleaved2of5": .interleaved2of5,
        "databarexpanded": .dataBarExpanded, "gs1databar": .dataBar,
    ]
}
