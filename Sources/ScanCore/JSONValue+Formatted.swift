extension JSONValue {
    /// The value as indented JSON text (two spaces a level, members in their order): for files
    /// and commands people read. Whole numbers are written without a fraction; others in Swift's
    /// shortest form that reads back to the same number; a non-finite number as null.
    /// Strings are written terminal-safe (`appendTerminalSafeString`): the same JSON value, and no
    /// control character reaches the screen raw.
    public func formatted() -> String {
        var bytes: [UInt8] = []
        write(to: &bytes, depth: 0)
        return String(decoding: bytes, as: UTF8.self)
    }

    private func write(to bytes: inout [UInt8], depth: Int) {
        switch self {
        case .null: bytes += Array("null".utf8)
        case .bool(let value): bytes += Array((value ? "true" : "false").utf8)
        case .number(let value): bytes += Array(Self.number(value).utf8)
        case .string(let value): JSONWriter.appendTerminalSafeString(value, to: &bytes)
        case .array(let elements):
            writeContainer(elements.map { (nil, $0) }, open: "[", close: "]", to: &bytes, depth: depth)
        case .object(let members):
            writeContainer(members.map { ($0.0, $0.1) }, open: "{", close: "}", to: &bytes, depth: depth)
        }
    }

    private func writeContainer(
        _ items: [(String?, JSONValue)], open: Character, close: Character, to bytes: inout [UInt8], depth: Int
    ) {
        bytes += Array(String(open).utf8)
        guard !items.isEmpty else {
            bytes += Array(String(close).utf8)
            return
        }
        let inner = [UInt8](repeating: UInt8(ascii: " "), count: 2 * (depth + 1))
        for (index, (key, value)) in items.enumerated() {
            bytes += Array((index == 0 ? "\n" : ",\n").utf8) + inner
            if let key {
                JSONWriter.appendTerminalSafeString(key, to: &bytes)
                bytes += Array(": ".utf8)
            }
            value.write(to: &bytes, depth: depth + 1)
        }
        bytes += [UInt8(ascii: "\n")] + [UInt8](repeating: UInt8(ascii: " "), count: 2 * depth)
        bytes += Array(String(close).utf8)
    }

    private static func number(_ value: Double) -> String {
        guard value.isFinite else { return "null" }
        if value.rounded() == value && abs(value) < 9.0e15 { return String(Int64(value)) }
        return "\(value)"
    }
}
