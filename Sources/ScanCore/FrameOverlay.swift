/// A colour picture, 8 bits a channel, red, green, blue (what a preview is drawn on).
public struct RGBImage: Sendable, Equatable {
    public let width: Int
    public let height: Int
    /// `width × height × 3` bytes, row by row.
    public var pixels: [UInt8]

    public init(width: Int, height: Int, pixels: [UInt8]) {
        precondition(width >= 0 && height >= 0 && pixels.count == width * height * 3, "pixel count")
        self.width = width
        self.height = height
        self.pixels = pixels
    }

    public func pixel(x: Int, y: Int) -> RGB {
        let at = (y * width + x) * 3
        return RGB(pixels[at], pixels[at + 1], pixels[at + 2])
    }
}

public struct RGB: Sendable, Equatable, Hashable {
    public var red: UInt8
    public var green: UInt8
    public var blue: UInt8
    public init(_ red: UInt8, _ green: UInt8, _ blue: UInt8) {
        self.red = red
        self.green = green
        self.blue = blue
    }
}

/// A frame scaled down for a person to look at, with boxes drawn on it: what `scanadmin agent
/// snapshot` writes. Pure: the agent encodes the result (JPEG) behind a port.
public enum FrameOverlay {
    /// One box to draw, in the frame's pixels.
    public struct Mark: Sendable, Equatable {
        public var box: Box
        public var colour: RGB
        public init(box: Box, colour: RGB) {
            self.box = box
            self.colour = colour
        }
    }

    /// The whole-number factor that brings `width` to at most `maxWidth` (1: as it is).
    public static func factor(width: Int, maxWidth: Int) -> Int {
        max(1, (width + max(1, maxWidth) - 1) / max(1, maxWidth))
    }

    /// `frame` shrunk by `factor` (each output pixel the mean of a factor × factor block), grey,
    /// with each mark's outline drawn `thickness` pixels wide over it (clipped to the picture).
    public static func draw(_ frame: GrayImage, marks: [Mark], factor: Int, thickness: Int = 2) -> RGBImage {
        let factor = max(1, factor)
        let width = max(1, frame.width / factor)
        let height = max(1, frame.height / factor)
        var pixels = [UInt8](repeating: 0, count: width * height * 3)
        let area = factor * factor
        frame.pixels.withUnsafeBufferPointer { source in
            for y in 0..<min(height, frame.height) {
                for x in 0..<min(width, frame.width) {
                    var sum = 0
                    for dy in 0..<factor where y * factor + dy < frame.height {
                        let row = (y * factor + dy) * frame.width
                        for dx in 0..<factor where x * factor + dx < frame.width {
                            sum += Int(source[row + x * factor + dx])
                        }
                    }
                    let value = UInt8(min(255, sum / area))
                    let at = (y * width + x) * 3
                    pixels[at] = value
                    pixels[at + 1] = value
                    pixels[at + 2] = value
                }
            }
        }
        var image = RGBImage(width: width, height: height, pixels: pixels)
        for mark in marks {
            let box = Box(
                minX: mark.box.minX / factor, minY: mark.box.minY / factor, maxX: mark.box.maxX / factor,
                maxY: mark.box.maxY / factor)
            outline(&image, box, mark.colour, thickness: max(1, thickness))
        }
        return image
    }

    private static func outline(_ image: inout RGBImage, _ box: Box, _ colour: RGB, thickness: Int) {
        func fill(_ x0: Int, _ y0: Int, _ x1: Int, _ y1: Int) {
            let (fromX, toX) = (max(0, x0), min(image.width - 1, x1))
            let (fromY, toY) = (max(0, y0), min(image.height - 1, y1))
            guard fromX <= toX, fromY <= toY else { return }
            for y in fromY...toY {
                for x in fromX...toX {
                    let at = (y * image.width + x) * 3
                    image.pixels[at] = colour.red
                    image.pixels[at + 1] = colour.green
                    image.pixels[at + 2] = colour.blue
                }
            }
        }
        let t = thickness - 1
        fill(box.minX - t, box.minY - t, box.maxX + t, box.minY)  // top
        fill(box.minX - t, box.maxY, box.maxX + t, box.maxY + t)  // bottom
        fill(box.minX - t, box.minY, box.minX, box.maxY)  // left
        fill(box.maxX, box.minY, box.maxX + t, box.maxY)  // right
    }
}
