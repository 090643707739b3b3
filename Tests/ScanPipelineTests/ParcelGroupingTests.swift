import ScanAgentConfig
import ScanCore
import ScanEvents
import ScanPipeline
import ScanTestTiming
import ScanVision
import Testing

/// Parcels from scripted reads: codes that move together are one parcel, parcels side by side or
/// back to back stay apart, a code between two parcels belongs to one, required codes and
/// no-reads are reported.
@Suite("parcel grouping", .timed)
struct ParcelGroupingTests {
    /// A code of `value` (QR, `size` px) at (x, y) in `frame`, moving `speed` px a frame to the right.
    static func code(_ value: String, x: Int, y: Int, frame: Int, speed: Int = 6, size: Int = 40) -> Detection {
        let left = x + frame * speed
        return Detection(
            symbology: .qrCode, value: Array(value.utf8),
            points: [
                Point(x: left, y: y), Point(x: left, y: y + size), Point(x: left + size, y: y + size),
                Point(x: left + size, y: y),
            ])
    }

    static func time(_ frame: Int) -> Timestamp { Timestamp(milliseconds: 1_795_800_000_000 + Int64(frame) * 33) }

    static func pipeline(require: [String] = [], gap: Int = 60) -> ScanPipeline {
        var grouping = GroupingConfig()
        grouping.enabled = true
        grouping.maxGapPixels = gap
        grouping.require = require.compactMap(GroupingConfig.Requirement.init(name:))
        var tracking = TrackingConfig()
        tracking.maxMissedFrames = 3
        return ScanPipeline(
            camera: CameraIdentity(id: "cam-1", site: "dc1", lane: "L1"), tracking: tracking, grouping: grouping,
            idPrefix: "cam-1-r")
    }

    /// Runs `frames` frames of `script`, then ends the stream; returns the parcels, parsed.
    static func parcels(_ pipeline: inout ScanPipeline, frames: Int, _ script: (Int) -> [Detection]) throws
        -> [ParcelEvent]
    {
        var events: [AgentEvent] = []
        for frame in 0..<frames {
            events += pipeline.process(frame: frame, time: Self.time(frame), detections: script(frame))
        }
        events += pipeline.finish(time: Self.time(frames))
        return try events.filter { $0.kind == .parcel }.map { try ParcelEvent.parse(try JSONValue.parse($0.json)) }
    }

    static func values(_ parcel: ParcelEvent) -> Set<String> { Set(parcel.codes.map(\.value)) }

    @Test("two codes on one parcel are one parcel; identical parcels side by side and back to back are two each")
    func sideBySideAndBackToBack() throws {
        var pipeline = Self.pipeline()
        // Parcel P: codes A and B 30 px apart; parcel Q, identical, 200 px below (side by side);
        // parcel R, identical, 260 px behind P (back to back). All move alike.
        let parcels = try Self.parcels(&pipeline, frames: 40) { frame in
            [
                Self.code("A", x: 300, y: 40, frame: frame), Self.code("B", x: 370, y: 40, frame: frame),
                Self.code("A", x: 300, y: 240, frame: frame), Self.code("B", x: 370, y: 240, frame: frame),
                Self.code("A", x: 40, y: 40, frame: frame), Self.code("B", x: 110, y: 40, frame: frame),
            ]
        }
        #expect(parcels.count == 3)
        #expect(parcels.allSatisfy { Self.values($0) == ["A", "B"] && $0.codes.count == 2 }, "\(parcels)")
        #expect(Set(parcels.flatMap { $0.codes.map(\.trackId) }).count == 6, "each code in one parcel")
        #expect(parcels.allSatisfy { $0.complete && !$0.noRead && $0.lane == "L1" })
        #expect(Set(parcels.map(\.parcelId)).count == 3)
    }

    @Test(
        "a parcel whose codes leave the view is sent in the first frame they are no longer seen, unless an unread label beside it may still join it"
    )
    func leavesTheViewPromptly() throws {
        let area = Box(minX: 0, minY: 0, maxX: 639, maxY: 399)
        /// The frame of the parcel event holding A, with `torn` an unread label 50 px behind A.
        func closedIn(torn: Bool) -> (frame: Int, noReads: Int)? {
            var pipeline = Self.pipeline()
            for frame in 0..<60 {
                let left = 100 + frame * 20
                let seen = left + 40 <= 639
                var regions: [CodeLocalizer.Region] = []
                if seen {
                    regions.append(CandidateTrackerTests.bars(x: left, y: 40, width: 40, height: 40))
                }
                if torn && left - 110 >= 0 && left - 110 + 60 <= 639 {
                    regions.append(CandidateTrackerTests.bars(x: left - 110, y: 40, width: 60, height: 40))
                }
                let events = pipeline.process(
                    frame: frame, time: Self.time(frame),
                    detections: seen ? [Self.code("A", x: 100, y: 40, frame: frame, speed: 20)] : [],
                    located: LocatedRegions(regions: regions, area: area, image: CandidateTrackerTests.frame))
                for event in events where event.kind == .parcel {
                    let parcel = try? ParcelEvent.parse(JSONValue.parse(event.json))
                    if parcel?.codes.map(\.value) == ["A"] { return (frame, parcel?.noReads.count ?? -1) }
                }
            }
            return nil
        }
        // A is last seen in frame 24 (left edge 580); its centre is out of view in frame 26.
        let alone = try #require(closedIn(torn: false))
        #expect(alone.frame == 26 && alone.noReads == 0)
        // The torn label 50 px behind it is last seen in frame 29 and out of view in frame 31: the
        // parcel waits for it (past the grace of 5 frames after A's last read) and holds it.
        let withTorn = try #require(closedIn(torn: true))
        #expect(withTorn.frame == 31 && withTorn.noReads == 1)
    }

