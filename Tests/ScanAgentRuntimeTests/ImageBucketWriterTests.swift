import Crypto
import Logging
import ScanAgentConfig
import ScanAgentRuntime
import ScanCore
import ScanEvents
import ScanServices
import ScanTestTiming
import ScanTesting
import Testing

/// The agent's side of the images bucket over fakes: which pictures `images.keep` keeps, their
/// chunks in the spool ahead of the event naming them, and the publisher sending their bytes on
/// the camera's own chunk subjects only.
@Suite("images bucket writer", .timed)
struct ImageBucketWriterTests {
    /// Writes the picture's pixels as they are (a stand-in for JPEG: the tests count bytes).
    struct RawEncoder: ImageEncoder {
        func jpeg(_ image: GrayImage, quality: Int) throws -> [UInt8] { image.pixels }
    }

    static let camera = CameraIdentity(id: "cam-01", site: "dc1", lane: "L1")

    static func writer(_ keep: ImagesConfig.Keep, sink: MemorySpool, maxWidth: Int = 1600) -> ImageBucketWriter {
        var config = ImagesConfig()
        config.keep = keep
        config.maxWidth = maxWidth
        return ImageBucketWriter(
            config: config, camera: camera, encoder: RawEncoder(), sink: sink, logger: Logger(label: "test"))
    }

    static func parcel(_ id: String, codes: Int, missing: [String] = []) -> ParcelEvent {
        let envelope = EventEnvelope(
            type: "parcel", eventId: id + ".parcel", site: "dc1", camera: "cam-01",
            time: Timestamp(milliseconds: 1_800_000_000_000))
        let code = ParcelEvent.Code(
            trackId: id + "-t", symbology: "EAN-13", value: "4006381333931", valueEncoding: nil, aim: nil,
            status: .accepted)
        return ParcelEvent(
            envelope: envelope, parcelId: id, lane: "L1", station: nil, firstSeen: envelope.time,
            lastSeen: envelope.time, outline: [Point(x: 1, y: 1), Point(x: 9, y: 9)],
            codes: Array(repeating: code, count: codes), missing: missing,
            noReads: [])
    }

