import ScanCore
import ScanMedia

/// A label on a box: a code on white paper.
public struct SynthLabel: Sendable {
    public var symbology: SynthSymbology
    public var data: String
    /// Pixels per module (the code's X-dimension as the camera sees it).
    public var moduleSize: Int
    /// Top-left corner of the label within its box.
    public var offsetX: Int
    public var offsetY: Int
    public var rotationDegrees: Double
    /// Bar height of linear codes, in pixels.
    public var barHeight: Int
    /// Light code on dark ground (reverse print, as on reusable totes and etched plates).
    public var inverted: Bool
    /// Torn: a blank band down the middle fifth of the code, across every bar row, so that no
    /// scan line reads it (the label is still plainly a barcode).
    public var torn: Bool = false
    /// GS1 data (the value written with AIs in brackets, "[00]…"): GS1-128, GS1 DataMatrix.
    public var gs1: Bool = false
    /// The code is drawn at `moduleSize` and then scaled by this (0.5 with moduleSize 3: 1.5 px a
    /// module, as a far or small label looks).
    public var scale: Double = 1
    /// A fault of the picture that no reader gets past (nil: none): the label is seen, not read.
    public var fault: Fault?

    /// How a label's picture fails, as a camera shows it.
    public enum Fault: String, Sendable, CaseIterable {
        /// Out of focus (its box stands above or below the focus plane): the whole box blurred,
        /// two box passes a module wide each way (a spread of about a module), so the narrow bars
        /// melt into grey.
        case defocused
        /// Glare: the paper clipped white, the bars lifted to a pale grey, and the white blooming a
        /// pixel into every bar (so the narrow ones vanish).
        case overexposed
    }

    /// Drawn so that it cannot be read (torn, a fault, or below a pixel a module): each should be
    /// one no-read.
    public var unreadable: Bool { torn || fault != nil || Double(moduleSize) * scale < 1 }

    public init(
        _ symbology: SynthSymbology, _ data: String, moduleSize: Int = 2, offsetX: Int = 10, offsetY: Int = 10,
        rotationDegrees: Double = 0, barHeight: Int = 44, inverted: Bool = false, torn: Bool = false,
        gs1: Bool = false
    ) {
        self.torn = torn
        self.gs1 = gs1
        self.symbology = symbology
        self.data = data
        self.moduleSize = moduleSize
        self.offsetX = offsetX
        self.offsetY = offsetY
        self.rotationDegrees = rotationDegrees
        self.barHeight = barHeight
        self.inverted = inverted
    }
}

extension SynthLabel {
    /// The same label drawn `factor` times as large.
    public func scaledBy(_ factor: Double) -> SynthLabel {
        var label = self
        label.scale = factor
        return label
    }
}

/// A box on the belt, moving at constant speed.
public struct SynthItem: Sendable {
    public var name: String
    public var width: Int
    public var height: Int
    /// Top-left corner at frame 0.
    public var startX: Double
    public var startY: Double
    /// Pixels per frame.
    public var velocityX: Double
    public var velocityY: Double
    public var labels: [SynthLabel]
    public var shade: UInt8
    /// The frames it is on the belt (put down, taken away: a pack bench); nil: all.
    public var present: Range<Int>?
    /// Where its labels go: at their offsets, or each below (`column`) or after (`row`) the one
    /// before as drawn, `gap` pixels apart (turned labels grow, and must not cover each other).
    public var layout: LabelLayout = .offsets

    public enum LabelLayout: Sendable, Equatable {
        case offsets
        case column(gap: Int)
        case row(gap: Int)
    }

    public init(
        name: String, width: Int, height: Int, startX: Double, startY: Double, velocityX: Double, velocityY: Double = 0,
        labels: [SynthLabel], shade: UInt8 = 170
    ) {
        self.name = name
        self.width = width
        self.height = height
        self.startX = startX
        self.startY = startY
        self.velocityX = velocityX
        self.velocityY = velocityY
        self.labels = labels
        self.shade = shade
    }

