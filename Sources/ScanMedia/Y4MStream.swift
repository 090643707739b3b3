import ScanCore

/// Where a YUV4MPEG2 clip's bytes come from: a file (scan-agent's `ClipReader`) or memory
/// (`MemoryClipBytes`: fuzzing and tests). The stream's logic is the same for both.
public protocol ClipBytes {
    /// The next byte; nil at the end.
    mutating func nextByte() -> UInt8?
    /// Fills as much of `buffer` as there are bytes left; returns how many it read.
    mutating func read(into buffer: UnsafeMutableRawBufferPointer) -> Int
    /// Moves past up to `count` bytes (the chroma planes) without handing them over; returns how
    /// many there were.
    mutating func skip(_ count: Int) -> Int
}

extension ClipBytes {
    /// `skip` by reading: for a source that cannot seek (a pipe).
    public mutating func readPast(_ count: Int) -> Int {
        var scratch = [UInt8](repeating: 0, count: min(count, 1 << 16))
        var done = 0
        while done < count {
            let got = scratch.withUnsafeMutableBytes { raw in
                read(into: UnsafeMutableRawBufferPointer(rebasing: raw[0..<min(raw.count, count - done)]))
            }
            guard got > 0 else { break }
            done += got
        }
        return done
    }
}

/// A clip held in memory.
public struct MemoryClipBytes: ClipBytes {
    let bytes: [UInt8]
    var offset = 0

    public init(_ bytes: [UInt8]) { self.bytes = bytes }

    public mutating func nextByte() -> UInt8? {
        guard offset < bytes.count else { return nil }
        defer { offset += 1 }
        return bytes[offset]
    }

    public mutating func read(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        let count = min(buffer.count, bytes.count - offset)
        guard count > 0 else { return 0 }
        bytes.withUnsafeBytes { source in
            buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: source[offset..<(offset + count)]))
        }
        offset += count
        return count
    }

    public mutating func skip(_ count: Int) -> Int {
        let skipped = max(0, min(count, bytes.count - offset))
        offset += skipped
        return skipped
    }
}

/// A YUV4MPEG2 stream read frame by frame, luma only (the chroma planes are skipped): the header
/// line, then for each frame a `FRAME` line and the frame's planes.
public struct Y4MStream<Source: ClipBytes> {
    /// What is wrong with the stream: in the header (`frame` nil) or at a frame (its index).
    public struct Failure: Error, Sendable, Equatable {
        public var frame: Int?
        public var reason: String
    }

    public private(set) var source: Source
    public let header: Y4MHeader
    public private(set) var framesRead = 0

    public init(source: Source) throws(Failure) {
        self.source = source
        guard case .line(let line) = Self.readLine(&self.source, limit: 4096) else {
            throw Failure(frame: nil, reason: "empty file or header longer than 4096 bytes")
        }
        do {
            header = try Y4MHeader.parse(line)
        } catch {
            throw Failure(frame: nil, reason: error.reason)
        }
    }

    /// Reads the next frame's luma into `image` (reusing its storage). False at the clean end of
    /// the clip; throws for a truncated or damaged frame, naming its index.
    public mutating func readFrame(into image: inout GrayImage) throws(Failure) -> Bool {
        let line: [UInt8]
        switch Self.readLine(&source, limit: 1024) {
        case .end: return false
        case .tooLong: throw Failure(frame: framesRead, reason: "frame header longer than 1024 bytes")
        case .line(let text): line = text
        }
        guard line.starts(with: Array("FRAME".utf8)) else {
            throw Failure(frame: framesRead, reason: "expected a FRAME marker (damaged clip)")
        }
        if image.width != header.width || image.height != header.height {
            image = GrayImage(width: header.width, height: header.height, fill: 0)
        }
        let lumaBytes = header.lumaBytes
        let lumaRead = image.pixels.withUnsafeMutableBytes { raw in
            source.read(into: UnsafeMutableRawBufferPointer(rebasing: raw[0..<lumaBytes]))
        }
        let chromaBytes = header.frameBytes - lumaBytes
        let chromaRead = chromaBytes > 0 ? source.skip(chromaBytes) : 0
        guard lumaRead == lumaBytes, chromaRead == chromaBytes else {
            throw Failure(
                frame: framesRead, reason: "truncated: \(lumaRead + chromaRead) of \(header.frameBytes) bytes")
        }
        framesRead += 1
        return true
    }

    enum Line {
        case line([UInt8])
        /// The end of the stream before any byte.
        case end
        case tooLong
    }

    /// Bytes up to a newline (not included), or to the end of the stream.
    static func readLine(_ source: inout Source, limit: Int) -> Line {
        var line: [UInt8] = []
        while line.count <= limit {
            guard let byte = source.nextByte() else { return line.isEmpty ? .end : .line(line) }
            if byte == 0x0A { return .line(line) }
            line.append(byte)
        }
        return .tooLong
    }
}
