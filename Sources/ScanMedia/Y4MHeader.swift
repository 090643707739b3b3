/// The stream header of a YUV4MPEG2 clip: `YUV4MPEG2 W1280 H720 F30:1 Ip A1:1 Cmono`.
/// Only luma is used; chroma planes are skipped by size.
public struct Y4MHeader: Sendable, Equatable {
    public enum Chroma: String, Sendable, Equatable {
        case mono, c420 = "420", c422 = "422", c444 = "444"
    }

    public var width: Int
    public var height: Int
    public var frameRateNumerator: Int
    public var frameRateDenominator: Int
    public var chroma: Chroma

    public init(
        width: Int, height: Int, frameRateNumerator: Int = 30, frameRateDenominator: Int = 1, chroma: Chroma = .mono
    ) {
        self.width = width
        self.height = height
        self.frameRateNumerator = frameRateNumerator
        self.frameRateDenominator = frameRateDenominator
        self.chroma = chroma
    }

    public var framesPerSecond: Double { Double(frameRateNumerator) / Double(frameRateDenominator) }

    /// Milliseconds from the first frame to frame `index`.
    public func offsetMilliseconds(frame index: Int) -> Int64 {
        Int64(index) * 1000 * Int64(frameRateDenominator) / Int64(frameRateNumerator)
    }

    public var lumaBytes: Int { width * height }

    /// Bytes of one frame's planes (after its `FRAME` line).
    public var frameBytes: Int {
        let chromaWidth = (width + 1) / 2
        let chromaHeight = (height + 1) / 2
        switch chroma {
        case .mono: return lumaBytes
        case .c420: return lumaBytes + 2 * chromaWidth * chromaHeight
        case .c422: return lumaBytes + 2 * chromaWidth * height
        case .c444: return 3 * lumaBytes
        }
    }

    public struct ParseError: Error, Sendable, Equatable, CustomStringConvertible {
        public var reason: String
        public var description: String { reason }
    }

    /// Parses the header line (without its newline).
    public static func parse(_ line: [UInt8]) throws(ParseError) -> Y4MHeader {
        let text = String(decoding: line, as: UTF8.self)
        let fields = text.split(separator: " ", omittingEmptySubsequences: true)
        guard fields.first == "YUV4MPEG2" else {
            throw ParseError(reason: "not a YUV4MPEG2 clip (no YUV4MPEG2 signature)")
        }
        var width: Int?
        var height: Int?
        var rate = (30, 1)
        var chroma = Chroma.c420  // the format's default when C is absent
        for field in fields.dropFirst() {
            guard let tag = field.first else { continue }  // split never yields empty fields here
            let value = field.dropFirst()
            switch tag {
            case "W": width = Int(value)
            case "H": height = Int(value)
            case "F":
                let parts = value.split(separator: ":")
                guard parts.count == 2, let n = Int(parts[0]), let d = Int(parts[1]), n > 0, d > 0 else {
                    throw ParseError(reason: "bad frame rate '\(value)' (expected F<num>:<den>)")
                }
                rate = (n, d)
            case "C":
                switch value {
                case "mono": chroma = .mono
                case "420", "420jpeg", "420paldv", "420mpeg2": chroma = .c420
                case "422": chroma = .c422
                case "444": chroma = .c444
                default:
                    throw ParseError(
                        reason:
                            "colour space C\(value) is not supported (mono, 420jpeg, 420paldv, 420mpeg2, 420, 422, 444)"
                    )
                }
            default: continue  // interlacing, aspect, comments (X…): irrelevant for luma
            }
        }
        guard let width, let height, width > 0, height > 0, width <= 16384, height <= 16384 else {
            throw ParseError(reason: "missing or bad frame size (W and H)")
        }
        return Y4MHeader(
            width: width, height: height, frameRateNumerator: rate.0, frameRateDenominator: rate.1, chroma: chroma)
    }

    /// The header line as written by `scan-synth` and ffmpeg.
    public var line: String {
        let c: String =
            switch chroma {
            case .mono: "mono"
            case .c420: "420jpeg"
            case .c422: "422"
            case .c444: "444"
            }
        return "YUV4MPEG2 W\(width) H\(height) F\(frameRateNumerator):\(frameRateDenominator) Ip A1:1 C\(c)\n"
    }
}
