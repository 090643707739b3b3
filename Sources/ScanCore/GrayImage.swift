/// An 8-bit luma image: what every decoder in ScanTrack consumes.
///
/// Rows are packed (`stride == width`); frames from clips and cameras are copied into this
/// layout once, so decoders never deal with padding.
public struct GrayImage: Sendable, Equatable {
    public let width: Int
    public let height: Int
    public var pixels: [UInt8]

    public init(width: Int, height: Int, pixels: [UInt8]) {
        precondition(width >= 0 && height >= 0 && pixels.count == width * height, "pixel count must be width × height")
        self.width = width
        self.height = height
        self.pixels = pixels
    }

    /// The luma of a colour pixel with the BT.601 weights (77, 150, 29)/256, as cameras deliver Y;
    /// a pixel that is not opaque is laid over white (a label's paper), as PNG's transparency is.
    @inlinable
    public static func luma(red: UInt8, green: UInt8, blue: UInt8, alpha: UInt8 = 255) -> UInt8 {
        let y = (77 * Int(red) + 150 * Int(green) + 29 * Int(blue)) >> 8
        guard alpha != 255 else { return UInt8(y) }
        return UInt8((y * Int(alpha) + 255 * (255 - Int(alpha)) + 127) / 255)
    }

    /// The whole image as a box.
    public var bounds: Box { Box(minX: 0, minY: 0, maxX: width - 1, maxY: height - 1) }

    /// A uniform image, handy as a canvas.
    public init(width: Int, height: Int, fill: UInt8 = 255) {
        self.init(width: width, height: height, pixels: [UInt8](repeating: fill, count: width * height))
    }

    @inlinable
    public subscript(x: Int, y: Int) -> UInt8 {
        get { pixels[y * width + x] }
        set { pixels[y * width + x] = newValue }
    }

    /// The pixels inside `box` (inclusive, clamped by the caller to the image) as an image of their own.
    public func cropped(to box: Box) -> GrayImage {
        var out = [UInt8]()
        out.reserveCapacity(box.width * box.height)
        for row in box.minY...box.maxY {
            let start = row * width + box.minX
            out += pixels[start..<start + box.width]
        }
        return GrayImage(width: box.width, height: box.height, pixels: out)
    }
}

extension GrayImage {
    /// Half the size each way, each pixel the mean of four.
    public func halved() -> GrayImage {
        let w = width / 2
        let h = height / 2
        var out = [UInt8](repeating: 0, count: w * h)
        for y in 0..<h {
            for x in 0..<w {
                let a = Int(pixels[2 * y * width + 2 * x]) + Int(pixels[2 * y * width + 2 * x + 1])
                let b = Int(pixels[(2 * y + 1) * width + 2 * x]) + Int(pixels[(2 * y + 1) * width + 2 * x + 1])
                out[y * w + x] = UInt8((a + b + 2) / 4)
            }
        }
        return GrayImage(width: w, height: h, pixels: out)
    }
}
