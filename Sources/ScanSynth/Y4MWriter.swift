import ScanCore
import ScanMedia

#if canImport(Glibc)
    import Glibc
#endif

/// A clip that could not be written, naming the file.
public struct ClipWriteError: Error, Sendable, CustomStringConvertible {
    public var path: String
    public var reason: String
    public var description: String { "cannot write \(path): \(reason)" }
}

/// Writes a YUV4MPEG2 clip: the header once, then each frame's luma (and neutral chroma for
/// 4:2:0 etc.). The file is opened in place (never replaced), so a device path works too.
public final class Y4MWriter {
    private let file: UnsafeMutablePointer<FILE>
    public let path: String
    public let header: Y4MHeader
    private let chromaPlanes: [UInt8]

    public init(path: String, header: Y4MHeader) throws(ClipWriteError) {
        guard let file = fopen(path, "wb") else {
            throw ClipWriteError(path: path, reason: String(cString: strerror(errno)))
        }
        self.file = file
        self.path = path
        self.header = header
        chromaPlanes = [UInt8](repeating: 128, count: header.frameBytes - header.lumaBytes)
        try put(Array(header.line.utf8))
    }

    deinit { fclose(file) }

    private func put(_ bytes: [UInt8]) throws(ClipWriteError) {
        let written = bytes.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, file) }
        guard written == bytes.count else { throw ClipWriteError(path: path, reason: String(cString: strerror(errno))) }
    }

    public func write(_ frame: GrayImage) throws(ClipWriteError) {
        guard frame.width == header.width, frame.height == header.height else {
            throw ClipWriteError(
                path: path, reason: "frame is \(frame.width)x\(frame.height), the clip \(header.width)x\(header.height)"
            )
        }
        try put(Array("FRAME\n".utf8))
        try put(frame.pixels)
        if !chromaPlanes.isEmpty { try put(chromaPlanes) }
    }

    public func close() throws(ClipWriteError) {
        guard fflush(file) == 0 else { throw ClipWriteError(path: path, reason: String(cString: strerror(errno))) }
    }
}

extension SceneRenderer {
    /// Renders every frame of the scene into a clip file.
    public func writeClip(to path: String) throws(ClipWriteError) {
        let writer = try Y4MWriter(path: path, header: scene.header)
        for frame in 0..<scene.frameCount { try writer.write(render(frame: frame)) }
        try writer.close()
    }
}
