import ScanCore

#if canImport(Glibc)
    import Glibc
#endif

/// A clip that cannot be read, naming the file and, past the header, the frame.
public struct ClipError: Error, Sendable, Equatable, CustomStringConvertible {
    public var file: String
    public var frame: Int?
    public var reason: String

    public var description: String {
        if let frame { return "\(file): frame \(frame): \(reason)" }
        return "\(file): \(reason)"
    }
}

/// Reads YUV4MPEG2 clips frame by frame, luma only (chroma planes are skipped).
public final class ClipReader {
    public let path: String
    public let header: Y4MHeader
    private let file: UnsafeMutablePointer<FILE>
    public private(set) var framesRead = 0
    private var chromaScratch: [UInt8] = []

    public init(path: String) throws(ClipError) {
        guard let file = fopen(path, "rb") else {
            throw ClipError(file: path, frame: nil, reason: String(cString: strerror(errno)))
        }
        self.path = path
        self.file = file
        setvbuf(file, nil, _IOFBF, 1 << 20)
        do {
            guard let line = Self.readLine(file, limit: 4096) else {
                throw ClipError(file: path, frame: nil, reason: "empty file or header longer than 4096 bytes")
            }
            header = try Y4MHeader.parse(line)
        } catch let error as Y4MHeader.ParseError {
            fclose(file)
            throw ClipError(file: path, frame: nil, reason: error.reason)
        } catch let error as ClipError {
            fclose(file)
            throw error
        } catch {
            fclose(file)
            throw ClipError(file: path, frame: nil, reason: "\(error)")
        }
    }

    deinit { fclose(file) }

    /// Reads the next frame's luma into `image` (reusing its storage). False at the clean end of
    /// the clip; throws for a truncated or damaged frame, naming its index.
    public func readFrame(into image: inout GrayImage) throws(ClipError) -> Bool {
        guard let line = Self.readLine(file, limit: 1024) else {
            if feof(file) != 0 { return false }
            throw ClipError(file: path, frame: framesRead, reason: "frame header longer than 1024 bytes")
        }
        if line.isEmpty && feof(file) != 0 { return false }
        guard line.starts(with: Array("FRAME".utf8)) else {
            throw ClipError(file: path, frame: framesRead, reason: "expected a FRAME marker (damaged clip)")
        }
        if image.width != header.width || image.height != header.height {
            image = GrayImage(width: header.width, height: header.height, fill: 0)
        }
        let lumaRead = image.pixels.withUnsafeMutableBytes { raw in fread(raw.baseAddress, 1, header.lumaBytes, file) }
        let chromaBytes = header.frameBytes - header.lumaBytes
        var chromaRead = 0
        if chromaBytes > 0 {
            if chromaScratch.count < chromaBytes { chromaScratch = [UInt8](repeating: 0, count: chromaBytes) }
            chromaRead = chromaScratch.withUnsafeMutableBytes { raw in fread(raw.baseAddress, 1, chromaBytes, file) }
        }
        guard lumaRead == header.lumaBytes, chromaRead == chromaBytes else {
            throw ClipError(
                file: path, frame: framesRead,
                reason: "truncated: \(lumaRead + chromaRead) of \(header.frameBytes) bytes")
        }
        framesRead += 1
        return true
    }

    /// Bytes up to a newline (not included); nil at end of file before any byte or past `limit`.
    private static func readLine(_ file: UnsafeMutablePointer<FILE>, limit: Int) -> [UInt8]? {
        var line: [UInt8] = []
        while line.count <= limit {
            let c = getc(file)
            if c == EOF { return line.isEmpty ? nil : line }
            if c == 0x0A { return line }
            line.append(UInt8(truncatingIfNeeded: c))
        }
        return nil
    }
}
