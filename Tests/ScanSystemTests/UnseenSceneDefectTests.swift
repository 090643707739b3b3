import Foundation
import ScanCore
import ScanSynth
import ScanTestSupport
import ScanTestTiming
import Testing

/// Defects an independent check found on scenes the other tests do not use, each kept as a
/// scene here, under several seeds and speeds.
@Suite("defects found on unseen scenes", .timed)
struct UnseenSceneDefectTests {
    /// Boxes with an EAN-13 label and, beside it, a GS1 DataMatrix label (a licence plate with its
    /// AIs), `gap` pixels apart.
    static func eanBesideDataMatrix(seed: UInt64, gap: Int) -> SynthScene {
        let eans = ["400638133393", "590123412345", "978020137962"]
        return SynthScene(
            width: 800, height: 400, frameCount: 240,
            items: eans.enumerated().map { index, ean in
                let matrix = SynthLabel(
                    .dataMatrix, "[00]34012345000009001\(index)[21]LP\(400 + index)", moduleSize: 4,
                    offsetX: 16 + 210 + gap, offsetY: 24 + Int(seed % 3) * 6, gs1: true)
                return SynthItem(
                    name: "box-\(index)", width: 420, height: 170, startX: -440 - Double(index) * 520,
                    startY: 100 + Double(seed % 5) * 10, velocityX: 8 + Double(seed % 3),
                    labels: [SynthLabel(.ean13, ean, offsetX: 16, offsetY: 24), matrix])
            }, noise: 4 + Int(seed % 4) * 3, seed: seed)
    }

    /// One PDF417 shipping label crossing the view at `speed` pixels a frame.
    static func slowPDF417(seed: UInt64, speed: Double) -> SynthScene {
        let data = "SHIP-\(seed)-1Z999AA10123456784-DC1-LANE-04"
        return SynthScene(
            width: 800, height: 400, frameCount: Int((800 + 420) / speed) + 20,
            items: [
                SynthItem(
                    name: "shipment", width: 400, height: 180, startX: -410, startY: 100, velocityX: speed,
                    labels: [SynthLabel(.pdf417, data, moduleSize: 2, offsetX: 20, offsetY: 30, barHeight: 4)])
            ], noise: 4 + Int(seed % 4) * 3, seed: seed)
    }

    static func replay(_ scene: SynthScene, name: String, config: String) throws -> (
        ReplayHarness.Replay, [ExpectedCode]
    ) {
        let (clip, expected) = try ReplayHarness.clip(of: scene, name: name)
        let dir = (clip as NSString).deletingLastPathComponent
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let file = dir + "/agent.json"
        try config.write(toFile: file, atomically: true, encoding: .utf8)
        let replay = try ReplayHarness.replay(clip, arguments: ["--config", file, "--sightings-only"])
        #expect(replay.result.status == 0, "\(replay.result.stderr)")
        return (replay, expected)
    }