    @Test("keep levels: none, noreads, diverts, a share of the rest chosen by id, all; '101%' and other words refused")
    func policy() {
        #expect(ImagesConfig.Keep(text: "25%") == .sample(percent: 25))
        #expect(ImagesConfig.Keep(text: "101%") == nil && ImagesConfig.Keep(text: "some") == nil)
        #expect(ImagesConfig.Keep(text: "0.5%")?.text == "0.5%")
        let ids = (0..<4_000).map { "cam-01-run-p\($0)" }
        let sampled = ids.filter {
            ImagesConfig.Keep.sample(percent: 10).keepsParcel(id: $0, noRead: false, diverted: false)
        }
        #expect((300...500).contains(sampled.count), "about a tenth: \(sampled.count)")
        #expect(
            sampled
                == ids.filter {
                    ImagesConfig.Keep.sample(percent: 10).keepsParcel(id: $0, noRead: false, diverted: false)
                },
            "the same parcels each time")
        for (keep, read, noRead, diverted) in [
            (ImagesConfig.Keep.none, false, false, false), (.noreads, false, true, false),
            (.diverts, false, true, true),
            (.sample(percent: 0), false, true, true), (.all, true, true, true),
        ] {
            #expect(keep.keepsParcel(id: "p", noRead: false, diverted: false) == read, "\(keep)")
            #expect(keep.keepsParcel(id: "p", noRead: true, diverted: false) == noRead, "\(keep)")
            #expect(keep.keepsParcel(id: "p", noRead: false, diverted: true) == diverted, "\(keep)")
        }
    }

    @Test("a kept picture's chunks are in the spool, base64, on the camera's own subject, and add up to its digest")
    func chunksInTheSpool() throws {
        let sink = MemorySpool()
        let writer = Self.writer(.all, sink: sink)
        // 400 × 400 grey pixels: 160,000 bytes, two chunks.
        let picture = GrayImage(
            width: 400, height: 400, pixels: (0..<160_000).map { UInt8(truncatingIfNeeded: $0 * 7) })
        let event = writer.parcel(
            AgentEvent.UnsavedParcel(event: Self.parcel("cam-01-r1-p1", codes: 1), picture: picture))
        let named = try ParcelEvent.parse(try JSONValue.parse(event.json))
        let object = try #require(named.imageObject)
        #expect(object.size == 160_000 && object.chunks == 2)
        let records = sink.appended
        #expect(records.map(\.subject) == Array(repeating: object.chunkSubject, count: 2))
        #expect(records.map(\.eventId) == ["cam-01-r1-p1-0", "cam-01-r1-p1-1"])
        let bytes = records.flatMap { Base64.decode(String(decoding: $0.payload, as: UTF8.self)) ?? [] }
        #expect(bytes == picture.pixels)
        #expect(object.digest == ImageObject.digest(Array(SHA256.hash(data: bytes))))
        #expect(writer.kept == 1 && writer.keptBytes == 160_000)

        // Wider than maxWidth: halved until it is not.
        let small = Self.writer(.all, sink: MemorySpool(), maxWidth: 160)
        let halved = small.keep(picture, kind: .noread, id: "t-1")
        #expect(halved?.size == 100 * 100)
    }

    @Test("noreads keeps a no-read parcel's picture, not a read one's; diverts adds the diverted and incomplete")
    func levelsOnParcels() throws {
        let picture = GrayImage(width: 8, height: 8, pixels: Array(repeating: 128, count: 64))
        func kept(_ keep: ImagesConfig.Keep, _ parcel: ParcelEvent, diverted: Bool = false) throws -> Bool {
            let event = Self.writer(keep, sink: MemorySpool()).parcel(
                AgentEvent.UnsavedParcel(event: parcel, picture: picture, diverted: diverted))
            return try ParcelEvent.parse(try JSONValue.parse(event.json)).imageObject != nil
        }
        let read = Self.parcel("p-read", codes: 1)
        let noRead = Self.parcel("p-none", codes: 0)
        let incomplete = Self.parcel("p-short", codes: 1, missing: ["GS1-128"])
        #expect(try !kept(.none, noRead) && !kept(.noreads, read) && kept(.noreads, noRead))
        #expect(try !kept(.diverts, read) && kept(.diverts, read, diverted: true) && kept(.diverts, incomplete))
        #expect(try kept(.all, read))
    }

    @Test(
        "the publisher sends a chunk's bytes on the camera's chunk subject, with no trace; another camera's chunks are stepped over; an event goes with its own trace"
    )
    func publishedAsBytes() throws {
        let sink = MemorySpool()
        let own = ImageBucketWriter.chunkPrefix(Self.camera)
        _ = sink.append(subject: "st.v1.parcel.dc1.cam-01", eventId: "cam-01-r-p1.parcel", payload: Array("{}".utf8))
        _ = sink.append(
            subject: own + "x-1", eventId: "x-1-0", payload: Array(Base64.encode([0xFF, 0xD8, 0x0A, 0x00]).utf8))
        _ = sink.append(subject: "$O.SCANTRACK_IMAGES.C.dc1.cam-02.x-1", eventId: "x-1-0", payload: Array("AAAA".utf8))
        _ = sink.append(subject: own + "x.y", eventId: "x-2-0", payload: Array("AAAA".utf8))
        _ = sink.append(subject: own + "x-3", eventId: "x-3-0", payload: Array("not base64!".utf8))
        let bus = RecordingBus()
        let logs = LogRecorder()
        let publisher = SpoolPublisher(
            sink: sink, bus: bus, delivery: DeliveryState(), clock: ManualClock(), drain: .seconds(5),
            logger: logs.logger(), subjects: ["st.v1.parcel.dc1.cam-01"], subjectPrefixes: [own])
        let stop = StopToken()
        stop.stop()
        publisher.run(stop: stop)
        #expect(bus.durable.map(\.subject) == ["st.v1.parcel.dc1.cam-01", own + "x-1"])
        #expect(bus.durable.first?.trace == TraceContext.forEvent("cam-01-r-p1.parcel"))
        let chunk = try #require(bus.durable.last)
        #expect(chunk.bytes == [0xFF, 0xD8, 0x0A, 0x00], "the bytes, a newline and NUL among them")
        #expect(chunk.messageID == own + "x-1/x-1-0" && chunk.trace == nil)
        #expect(sink.depth == 0)
        #expect(logs.messages.filter { $0.contains("not this agent's") || $0.contains("not base64") }.count == 3)
    }
}
