import ScanCore
import ScanTestTiming
import ScanVision
import Testing

@testable import ScanAgent

/// Where zxing-cpp's pass over the region of interest reads, frame by frame.
@Suite("camera decoder: zxing-cpp's pass", .timed)
struct CameraDecoderTests {
    static func decoder(mode: DecoderConfig.Mode, everyNth: Int) throws -> CameraDecoder {
        var config = DecoderConfig()
        config.symbologies = [.ean13, .code128, .dataMatrix]
        config.mode = mode
        config.zxingEveryNthFrame = everyNth
        config.sweepOverlap = 120
        return try CameraDecoder(config: config, camera: "test")
    }

    @Test("guided: one of N stripes a frame, reaching sweepOverlap into the next; N frames cover every row")
    func stripes() throws {
        let decoder = try Self.decoder(mode: .guided, everyNth: 8)
        let boxes = (0..<16).map { decoder.zxingPassBox(frame: $0, width: 3840, height: 2160) }
        #expect(boxes.allSatisfy { $0 != nil })
        let first = try #require(boxes[0])
        #expect(first == Box(minX: 0, minY: 0, maxX: 3839, maxY: 270 + 120 - 1))
        var covered = [Bool](repeating: false, count: 2160)
        for box in boxes.prefix(8).compactMap({ $0 }) {
            #expect(box.minX == 0 && box.maxX == 3839 && box.height <= 270 + 120)
            for row in box.minY...box.maxY { covered[row] = true }
        }
        #expect(covered.allSatisfy { $0 }, "every row within 8 frames")
        #expect(boxes[8] == boxes[0] && boxes[15] == boxes[7], "then again")
        #expect(boxes[7]?.maxY == 2159)
    }

    @Test("full mode, or a pass every frame: the whole region of interest, every Nth frame")
    func wholeRegion() throws {
        let full = try Self.decoder(mode: .full, everyNth: 3)
        let area = Box(minX: 0, minY: 0, maxX: 1919, maxY: 1079)
        #expect(
            (0..<6).map { full.zxingPassBox(frame: $0, width: 1920, height: 1080) } == [area, nil, nil, area, nil, nil])
        let every = try Self.decoder(mode: .guided, everyNth: 1)
        #expect((0..<3).map { every.zxingPassBox(frame: $0, width: 1920, height: 1080) } == [area, area, area])
    }

    @Test(
        "the pass looks for inverted codes unless it is only the guided mode's net: full mode, or zxingSweep symbologies (reverse-printed codes) listed"
    )
    func inversion() {
        let matrix: Set<Symbology> = [.dataMatrix]
        #expect(!CameraDecoder.passSettings(matrix, sweep: [], mode: .guided).tryInvert)
        #expect(CameraDecoder.passSettings(matrix.union([.qrCode]), sweep: [.qrCode], mode: .guided).tryInvert)
        #expect(CameraDecoder.passSettings(matrix, sweep: [], mode: .full).tryInvert)
        #expect(CameraDecoder.passSettings(matrix, sweep: [], mode: .guided).symbologies == matrix)
    }
}
