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
    /// Fills `boxes` (in the coordinates of a frame this image's pixel (0, 0) lies at `origin`
    /// of) with white, each clamped to the image.
    public mutating func paintWhite(_ boxes: [Box], origin: Point = Point(x: 0, y: 0)) {
        let bounds = self.bounds
        for frameBox in boxes {
            let local = frameBox.offset(dx: -origin.x, dy: -origin.y)
            guard let box = local.clamped(to: bounds) else { continue }
            pixels.withUnsafeMutableBufferPointer { out in
                for row in box.minY...box.maxY {
                    let start = row * width
                    for x in box.minX...box.maxX { out[start + x] = 255 }
                }
            }
        }
    }

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

    /// Twice the size each way, bilinear: thin bars and small modules get pixels of their own, for
    /// a second look at a code the engines could not resolve.
    public func doubled() -> GrayImage {
        guard width > 0, height > 0 else { return self }
        let w = width * 2
        let h = height * 2
        var out = [UInt8](repeating: 0, count: w * h)
        for y in 0..<h {
            // The source position of this pixel's centre, in quarters of a pixel.
            let sy4 = max(0, 2 * y - 1)
            let y0 = min(sy4 / 4, height - 1)
            let y1 = min(y0 + 1, height - 1)
            let fy = sy4 % 4
            for x in 0..<w {
                let sx4 = max(0, 2 * x - 1)
                let x0 = min(sx4 / 4, width - 1)
                let x1 = min(x0 + 1, width - 1)
                let fx = sx4 % 4
                let top = Int(pixels[y0 * width + x0]) * (4 - fx) + Int(pixels[y0 * width + x1]) * fx
                let bottom = Int(pixels[y1 * width + x0]) * (4 - fx) + Int(pixels[y1 * width + x1]) * fx
                out[y * w + x] = UInt8((top * (4 - fy) + bottom * fy + 8) / 16)
            }
        }
        return GrayImage(width: w, height: h, pixels: out)
    }

    /// Each pixel the mean of its 3×3 neighbourhood (the border as it is): print grain and JPEG
    /// blocks smoothed away.
    public func blurred() -> GrayImage {
        guard width >= 3, height >= 3 else { return self }
        var out = pixels
        for y in 1..<(height - 1) {
            for x in 1..<(width - 1) {
                var sum = 0
                for dy in -1...1 {
                    let row = (y + dy) * width + x
                    sum += Int(pixels[row - 1]) + Int(pixels[row]) + Int(pixels[row + 1])
                }
                out[y * width + x] = UInt8((sum + 4) / 9)
            }
        }
        return GrayImage(width: width, height: height, pixels: out)
    }
}