    /// Where its top-left corner is in `frame`; far out of view in frames it is not `present`.
    public func position(frame: Int) -> (x: Double, y: Double) {
        if let present, !present.contains(frame) { return (-1_000_000, -1_000_000) }
        return (startX + velocityX * Double(frame), startY + velocityY * Double(frame))
    }
}

/// Something dark in front of the belt for some frames (an arm over a label).
public struct SynthOccluder: Sendable {
    /// Frame coordinates, or relative to `followsItem`'s top-left corner.
    public var x: Int
    public var y: Int
    public var width: Int
    public var height: Int
    public var followsItem: Int?
    public var frames: Range<Int>

    public init(x: Int, y: Int, width: Int, height: Int, followsItem: Int? = nil, frames: Range<Int>) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
        self.followsItem = followsItem
        self.frames = frames
    }
}

/// A deterministic conveyor scene: frame size, items, occluders, noise, blur.
public struct SynthScene: Sendable {
    public var width: Int
    public var height: Int
    public var frameCount: Int
    public var fps: Int
    public var items: [SynthItem]
    public var occluders: [SynthOccluder]
    /// Amplitude of sensor noise (grey levels, ±).
    public var noise: Int
    /// Fraction of a frame interval the shutter is open: motion blur is speed × exposure pixels long.
    public var exposure: Double
    public var seed: UInt64
    public var chroma: Y4MHeader.Chroma
    /// Dark slats across the belt every this many pixels (0: a plain belt).
    public var beltSlats: Int = 0

    public init(
        width: Int = 640, height: Int = 400, frameCount: Int, fps: Int = 30, items: [SynthItem],
        occluders: [SynthOccluder] = [], noise: Int = 6, exposure: Double = 0, seed: UInt64 = 1,
        chroma: Y4MHeader.Chroma = .mono
    ) {
        self.width = width
        self.height = height
        self.frameCount = frameCount
        self.fps = fps
        self.items = items
        self.occluders = occluders
        self.noise = noise
        self.exposure = exposure
        self.seed = seed
        self.chroma = chroma
    }

    public var header: Y4MHeader {
        Y4MHeader(width: width, height: height, frameRateNumerator: fps, frameRateDenominator: 1, chroma: chroma)
    }
}

/// One code the camera should report once.
public struct ExpectedCode: Sendable, Equatable {
    public var item: Int
    public var label: Int
    public var value: String
    public var symbology: Symbology
    /// Frames in which the whole label is inside the frame (or, for a partial one, any of it).
    public var framesInView: ClosedRange<Int>
    /// Never wholly in view for long enough (cut by the frame edge at the start or end of the
    /// clip): a reader may report it once, or not at all.
    public var partial: Bool
}

extension SynthScene {
    /// Every label turned to an angle drawn uniformly from `degrees` (`scan-synth --angles`),
    /// repeatably for one `seed`; the labels of one item are stacked so that none covers another,
    /// and each box grows to hold its labels.
    public mutating func turnLabels(within degrees: ClosedRange<Double>, seed: UInt64) {
        var random = SplitMix(seed: seed ^ 0xA76_1E5)
        for index in items.indices {
            if items[index].labels.count > 1 && items[index].layout == .offsets {
                items[index].layout = .column(gap: 8)
            }
            for label in items[index].labels.indices {
                let fraction = Double(random.next() % 1_000_001) / 1_000_000
                items[index].labels[label].rotationDegrees =
                    degrees.lowerBound + fraction * (degrees.upperBound - degrees.lowerBound)
            }
        }
    }

    /// Every label drawn `factor` times as large as the scene has it (`scan-synth --scale`): 0.625
    /// turns 2 px a module into 1.25, a far or finely printed label.
    public mutating func scaleLabels(by factor: Double) {
        for index in items.indices {
            for label in items[index].labels.indices { items[index].labels[label].scale *= factor }
        }
    }
}