    @Test("a code between two parcels belongs to exactly one, the nearer")
    func codeBetweenTwoParcels() throws {
        var pipeline = Self.pipeline(gap: 60)
        // A at y 40, C at y 220; M at y 110 is 30 px under A and 70 px above C.
        let parcels = try Self.parcels(&pipeline, frames: 30) { frame in
            [
                Self.code("A", x: 100, y: 40, frame: frame), Self.code("C", x: 100, y: 220, frame: frame),
                Self.code("M", x: 100, y: 110, frame: frame),
            ]
        }
        let withM = parcels.filter { Self.values($0).contains("M") }
        #expect(withM.count == 1)
        #expect(withM.first.map(Self.values) == ["A", "M"])
        #expect(parcels.count == 2)
    }

    @Test("codes that move differently are not one parcel, however close")
    func differentSpeeds() throws {
        var pipeline = Self.pipeline()
        let parcels = try Self.parcels(&pipeline, frames: 30) { frame in
            [
                Self.code("A", x: 100, y: 40, frame: frame, speed: 6),
                frame >= 8 ? Self.code("B", x: 100 + 8 * 6 + 50, y: 40, frame: frame - 8, speed: 1) : nil,
            ].compactMap { $0 }
        }
        #expect(parcels.count == 2, "\(parcels.map(Self.values))")
    }

    /// A linear code (zbar, read along rows: its bars vertical) at (x, y) in `frame`, 200 px
    /// long and 50 px tall, moving `speed` px a frame to the right. The
    /// scan lines that read it show 80 to 100 % of its height, at the top or the bottom, varying
    /// frame to frame as they do on a real label (`wobble` picks how).
    static func linear(_ value: String, x: Int, y: Int, frame: Int, speed: Int = 7, wobble: Int)
        -> Detection
    {
        let left = x + frame * speed
        let top = y
        let shown = [50, 40, 46, 42, 50, 41][(frame + wobble) % 6]
        let from = (frame + wobble) % 2 == 0 ? top : top + 50 - shown
        return Detection(
            symbology: .code128, value: Array(value.utf8),
            points: [Point(x: left, y: from), Point(x: left + 200, y: from + shown)], engine: "zbar", alongRows: true)
    }

    @Test(
        "two linear labels on one box, read on scan lines that show more or less of their bars each frame, are one parcel; one on a slower belt beside it is not",
        arguments: [0, 1, 2, 3, 4, 5])
    func linearLabelsOnOneBox(wobble: Int) throws {
        // An SSCC above an EAN 16 px below it, on one box: the reads' heights swing the speed
        // measured between two frames along the bars by several pixels a frame.
        var pipeline = Self.pipeline()
        let parcels = try Self.parcels(&pipeline, frames: 50) { frame in
            [
                Self.linear("SSCC", x: 20, y: 50, frame: frame, wobble: wobble),
                Self.linear("EAN", x: 20, y: 116, frame: frame, wobble: wobble + 3),
            ]
        }
        #expect(parcels.map(Self.values) == [["SSCC", "EAN"]], "\(parcels.map(Self.values))")
        // The same, but the second label on a neighbouring belt running 5 px a frame slower: it
        // is not on the first one's box. (Across the belt, along the bars, the reads of a linear
        // code measure no speed: ParcelGrouper.movesAlike.)
        var drifting = Self.pipeline()
        let apart = try Self.parcels(&drifting, frames: 50) { frame in
            [
                Self.linear("SSCC", x: 20, y: 50, frame: frame, wobble: wobble),
                Self.linear("EAN", x: 20, y: 116, frame: frame, speed: 2, wobble: wobble + 3),
            ]
        }
        #expect(apart.count == 2, "\(apart.map(Self.values))")
    }

