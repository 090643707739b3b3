import ScanCore
import ScanZBar
import ScanZXing

/// A camera's decoding: zbar on every frame for the linear codes and QR; zxing-cpp
/// - for what zbar cannot read (DataMatrix, PDF417, Aztec, MaxiCode, DataBar Limited) when the
///   config lists those, on the region of interest, every `decoder.zxingEveryNthFrame` frames;
/// - as a second opinion (`decoder.secondOpinion`): where a confirmed track was not decoded by
///   zbar in this frame, on the region where the tracker expects the code, for that code's
///   symbology only (a blurred, glared or partly covered label keeps its reads).
/// Both feed the same tracker: a code is one track whichever engine read it.
final class CameraDecoder {
    /// A confirmed track the tracker expects in this frame: what it is and where.
    struct Expected {
        var symbology: Symbology
        var value: [UInt8]
        var box: Box
    }

    let zbar: ZBarFrameDecoder?
    let zxing: ZXingReader?
    let everyNth: Int
    /// One reader per symbology, made when first needed, for second opinions.
    private var secondReaders: [Symbology: ZXingReader] = [:]
    private let secondOpinion: Bool
    private let region: RegionOfInterest
    private var frameCount = 0
    private let camera: String
    /// Regions read by the second engine, and codes it found there.
    private(set) var secondOpinionsAsked = 0
    private(set) var secondOpinionReads = 0
    /// At most this many regions a frame: a clip full of blurred codes must not stall decoding.
    static let secondOpinionsPerFrame = 4

    init(config: DecoderConfig, camera: String) throws {
        self.camera = camera
        var zbarConfig = config
        zbarConfig.symbologies = config.symbologies.filter { ZBarFrameDecoder.reads($0) }
        zbar = zbarConfig.symbologies.isEmpty ? nil : try ZBarFrameDecoder(config: zbarConfig)
        let second = Set(config.symbologies.filter { !ZBarFrameDecoder.reads($0) && ZXingReader.reads($0) })
        zxing = second.isEmpty ? nil : try ZXingReader(settings: ZXingSettings(symbologies: second))
        everyNth = max(1, config.zxingEveryNthFrame)
        secondOpinion = config.secondOpinion
        region = config.regionOfInterest
    }

    var rejectedParts: Int { zbar?.rejectedParts ?? 0 }
    var rescans: Int { zbar?.rescans ?? 0 }

    /// The frame's detections. `expected`: confirmed tracks and where the tracker predicts them.
    func decode(_ frame: GrayImage, expected: [Expected] = []) throws -> [Detection] {
        defer { frameCount += 1 }
        let input = "\(camera) frame \(frameCount)"
        var detections = try zbar?.decode(frame) ?? []
        if let zxing, frameCount % everyNth == 0 {
            if region.isWholeFrame {
                detections += try zxing.read(frame, input: input)
            } else {
                let box = region.pixels(width: frame.width, height: frame.height)
                detections += try zxing.read(frame.cropped(to: box), origin: Point(x: box.minX, y: box.minY), input: input)
            }
        }
        if secondOpinion, zbar != nil {
            detections += try secondOpinions(frame, expected: expected, found: detections, input: input)
        }
        return detections
    }

    /// zxing-cpp on the expected regions of zbar's codes that no detection of this frame covers.
    private func secondOpinions(_ frame: GrayImage, expected: [Expected], found: [Detection], input: String) throws -> [Detection] {
        let frameBox = Box(minX: 0, minY: 0, maxX: frame.width - 1, maxY: frame.height - 1)
        let missing = expected.filter { track in
            ZBarFrameDecoder.reads(track.symbology) && ZXingReader.reads(track.symbology)
                && !found.contains { $0.box.map { $0.intersectionOverUnion(track.box) > 0 } ?? false }
        }
        var extra: [Detection] = []
        for track in missing.prefix(Self.secondOpinionsPerFrame) {
            // The expected box with a margin of half its size (the prediction is not exact), inside the frame.
            let marginX = max(track.box.width / 2, 8)
            let marginY = max(track.box.height / 2, 8)
            let area = Box(
                minX: max(track.box.minX - marginX, 0), minY: max(track.box.minY - marginY, 0),
                maxX: min(track.box.maxX + marginX, frameBox.maxX), maxY: min(track.box.maxY + marginY, frameBox.maxY))
            guard area.minX < area.maxX, area.minY < area.maxY, area.width >= 16, area.height >= 8 else { continue }
            let reader: ZXingReader
            if let known = secondReaders[track.symbology] {
                reader = known
            } else {
                reader = try ZXingReader(settings: ZXingSettings(symbologies: [track.symbology]))
                secondReaders[track.symbology] = reader
            }
            secondOpinionsAsked += 1
            let found = try reader.read(frame.cropped(to: area), origin: Point(x: area.minX, y: area.minY), input: input)
            secondOpinionReads += found.count
            extra += found
        }
        return extra
    }
}

extension Tracker {
    /// Confirmed live tracks and where they should be in `frame`, for the second engine.
    func expected(at frame: Int) -> [CameraDecoder.Expected] {
        live.filter(\.confirmed).map { CameraDecoder.Expected(symbology: $0.symbology, value: $0.value, box: $0.predictedBox(at: frame)) }
    }
}
