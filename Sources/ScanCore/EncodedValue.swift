/// A code's value as events carry it: UTF-8 text when it is text, base64 when it is binary.
public struct EncodedValue: Sendable, Hashable {
    public var bytes: [UInt8]

    public init(bytes: [UInt8]) { self.bytes = bytes }

    /// Valid UTF-8 without NUL and without other C0 controls except GS, RS, EOT, tab, CR, LF
    /// (the separators GS1 and ISO 15434 use), else nil.
    public var text: String? {
        for byte in bytes where byte < 0x20 {
            switch byte {
            case 0x1D, 0x1E, 0x04, 0x09, 0x0A, 0x0D: continue
            default: return nil
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }

    /// "text" or "base64": the `valueEncoding` of the contract (text is the default and omitted).
    public var encoding: String { text == nil ? "base64" : "text" }

    /// The string placed in `value`.
    public var eventString: String { text ?? Base64.encode(bytes) }
}

/// Standard base64 (RFC 4648, padded). Small and allocation-light; no Foundation.
public enum Base64 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    public static func encode(_ bytes: [UInt8]) -> String {
        var out = [UInt8]()
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var index = 0
        while index + 2 < bytes.count {
            let n = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2])
            out += [
                alphabet[Int(n >> 18)], alphabet[Int(n >> 12 & 63)], alphabet[Int(n >> 6 & 63)], alphabet[Int(n & 63)],
            ]
            index += 3
        }
        let rest = bytes.count - index
        if rest == 1 {
            let n = UInt32(bytes[index]) << 16
            out += [alphabet[Int(n >> 18)], alphabet[Int(n >> 12 & 63)], UInt8(ascii: "="), UInt8(ascii: "=")]
        } else if rest == 2 {
            let n = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8
            out += [alphabet[Int(n >> 18)], alphabet[Int(n >> 12 & 63)], alphabet[Int(n >> 6 & 63)], UInt8(ascii: "=")]
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Decodes padded or unpadded base64; nil on any character outside the alphabet.
    public static func decode(_ string: String) -> [UInt8]? {
        var values = [UInt8]()
        for byte in string.utf8 where byte != UInt8(ascii: "=") {
            guard let index = alphabet.firstIndex(of: byte) else { return nil }
            values.append(UInt8(index))
        }
        var out = [UInt8]()
        var index = 0
        while index < values.count {
            let chunk = values[index..<min(index + 4, values.count)]
            guard chunk.count >= 2 else { return nil }
            var n: UInt32 = 0
            for (offset, value) in chunk.enumerated() { n |= UInt32(value) << (18 - 6 * offset) }
            out.append(UInt8(n >> 16 & 0xFF))
            if chunk.count > 2 { out.append(UInt8(n >> 8 & 0xFF)) }
            if chunk.count > 3 { out.append(UInt8(n & 0xFF)) }
            index += 4
        }
        return out
    }
}