    @Test("a parcel without a required code is incomplete and names what it lacks")
    func requiredCodes() throws {
        var pipeline = Self.pipeline(require: ["GS1-128", "QR-Code"])
        let parcels = try Self.parcels(&pipeline, frames: 30) { frame in [Self.code("A", x: 100, y: 40, frame: frame)] }
        #expect(parcels.count == 1)
        #expect(parcels.first?.missing == ["GS1-128"])
        #expect(parcels.first?.complete == false)
        let good = try AgentConfig.parse(
            Array(#"{"camera": {"id": "c"}, "grouping": {"enabled": true, "require": ["GS1-128", "ean13"]}}"#.utf8),
            file: "c.json")
        #expect(good.grouping.require.map(\.name) == ["GS1-128", "EAN-13"])
        do {
            _ = try AgentConfig.parse(
                Array(#"{"camera": {"id": "c"}, "grouping": {"require": ["GS1-128", "Morse"]}}"#.utf8), file: "c.json")
            Issue.record("a requirement that is no symbology was accepted")
        } catch {
            #expect("\(error)".contains("grouping.require[1]"), "\(error)")
        }
    }

    @Test(
        "a sighting names its parcel, and the parcel's picture only when the policy keeps it whatever the parcel's end and a picture was taken"
    )
    func sightingsNameTheirParcel() throws {
        func run(keep: ImagesConfig.Keep?, pictures: Bool) throws -> (sightings: [SightingEvent], parcels: [AgentEvent])
        {
            var pipeline = Self.pipeline()
            if let keep { pipeline.parcelPictures = ParcelPictures(margin: 8, keep: keep) }
            let frameImage = GrayImage(width: 640, height: 480, fill: 200)
            var events: [AgentEvent] = []
            for frame in 0..<40 {
                let located =
                    pictures
                    ? LocatedRegions(regions: [], area: Box(minX: 0, minY: 0, maxX: 640, maxY: 480), image: frameImage)
                    : nil
                events += pipeline.process(
                    frame: frame, time: Self.time(frame),
                    detections: frame < 30
                        ? [Self.code("A", x: 20, y: 40, frame: frame), Self.code("B", x: 80, y: 40, frame: frame)] : [],
                    located: located)
            }
            events += pipeline.finish(time: Self.time(40))
            let sightings = try events.filter { $0.kind == .sighting }.map {
                try SightingEvent.parse(try JSONValue.parse($0.json))
            }
            return (sightings, events.filter { $0.kind == .parcel })
        }
        let all = try run(keep: .all, pictures: true)
        let parcel = try #require(all.parcels.first)
        let parcelEvent = try ParcelEvent.parse(try JSONValue.parse(parcel.json))
        #expect(all.parcels.count == 1 && all.sightings.count == 2)
        #expect(all.sightings.allSatisfy { $0.parcelId == parcelEvent.parcelId }, "\(all.sightings)")
        // The name the writer gives the picture the parcel event hands over.
        #expect(parcel.unsavedParcel != nil)
        let named = "dc1/cam-1/parcel/\(ImageObject.token(from: parcelEvent.parcelId)).jpg"
        #expect(all.sightings.allSatisfy { $0.parcelImage == named }, "\(all.sightings.map(\.parcelImage))")
        // Kept only if diverted: not promised; no picture taken: nothing to promise; no policy: none.
        for (keep, pictures) in [(ImagesConfig.Keep.diverts, true), (.all, false), (nil, true)] {
            let other = try run(keep: keep, pictures: pictures)
            #expect(other.sightings.count == 2 && other.sightings.allSatisfy { $0.parcelImage == nil })
            #expect(other.sightings.allSatisfy { $0.parcelId == parcelEvent.parcelId })
        }
        // A share names exactly the parcels it chose.
        let chosen = ImagesConfig.Keep.sample(percent: 50).keepsParcelWhateverItsEnd(id: parcelEvent.parcelId)
        let sampled = try run(keep: .sample(percent: 50), pictures: true)
        #expect(sampled.sightings.allSatisfy { ($0.parcelImage != nil) == chosen })
    }

    @Test("grouping off: no parcel events, the sightings unchanged but for the parcel they name")
    func off() throws {
        var on = Self.pipeline()
        var off = ScanPipeline(camera: CameraIdentity(id: "cam-1", site: "dc1", lane: "L1"), idPrefix: "cam-1-r")
        var withParcels: [AgentEvent] = []
        var without: [AgentEvent] = []
        for frame in 0..<30 {
            let detections = [Self.code("A", x: 100, y: 40, frame: frame), Self.code("B", x: 160, y: 40, frame: frame)]
            withParcels += on.process(frame: frame, time: Self.time(frame), detections: detections)
            without += off.process(frame: frame, time: Self.time(frame), detections: detections)
        }
        withParcels += on.finish(time: Self.time(30))
        without += off.finish(time: Self.time(30))
        #expect(without.allSatisfy { $0.kind != .parcel })
        func unnamed(_ event: AgentEvent) throws -> [UInt8] {
            guard event.kind == .sighting else { return event.json }
            var sighting = try SightingEvent.parse(try JSONValue.parse(event.json))
            #expect(sighting.parcelId?.hasPrefix("cam-1-r-p") == true)
            sighting.parcelId = nil
            return sighting.json
        }
        #expect(try withParcels.filter { $0.kind != .parcel }.map(unnamed) == without.map(\.json))
        #expect(withParcels.filter { $0.kind == .parcel }.count == 1)
    }
}
