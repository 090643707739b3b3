import ScanCore
import ScanMedia

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

/// A clip file's bytes through stdio (a 1 MiB buffer); the chroma planes are seeked past.
struct FileClipBytes: ClipBytes {
    let file: UnsafeMutablePointer<FILE>

    mutating func nextByte() -> UInt8? {
        let c = getc(file)
        return c == EOF ? nil : UInt8(truncatingIfNeeded: c)
    }

    mutating func read(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return 0 }
        return fread(base, 1, buffer.count, file)
    }

    /// A regular file seeks past, no further than its end (a truncated clip still says so);
    /// anything else (a pipe) is read past.
    mutating func skip(_ count: Int) -> Int {
        var info = stat()
        let here = ftello(file)
        guard here >= 0, fstat(fileno(file), &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            return readPast(count)
        }
        let skipped = max(0, min(count, Int(info.st_size) - Int(here)))
        return fseeko(file, off_t(skipped), SEEK_CUR) == 0 ? skipped : readPast(count)
    }
}

/// Reads YUV4MPEG2 clip files frame by frame, luma only (`Y4MStream` over the file).
public final class ClipReader {
    public let path: String
    private let file: UnsafeMutablePointer<FILE>
    private var stream: Y4MStream<FileClipBytes>
    public var header: Y4MHeader { stream.header }
    public var framesRead: Int { stream.framesRead }

    public init(path: String) throws(ClipError) {
        guard let file = fopen(path, "rb") else {
            throw ClipError(file: path, frame: nil, reason: String(cString: strerror(errno)))
        }
        self.path = path
        self.file = file
        setvbuf(file, nil, _IOFBF, 1 << 20)
        do {
            stream = try Y4MStream(source: FileClipBytes(file: file))
        } catch {
            fclose(file)
            throw ClipError(file: path, frame: error.frame, reason: error.reason)
        }
    }

    deinit { fclose(file) }

    /// Reads the next frame's luma into `image` (reusing its storage). False at the clean end of
    /// the clip; throws for a truncated or damaged frame, naming its index.
    public func readFrame(into image: inout GrayImage) throws(ClipError) -> Bool {
        do {
            return try stream.readFrame(into: &image)
        } catch {
            throw ClipError(file: path, frame: error.frame, reason: error.reason)
        }
    }
}
