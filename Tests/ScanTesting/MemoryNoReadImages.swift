import ScanAgentRuntime
import ScanCore

/// Keeps no-read pictures in memory; "PNG" here is a made-up encoding (a signature, the size,
/// the pixels), enough to check what reaches the event.
public final class MemoryNoReadImages: NoReadImages {
    public private(set) var kept: [(name: String, png: [UInt8])] = []
    /// Every call fails (a full disk).
    public var failing = false

    public struct DiskFull: Error {}

    public init() {}

    public func keep(_ picture: GrayImage, name: String) throws -> (png: [UInt8], file: String?) {
        if failing { throw DiskFull() }
        let png: [UInt8] =
            [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, UInt8(picture.width & 0xFF), UInt8(picture.height & 0xFF)]
            + picture.pixels.prefix(16)
        kept.append((name, png))
        return (png, name)
    }
}
