import ScanCore
import ScanZBar
import ScanZXing

/// A camera's decoding: zbar on every frame for the linear codes and QR; zxing-cpp for what zbar
/// cannot read (DataMatrix, PDF417, Aztec, MaxiCode, DataBar Limited) when the config enables
/// those, on the same region of interest, every `decoder.zxingEveryNthFrame` frames. Both feed
/// the same tracker: a code is one track whichever engine read it in a frame.
final class CameraDecoder {
    let zbar: ZBarFrameDecoder?
    let zxing: ZXingReader?
    let everyNth: Int
    private var frameCount = 0
    private let camera: String

    init(config: DecoderConfig, camera: String) throws {
        self.camera = camera
        var zbarConfig = config
        zbarConfig.symbologies = config.symbologies.filter { ZBarFrameDecoder.reads($0) }
        zbar = zbarConfig.symbologies.isEmpty ? nil : try ZBarFrameDecoder(config: zbarConfig)
        let second = Set(config.symbologies.filter { !ZBarFrameDecoder.reads($0) && ZXingReader.reads($0) })
        zxing = second.isEmpty ? nil : try ZXingReader(settings: ZXingSettings(symbologies: second))
        everyNth = max(1, config.zxingEveryNthFrame)
    }

    /// Whether any engine is configured (a config naming only symbologies neither reads has none).
    var isEmpty: Bool { zbar == nil && zxing == nil }

    var rejectedParts: Int { zbar?.rejectedParts ?? 0 }
    var rescans: Int { zbar?.rescans ?? 0 }

    func decode(_ frame: GrayImage) throws -> [Detection] {
        defer { frameCount += 1 }
        var detections = try zbar?.decode(frame) ?? []
        if let zxing, frameCount % everyNth == 0 {
            let region = zbar?.config.regionOfInterest ?? RegionOfInterest()
            if region.isWholeFrame {
                detections += try zxing.read(frame, input: "\(camera) frame \(frameCount)")
            } else {
                let box = region.pixels(width: frame.width, height: frame.height)
                detections += try zxing.read(
                    frame.cropped(to: box), origin: Point(x: box.minX, y: box.minY), input: "\(camera) frame \(frameCount)")
            }
        }
        return detections
    }
}
