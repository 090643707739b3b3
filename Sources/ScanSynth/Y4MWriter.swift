import Foundation
import ScanCore

/// Writes a YUV4MPEG2 clip: the header once, then each frame's luma (and neutral chroma for 4:2:0 etc.).
public final class Y4MWriter {
    private let handle: FileHandle
    public let header: Y4MHeader
    private let chromaPlanes: Data

    public init(path: String, header: Y4MHeader) throws {
        _ = FileManager.default.createFile(atPath: path, contents: nil)
        guard let handle = FileHandle(forWritingAtPath: path) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path])
        }
        self.handle = handle
        self.header = header
        chromaPlanes = Data(repeating: 128, count: header.frameBytes - header.lumaBytes)
        try handle.write(contentsOf: Data(header.line.utf8))
    }

    public func write(_ frame: GrayImage) throws {
        precondition(frame.width == header.width && frame.height == header.height, "frame size differs from the clip's")
        var data = Data("FRAME\n".utf8)
        data.append(contentsOf: frame.pixels)
        data.append(chromaPlanes)
        try handle.write(contentsOf: data)
    }

    public func close() throws { try handle.close() }
}

extension SceneRenderer {
    /// Renders every frame of the scene into a clip file.
    public func writeClip(to path: String) throws {
        let writer = try Y4MWriter(path: path, header: scene.header)
        for frame in 0..<scene.frameCount { try writer.write(render(frame: frame)) }
        try writer.close()
    }
}
