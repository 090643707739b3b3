/// Writes one JSON object with keys in the order given: events are written by hand so that the
/// contract's field order is stable and no Foundation encoder runs in the agent.
public struct JSONWriter: Sendable {
    public private(set) var bytes: [UInt8] = [UInt8(ascii: "{")]
    private var first = true

    public init() { bytes.reserveCapacity(512) }

    private mutating func key(_ name: String) {
        if !first { bytes.append(UInt8(ascii: ",")) }
        first = false
        Self.appendString(name, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
    }

    public mutating func field(_ name: String, _ value: String) {
        key(name)
        Self.appendString(value, to: &bytes)
    }

    public mutating func field(_ name: String, _ value: String?) {
        guard let value else { return }
        field(name, value)
    }

    public mutating func field(_ name: String, _ value: Int) {
        key(name)
        bytes += Array(String(value).utf8)
    }

    public mutating func field(_ name: String, _ value: Bool) {
        key(name)
        bytes += Array((value ? "true" : "false").utf8)
    }

    /// A number with at most `decimals` digits after the point (no exponent, no NaN).
    public mutating func field(_ name: String, _ value: Double, decimals: Int = 1) {
        key(name)
        bytes += Array(Self.format(value, decimals: decimals).utf8)
    }

    /// `name: null` (nothing there, where the field is always written).
    public mutating func null(_ name: String) { raw(name, Array("null".utf8)) }

    /// The text, or `null` when there is none (the field written either way).
    public mutating func field(_ name: String, orNull value: String?) {
        if let value { field(name, value) } else { null(name) }
    }

    /// A value that is already JSON (a nested object or array written by another writer).
    public mutating func raw(_ name: String, _ json: [UInt8]) {
        key(name)
        bytes += json
    }

    public mutating func strings(_ name: String, _ values: [String]) {
        key(name)
        bytes.append(UInt8(ascii: "["))
        for (index, value) in values.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            Self.appendString(value, to: &bytes)
        }
        bytes.append(UInt8(ascii: "]"))
    }

    public func finished() -> [UInt8] { bytes + [UInt8(ascii: "}")] }

    /// A JSON array of values already written (objects from `finished()`).
    public static func array(_ values: [[UInt8]]) -> [UInt8] {
        var out: [UInt8] = [UInt8(ascii: "[")]
        for (index, value) in values.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            out += value
        }
        out.append(UInt8(ascii: "]"))
        return out
    }
    public var text: String { String(decoding: finished(), as: UTF8.self) }

    public static func format(_ value: Double, decimals: Int) -> String {
        guard value.isFinite else { return "0" }
        var scale = 1.0
        for _ in 0..<decimals { scale *= 10 }
        let scaled = (value * scale).rounded()
        let negative = scaled < 0
        let magnitude = Int(abs(scaled))
        let whole = magnitude / Int(scale)
        let fraction = magnitude % Int(scale)
        var text = (negative && magnitude != 0 ? "-" : "") + String(whole)
        if decimals > 0 && fraction != 0 {
            var digits = String(fraction)
            digits = String(repeating: "0", count: decimals - digits.count) + digits
            while digits.hasSuffix("0") { digits.removeLast() }
            text += "." + digits
        }
        return text
    }

    public static func appendString(_ value: String, to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes += [0x5C, 0x22]
            case UInt8(ascii: "\\"): bytes += [0x5C, 0x5C]
            case 0x0A: bytes += [0x5C, UInt8(ascii: "n")]
            case 0x0D: bytes += [0x5C, UInt8(ascii: "r")]
            case 0x09: bytes += [0x5C, UInt8(ascii: "t")]
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                bytes += [
                    0x5C, UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hex[Int(byte >> 4)],
                    hex[Int(byte & 15)],
                ]
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// A JSON string as `appendString` writes it, and also every scalar a terminal would act on
    /// (`TerminalText.needsEscape`: DEL, C1 with ESC's CSI among them, bidi overrides, isolates and
    /// marks, line and paragraph separators) as `\uXXXX`: the same string to a JSON reader.
    public static func appendTerminalSafeString(_ value: String, to bytes: inout [UInt8]) {
        guard value.unicodeScalars.contains(where: { $0.value >= 0x7F && TerminalText.needsEscape($0) }) else {
            appendString(value, to: &bytes)
            return
        }
        bytes.append(UInt8(ascii: "\""))
        let hex = Array("0123456789abcdef".utf8)
        for scalar in value.unicodeScalars {
            if scalar.value >= 0x7F && TerminalText.needsEscape(scalar) {
                let v = Int(scalar.value)  // all below 0x10000
                bytes += [
                    0x5C, UInt8(ascii: "u"), hex[(v >> 12) & 15], hex[(v >> 8) & 15], hex[(v >> 4) & 15], hex[v & 15],
                ]
            } else {
                var one: [UInt8] = []
                appendString(String(scalar), to: &one)
                bytes += one.dropFirst().dropLast()
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// `[[x,y],…]`
    public static func points(_ points: [Point]) -> [UInt8] {
        var out: [UInt8] = [UInt8(ascii: "[")]
        for (index, point) in points.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            out += Array("[\(point.x),\(point.y)]".utf8)
        }
        out.append(UInt8(ascii: "]"))
        return out
    }
}
