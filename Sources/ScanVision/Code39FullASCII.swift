/// Code 39's full ASCII mode: a pair of characters stands for one of the characters Code 39 has
/// no bar pattern for (`+A` is `a`, `$M` a carriage return, `/A` an exclamation mark). One engine
/// may print a label's characters as they are and the other their full ASCII reading.
public enum Code39FullASCII {
    /// The full ASCII reading of `raw` (Code 39's own characters), nil when a shift character
    /// (`$`, `%`, `/`, `+`) is not followed by a letter that forms a pair, or when there is none:
    /// then the value has no full ASCII reading other than itself.
    public static func decode(_ raw: [UInt8]) -> [UInt8]? {
        var out: [UInt8] = []
        var shifted = false
        var index = 0
        while index < raw.count {
            let byte = raw[index]
            guard [0x24, 0x25, 0x2F, 0x2B].contains(byte) else {
                out.append(byte)
                index += 1
                continue
            }
            guard index + 1 < raw.count, let character = pair(byte, raw[index + 1]) else { return nil }
            out.append(character)
            shifted = true
            index += 2
        }
        return shifted ? out : nil
    }

    /// The character a shift (`$ % / +`) and a letter stand for.
    static func pair(_ shift: UInt8, _ letter: UInt8) -> UInt8? {
        guard (0x41...0x5A).contains(letter) else { return nil }
        let n = letter - 0x41  // A = 0
        switch shift {
        case 0x24: return n + 0x01  // $A…$Z: control characters 1…26
        case 0x2B: return n + 0x61  // +A…+Z: a…z
        case 0x2F:  // /A…/O: ! to /, /Z: colon
            if n <= 14 { return n + 0x21 }
            return n == 25 ? 0x3A : nil
        default:  // %
            switch n {
            case 0...4: return n + 0x1B  // ESC FS GS RS US
            case 5...9: return n - 5 + 0x3B  // ; < = > ?
            case 10...14: return n - 10 + 0x5B  // [ \ ] ^ _
            case 15...19: return n - 15 + 0x7B  // { | } ~ DEL
            case 20: return 0x00
            case 21: return 0x40  // @
            case 22: return 0x60  // `
            default: return 0x7F  // %X %Y %Z: DEL
            }
        }
    }
}