    @Test(
        "a PDF417 entering the view slowly (3 to 6 px a frame) is one sighting and no no-read",
        arguments: [1, 2] as [UInt64], [3.0, 4.5, 6.0])
    func slowPDF417(seed: UInt64, speed: Double) throws {
        // Found as one sighting and one to three no-reads on an unseen scene; this scene did not
        // show it again when it was written (kept so that it stays so).
        let (replay, expected) = try Self.replay(
            Self.slowPDF417(seed: seed, speed: speed), name: "pdf417-\(seed)",
            config: #"{"camera": {"id": "cam-p"}, "decoder": {"symbologies": ["PDF417", "EAN-13"]}}"#)
        #expect(ReplayHarness.compare(replay.sightings, with: expected).isEmpty)
        #expect(replay.sightings.count == 1 && replay.sightings.first?["symbology"] == .string("PDF417"))
        #expect(!replay.events.contains { $0["type"] == .string("noread") }, "a label read is not also a no-read")
    }

    @Test(
        "a GS1 DataMatrix beside an EAN-13: read with DataMatrix configured; with the default symbologies the EAN is read and the DataMatrix is a no-read",
        arguments: [1, 2] as [UInt64])
    func dataMatrixBesideEAN(seed: UInt64) throws {
        let scene = Self.eanBesideDataMatrix(seed: seed, gap: 30)
        let configured = try Self.replay(
            scene, name: "dm-\(seed)",
            config: #"{"camera": {"id": "cam-d"}, "decoder": {"symbologies": ["EAN-13", "DataMatrix"]}}"#)
        #expect(ReplayHarness.compare(configured.0.sightings, with: configured.1).isEmpty)
        #expect(configured.0.sightings.filter { $0["aim"] == .string("]d2") }.count == 3, "GS1 DataMatrix")
        #expect(!configured.0.events.contains { $0["type"] == .string("noread") })

        let (byDefault, expected) = try Self.replay(
            scene, name: "dm-default-\(seed)", config: #"{"camera": {"id": "cam-d"}}"#)
        let eans = expected.filter { $0.symbology == .ean13 }
        #expect(ReplayHarness.compare(byDefault.sightings, with: eans).isEmpty, "the EANs are read")
        // The localiser sees each EAN and its DataMatrix (30 px apart) as one region; the part of
        // it that the EAN's read does not touch and that looks 2-D is followed on its own.
        let noReads = byDefault.events.filter { $0["type"] == .string("noread") }
        #expect(noReads.count == 3, "one no-read per DataMatrix")
    }

    @Test(
        "long GS1-128 labels beside EAN-13s, seeds whose 1.5 px labels go unread: each label one sighting or one no-read, none silent",
        arguments: [13, 14] as [UInt64])
    func noLongLabelSilent(seed: UInt64) throws {
        // Seed 13 left one label silent: a long label's track, kept between reads, drifted across
        // its lines onto the EAN below, whose candidate it marked read. Seed 14 too: the EAN's
        // read overlapped the long label's region by 3 pixels (its 32-pixel cells).
        let (replay, expected) = try Self.replay(
            Scenarios.longSSCC(seed: seed), name: "long-sscc-\(seed)", config: #"{"camera": {"id": "cam-l"}}"#)
        let values = replay.sightings.compactMap { $0["value"]?.stringValue }
        #expect(Set(values).count == values.count, "a label counted twice: \(values)")
        #expect(Set(values).isSubset(of: Set(expected.map(\.value))), "\(values)")
        let noReads = replay.events.count { $0["type"] == .string("noread") }
        // Since the finer views are read by zxing-cpp too, seed 14 reads every label, one of them
        // once, by a track kept by its region for 60 frames after that read: its region raised a
        // no-read as well (the candidate no longer remembered the frame of the read).
        #expect(values.count + noReads == expected.count, "\(values.count) read, \(noReads) no-reads")
    }

    @Test(
        "a clean QR among 30 codes in view is read from when it is wholly in view, and in nearly every frame (sweep off: the localiser alone finds it)",
        arguments: [3, 4] as [UInt64])
    func qrInClutter(seed: UInt64) throws {
        // Found on an unseen scene: a QR wholly in view for about 90 frames got no discovery
        // region until its last 4 (full mode read it throughout). Not seen again on these scenes
        // when this test was written; it keeps it so.
        let scene = Scenarios.flow(width: 1280, height: 720, frames: 120, codesInView: 30, seed: seed)
        let (replay, expected) = try Self.replay(
            scene, name: "clutter-\(seed)", config: #"{"camera": {"id": "cam-c"}, "decoder": {"sweepFrames": 0}}"#)
        let qrs = expected.filter { $0.symbology == .qrCode && !$0.partial && $0.framesInView.count >= 20 }
        #expect(qrs.count >= 3, "the scene has QRs in view long enough")
        for qr in qrs {
            let sighting = replay.sightings.first { $0["value"]?.stringValue == qr.value }
            let first = sighting?["firstFrame"]?.intValue ?? Int.max
            let decodes = sighting?["decodes"]?.intValue ?? 0
            #expect(
                first <= qr.framesInView.lowerBound + 5,
                "\(qr.value): in view from \(qr.framesInView), read from \(first)")
            #expect(
                decodes * 10 >= qr.framesInView.count * 8,
                "\(qr.value): \(decodes) reads in \(qr.framesInView.count) frames")
        }
    }
}
