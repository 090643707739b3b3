import ScanCore

/// Normalises decoded codes the way a mature scanner reports them.
public struct CodeNormalizer: Sendable, Equatable {
    /// UPC-A (12 digits) and UPC-E (8) are reported as their 13-digit EAN-13 form by default:
    /// one product has one value, whichever way its code was printed.
    public var upcAsEAN13: Bool

    public init(upcAsEAN13: Bool = true) { self.upcAsEAN13 = upcAsEAN13 }

    public func normalize(_ detection: Detection) -> Detection {
        guard upcAsEAN13 else { return detection }
        var result = detection
        switch detection.symbology {
        case .upcA where detection.value.count == 12:
            result.symbology = .ean13
            result.value = [UInt8(ascii: "0")] + detection.value
            result.printed = Detection.Printed(symbology: .upcA, value: detection.value)
        case .upcE where detection.value.count == 8:
            if let upcA = Self.expandUPCE(detection.value) {
                result.symbology = .ean13
                result.value = [UInt8(ascii: "0")] + upcA
                result.printed = Detection.Printed(symbology: .upcE, value: detection.value)
            }
        default: break
        }
        return result
    }

    /// UPC-E (number system, 6 digits, check) to UPC-A (12 digits); nil when it is not UPC-E.
    public static func expandUPCE(_ code: [UInt8]) -> [UInt8]? {
        guard code.count == 8, code.allSatisfy({ (0x30...0x39).contains($0) }), code[0] == 0x30 || code[0] == 0x31
        else {
            return nil
        }
        let d = code[1...6].map { $0 }
        let zero = UInt8(ascii: "0")
        let body: [UInt8]
        switch d[5] {
        case 0x30, 0x31, 0x32: body = [d[0], d[1], d[5], zero, zero, zero, zero, d[2], d[3], d[4]]
        case 0x33: body = [d[0], d[1], d[2], zero, zero, zero, zero, zero, d[3], d[4]]
        case 0x34: body = [d[0], d[1], d[2], d[3], zero, zero, zero, zero, zero, d[4]]
        default: body = [d[0], d[1], d[2], d[3], d[4], zero, zero, zero, zero, d[5]]
        }
        return [code[0]] + body + [code[7]]
    }

}
