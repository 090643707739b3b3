import Foundation
import ScanTestTiming
import Testing

@testable import ScanCore
@testable import ScanAgentConfig
@testable import ScanEvents
@testable import ScanPipeline
@testable import ScanVision

/// Each wire event has one type that writes and reads it: what the pipeline writes, its type
/// reads back to the same bytes, and what breaks the contract is refused naming the field.
@Suite("wire events", .timed)
struct WireEventTests {
    static let start = Timestamp(milliseconds: 1_795_800_000_000)
    static func time(_ frame: Int) -> Timestamp { start.adding(milliseconds: Int64(frame) * 100) }
    static func code(_ value: String, x: Int, y: Int) -> Detection {
        Detection(
            symbology: .code128, value: Array(value.utf8),
            points: [Point(x: x, y: y), Point(x: x, y: y + 40), Point(x: x + 120, y: y + 40), Point(x: x + 120, y: y)],
            isGS1: value.hasPrefix("00"), alongRows: true)
    }

    /// Every event of a short run: two codes, one binary, a command session with an order.
    static func run() -> [AgentEvent] {
        var session = SessionConfig()
        session.start = .command
        var pipeline = ScanPipeline(
            camera: CameraIdentity(id: "cam-1", site: "dc1", lane: "L1", station: "S1"), session: session,
            idPrefix: "cam-1-r1")
        var events = pipeline.startSession(orderId: "SO-7", at: time(0))
        for frame in 0..<30 {
            var detections = [code("00340123450000000017" + "15270131" + "10LOT-7", x: 10 + frame * 8, y: 40)]
            if frame >= 5 {
                detections.append(
                    Detection(
                        symbology: .qrCode, value: [0x00, 0xFF, 0x10],
                        points: [
                            Point(x: 400, y: 300), Point(x: 400, y: 360), Point(x: 460, y: 360), Point(x: 460, y: 300),
                        ]))
            }
            events += pipeline.process(frame: frame, time: time(frame), detections: detections)
        }
        events += pipeline.stopSession(at: time(31))
        events += pipeline.finish(time: time(32))
        return events
    }

    @Test("reading.paused and reading.resumed read back to the same bytes; a reason not in the contract is refused")
    func readingEvents() throws {
        let camera = CameraIdentity(id: "cam-01", site: "dc1", lane: "L1")
        for (kind, reason, detail) in [
            (ReadingEvent.Kind.paused, ReadingEvent.Reason.camera, "rtsp://cam:***@h/s: \u{1b}[2J refused" as String?),
            (.resumed, .command, nil),
        ] {
            let event = ReadingEvent(
                kind: kind, eventId: "cam-01-r.reading.1", camera: camera,
                time: Timestamp(milliseconds: 1_795_800_000_000), reason: reason, detail: detail)
            let parsed = try ReadingEvent.parse(try JSONValue.parse(event.json))
            #expect(parsed == event)
            #expect(parsed.json == event.json)
            #expect(event.agentEvent.subjectFamily == .reading && event.agentEvent.isDurable)
        }
        let odd =
            #"{"type": "reading.paused", "eventId": "e", "site": "dc1", "camera": "c", "time": "2026-11-26T06:00:00.000Z", "reason": "lunch"}"#
        #expect(throws: DeadLetter.self) { try ReadingEvent.parse(try JSONValue.parse(Array(odd.utf8))) }
    }

    @Test("a measurement reads back to the same bytes; a device reading that breaks the contract is refused")
    func measureEvents() throws {
        let event = MeasureEvent(
            eventId: "dim-1-000042", site: "dc1", lane: "L1", device: "dim-1", time: Self.start, length: 412.5,
            width: 305, height: 220.25, weight: 3.42)
        let parsed = try MeasureEvent.parse(try JSONValue.parse(event.json))
        #expect(parsed == event && parsed.json == event.json)
        let scaleOnly = MeasureEvent(
            eventId: "s-1", site: "dc1", lane: "L1", device: "scale", time: Self.start, weight: 0.2)
        #expect(try MeasureEvent.parse(try JSONValue.parse(scaleOnly.json)) == scaleOnly)
        let head =
            #""type": "measure", "eventId": "m", "site": "dc1", "lane": "L1", "time": "2026-11-26T06:00:00.000Z""#
        for (body, reason) in [
            (#"{\#(head), "device": "d"}"#, DeadLetterReason.missingField),  // nothing measured
            (#"{\#(head), "device": "d", "length": -4}"#, .badValue),
            (#"{\#(head), "device": "d", "weight": 20000}"#, .badValue),
            (#"{\#(head), "device": "d", "height": "tall"}"#, .wrongType),
            (#"{\#(head), "device": "dim.1", "length": 4}"#, .badToken),  // a dot would split a subject
            (#"{\#(head), "length": 4}"#, .missingField),
        ] {
            do {
                _ = try MeasureEvent.parse(try JSONValue.parse(Array(body.utf8)))
                Issue.record("accepted: \(body)")
            } catch {
                #expect((error as? DeadLetter)?.reason == reason, "\(body): \(error)")
            }
        }
    }

    @Test("what the agent writes, each type reads back to the same bytes")
    func roundTrip() throws {
        let events = Self.run()
        var kinds: Set<AgentEvent.Kind> = []
        for event in events {
            kinds.insert(event.kind)
            let json = try JSONValue.parse(event.json)
            let again: [UInt8]
            switch event.kind {
            case .sighting: again = try SightingEvent.parse(json).json
            case .sessionStarted, .sessionCompleted: again = try SessionEvent.parse(json).json
            case .trackAdded, .trackUpdated, .trackRemoved: again = try TrackEvent.parse(json).json
            case .status: again = try StatusEvent.parse(json).json
            case .noread: again = try NoReadEvent.parse(json).json
            case .readingPaused, .readingResumed: again = try ReadingEvent.parse(json).json
            case .parcel: again = try ParcelEvent.parse(json).json
            case .decision: again = try DecisionEvent.parse(json).json
            }
            #expect(again == event.json, "\(String(decoding: event.json, as: UTF8.self))")
        }
        #expect(kinds.isSuperset(of: [.sighting, .sessionStarted, .sessionCompleted, .trackAdded, .trackRemoved]))
        let sightings = try events.filter { $0.kind == .sighting }.map {
            try SightingEvent.parse(JSONValue.parse($0.json))
        }
        #expect(sightings.count == 2)
        let sscc = try #require(sightings.first { $0.gs1 })
        #expect(sscc.value == "00340123450000000017" + "15270131" + "10LOT-7")
        // Its application identifiers, as the contract writes them.
        #expect(
            sscc.gs1Elements == [
                .init(ai: "00", value: "340123450000000017"), .init(ai: "15", value: "2027-01-31"),
                .init(ai: "10", value: "LOT-7"),
            ])
        let written = try #require(
            events.first { $0.kind == .sighting && String(decoding: $0.json, as: UTF8.self).contains("gs1Elements") })
        #expect(
            String(decoding: written.json, as: UTF8.self).contains(
                #""gs1Elements":{"00":"340123450000000017","15":"2027-01-31","10":"LOT-7"}"#))
        // A sender's gs1Elements that break the contract are refused naming the field.
        for bad in [#""gs1Elements":[]"#, #""gs1Elements":{"1x":"a"}"#, #""gs1Elements":{"10":7}"#] {
            var text = String(decoding: written.json, as: UTF8.self)
            text = text.replacingOccurrences(
                of: #""gs1Elements":{"00":"340123450000000017","15":"2027-01-31","10":"LOT-7"}"#, with: bad)
            #expect(throws: DeadLetter.self) { try SightingEvent.parse(JSONValue.parse(Array(text.utf8))) }
        }
        #expect(sightings.contains { $0.valueEncoding == "base64" && Base64.decode($0.value) == [0x00, 0xFF, 0x10] })
        let completed = try #require(events.first { $0.kind == .sessionCompleted })
        let session = try SessionEvent.parse(JSONValue.parse(completed.json))
        #expect(session.orderId == "SO-7" && session.reason == "command" && session.items == 2)
    }

    @Test("a heartbeat reads back to the status it was made from")
    func status() throws {
        var status = AgentStatus()
        status.runId = "r1"
        status.sourceType = "v4l2"
        status.sourceState = "streaming"
        status.fpsIn = 30
        status.framesIn = 900
        status.framesProcessed = 880
        status.framesDropped = 20
        status.decodeFailures = 2
        status.sightings = 41
        status.noReads = 3
        status.decodeMillisecondsP99 = 31.25
        status.decoderThreads = 2
        status.scanned = [AgentStatus.ScannedShare(purpose: "tracked", share: 0.125)]
        status.liveTracks = 4
        status.sessionId = "cam-1-r1-s3"
        status.spoolDepth = 12
        status.nats = "degraded"
        status.rulesRevision = "9"
        status.rulesSource = "bucket"
        status.rulesError = "revision 10: bad"
        let event = EventFactory(camera: CameraIdentity(id: "cam-1", site: "dc1")).status(
            status, time: Self.start, sequence: 3)
        let read = try StatusEvent.parse(JSONValue.parse(event.json))
        #expect(read.status == status)
        #expect(read.eventId == "cam-1-r1.status.3")
        #expect(read.json == event.json)
    }

    @Test("a track merged into another says which, as a field of its type")
    func mergedInto() throws {
        let track = TrackEvent(
            .removed, track: Track.confirmedForTests(id: "cam-1-r1-4"),
            camera: CameraIdentity(id: "cam-1", site: "dc1"),
            time: Self.start, sequence: 0, mergedInto: "cam-1-r1-2")
        let read = try TrackEvent.parse(JSONValue.parse(track.json))
        #expect(read.mergedInto == "cam-1-r1-2")
        #expect(read.eventId == "cam-1-r1-4.removed")
    }

    @Test("what breaks the contract is refused with a reason and the field's name")
    func refusals() throws {
        let sighting = try #require(Self.run().first { $0.kind == .sighting })
        func refused(_ edit: (inout [(String, JSONValue)]) -> Void) -> DeadLetter? {
            guard case .object(var members) = try? JSONValue.parse(sighting.json) else { return nil }
            edit(&members)
            do {
                _ = try SightingEvent.parse(.object(members))
                return nil
            } catch {
                return error
            }
        }
        func set(_ key: String, _ value: JSONValue) -> (inout [(String, JSONValue)]) -> Void {
            { members in
                members.removeAll { $0.0 == key }
                members.append((key, value))
            }
        }
        #expect(
            refused(set("status", .string("maybe")))
                == DeadLetter(.badValue, "status 'maybe' is not accepted or rejected"))
        #expect(refused { $0.removeAll { $0.0 == "trackId" } } == DeadLetter(.missingField, "trackId"))
        #expect(
            refused(set("firstSeen", .string("yesterday")))?.detail == "firstSeen 'yesterday' is not an RFC 3339 time")
        #expect(refused(set("frames", .number(-1)))?.reason == .wrongType)
        #expect(refused(set("type", .string("status")))?.reason == .unknownType)
        #expect(
            refused(set("box", .object([("first", .string("x")), ("last", .array([]))])))?.detail.hasPrefix("box.first")
                == true)
        #expect(refused(set("gs1", .string("yes")))?.detail == "gs1 is a string, not a boolean")
        let completed = try #require(Self.run().first { $0.kind == .sessionCompleted })
        guard case .object(var members) = try JSONValue.parse(completed.json) else { return }
        members.removeAll { $0.0 == "codes" }
        members.append(("codes", .array([.object([("value", .string("A")), ("trackIds", .array([]))])])))
        #expect(throws: DeadLetter(.missingField, "codes[0].symbology")) { try SessionEvent.parse(.object(members)) }
    }
}

extension WireEventTests {
    /// A no-read as the pipeline makes it, with a picture's bytes and file name added.
    static func noRead() -> NoReadEvent {
        let noRead = CandidateTracker.NoRead(
            trackId: "cam-1-r1-n4", firstFrame: 3, lastFrame: 20, firstSeen: time(3), lastSeen: time(20), frames: 16,
            firstBox: Box(minX: 0, minY: 10, maxX: 99, maxY: 59),
            lastBox: Box(minX: 140, minY: 12, maxX: 239, maxY: 61),
            family: .linear, image: nil, sharpness: 31.5, reason: .cutByEdge)
        var event = NoReadEvent(
            noRead, camera: CameraIdentity(id: "cam-1", site: "dc1", lane: "L1"), time: time(31), sessionId: "s-1")
        event.image = event.imageFileName
        event.imagePNG = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13]
        return event
    }

    @Test("a no-read reads back to the same bytes, its picture and file name included")
    func noReadRoundTrip() throws {
        let event = Self.noRead()
        let parsed = try NoReadEvent.parse(try JSONValue.parse(event.json))
        #expect(parsed == event)
        #expect(parsed.json == event.json)
        #expect(parsed.image == "cam-1-r1-n4.png")
        #expect(parsed.reason == "cut-by-edge")
        #expect(event.agentEvent.kind == .noread && event.agentEvent.eventId == "cam-1-r1-n4.noread")
    }

    @Test("a no-read that breaks the contract is refused naming the field")
    func noReadRefusals() throws {
        func refused(_ key: String, _ value: JSONValue?) -> DeadLetter? {
            guard case .object(var members) = try? JSONValue.parse(Self.noRead().json) else { return nil }
            members.removeAll { $0.0 == key }
            if let value { members.append((key, value)) }
            do {
                _ = try NoReadEvent.parse(.object(members))
                return nil
            } catch {
                return error
            }
        }
        #expect(refused("family", .string("qr")) == DeadLetter(.badValue, "family 'qr' is not linear or matrix"))
        #expect(
            refused("reason", .string("bored"))
                == DeadLetter(
                    .badValue,
                    "reason 'bored' is not one of undecoded, too-small, blurred, low-contrast, overexposed, "
                        + "unconfigured-symbology, damaged, unconfirmed, cut-by-edge, clip-ended, stopped"))
        #expect(refused("reason", nil) == nil, "absent: an agent older than the field")
        #expect(refused("imagePng", .string("aGVsbG8=")) == DeadLetter(.badValue, "imagePng is not a base64 PNG"))
        #expect(refused("box", nil) == DeadLetter(.missingField, "box"))
        #expect(refused("box", .bool(true))?.detail == "box is a boolean, not an object")
        #expect(refused("frames", .number(0))?.reason == .badValue)
        #expect(refused("lastSeen", .string("2020-01-01T00:00:00Z"))?.reason == .badValue)
        #expect(refused("sharpness", .string("NaN"))?.reason == .wrongType)
    }
}

extension Track {
    /// A confirmed track for event tests.
    static func confirmedForTests(id: String) -> Track {
        var tracker = Tracker(
            config: TrackingConfig(), idPrefix: String(id.split(separator: "-").dropLast().joined(separator: "-")))
        let box = [Point(x: 10, y: 10), Point(x: 10, y: 50), Point(x: 130, y: 50), Point(x: 130, y: 10)]
        for frame in 0..<3 {
            _ = tracker.step(
                frame: frame, time: Timestamp(milliseconds: Int64(frame) * 100),
                detections: [Detection(symbology: .code128, value: Array("T".utf8), points: box)])
        }
        var track = tracker.live[0]
        track.id = id
        return track
    }
}

/// Belt readings from a lane's PLC, and the speed they give.
@Suite("belt readings", .timed)
struct BeltReadingTests {
    static let plc = Timestamp(milliseconds: 1_795_800_000_000)

    @Test(
        "a speed or an encoder count reads back to the same bytes; what breaks the contract is refused naming the field"
    )
    func parse() throws {
        for reading in [
            BeltReading(site: "dc1", lane: "L1", time: Self.plc, speed: 2.5),
            BeltReading(site: "dc1", lane: "L1", time: Self.plc, pulses: 9_007_199_254),
        ] {
            #expect(try BeltReading.parse(reading.json) == reading)
        }
        for (text, field) in [
            (#"{"type": "belt", "site": "dc1", "lane": "L1", "time": "2026-11-26T06:00:00.000Z"}"#, "speed or pulses"),
            (
                #"{"type": "belt", "site": "dc1", "lane": "L1", "time": "2026-11-26T06:00:00.000Z", "speed": 45}"#,
                "speed"
            ),
            (
                #"{"type": "belt", "site": "dc1", "lane": "L1", "time": "2026-11-26T06:00:00.000Z", "pulses": "9"}"#,
                "pulses"
            ),
            (
                #"{"type": "belt", "site": "dc1", "lane": "L.1", "time": "2026-11-26T06:00:00.000Z", "speed": 1}"#,
                "lane"
            ),
            (
                #"{"type": "parcel", "site": "dc1", "lane": "L1", "time": "2026-11-26T06:00:00.000Z", "speed": 1}"#,
                "belt"
            ),
            (#"{"type": "belt", "site": "dc1", "lane": "L1", "time": "yesterday", "speed": 1}"#, "time"),
        ] {
            do {
                _ = try BeltReading.parse(Array(text.utf8))
                Issue.record("accepted: \(text)")
            } catch {
                #expect(error.detail.contains(field), "\(error.detail)")
            }
        }
    }

    @Test(
        "the speed: given, or pulses between two counts over their time; the first count, a count going back and a stale speed give none"
    )
    func speed() {
        let now = Self.plc
        var belt = BeltSpeed(pulsesPerMetre: 500, staleMilliseconds: 1_000)
        #expect(belt.speed(at: now) == nil)
        let first = belt.add(BeltReading(site: "dc1", lane: "L1", time: now, pulses: 10_000), arrived: now)
        #expect(!first)
        let second = belt.add(
            BeltReading(site: "dc1", lane: "L1", time: now.adding(milliseconds: 500), pulses: 10_750), arrived: now)
        #expect(second)
        #expect(belt.speed(at: now.adding(milliseconds: 1_000)) == 3)  // 750 pulses, 1.5 m in 0.5 s
        #expect(belt.speed(at: now.adding(milliseconds: 1_001)) == nil, "stale")
        let back = belt.add(
            BeltReading(site: "dc1", lane: "L1", time: now.adding(milliseconds: 600), pulses: 5), arrived: now)
        #expect(!back)
        let given = belt.add(BeltReading(site: "dc1", lane: "L1", time: now, speed: 1.25), arrived: now)
        #expect(given)
        #expect(belt.speed(at: now) == 1.25)
        var noScale = BeltSpeed(pulsesPerMetre: nil, staleMilliseconds: 1_000)
        let unscaled = noScale.add(BeltReading(site: "dc1", lane: "L1", time: now, pulses: 1), arrived: now)
        #expect(!unscaled)
    }

    @Test(
        "hostile belt numbers never trap: counts that wrap Int64 or give no belt's speed, readings years apart, 1e-300 m/s; the divert point is then left out"
    )
    func hostileBeltNumbers() throws {
        let now = Self.plc
        func reading(_ milliseconds: Int64, _ pulses: Int64) -> BeltReading {
            BeltReading(site: "dc1", lane: "L1", time: now.adding(milliseconds: milliseconds), pulses: pulses)
        }
        // A count from Int64.min to Int64.max does not fit the difference: no speed, no trap.
        var belt = BeltSpeed(pulsesPerMetre: 500, staleMilliseconds: 1_000)
        belt.add(reading(0, .min), arrived: now)
        let wrapped = belt.add(reading(500, .max), arrived: now)
        #expect(!wrapped)
        // A million metres in a millisecond is no belt's speed.
        belt.add(reading(1_000, 0), arrived: now)
        let tooFast = belt.add(reading(1_001, 500_000_000_000), arrived: now)
        #expect(!tooFast)
        #expect(belt.speed(at: now) == nil)
        // One pulse in 30 years: a speed, very slow, whose divert point would be centuries away.
        belt.add(reading(2_000, 10), arrived: now)
        let slow = belt.add(reading(2_000 + 30 * 365 * 86_400_000, 11), arrived: now)
        #expect(slow)
        let crawl = try #require(belt.speed(at: now))
        #expect(crawl > 0 && crawl < 1e-9)
        #expect(DecisionEvent.divertPoint(lastSeen: now, distance: 3, speed: crawl) == nil)
        // The speeds of the report: 1e-300 m/s from the bus is within 0 to 20, and must not trap.
        let tiny = try BeltReading.parse(
            Array(#"{"type": "belt", "site": "dc1", "lane": "L1", "time": "\#(now)", "speed": 1e-300}"#.utf8))
        #expect(DecisionEvent.divertPoint(lastSeen: now, distance: 3, speed: tiny.speed) == nil)
        #expect(DecisionEvent.divertPoint(lastSeen: now, distance: 3, speed: 0) == nil, "a belt that stands")
        #expect(DecisionEvent.divertPoint(lastSeen: now, distance: 3, speed: 2) == now.adding(milliseconds: 1_500))
        #expect(DecisionEvent.divertPoint(lastSeen: now, distance: .infinity, speed: 2) == nil)
        #expect(DecisionEvent.divertPoint(lastSeen: now, distance: .nan, speed: 2) == nil)
        // Out of the contract's range, a speed is a dead letter naming it.
        #expect(throws: DeadLetter.self) {
            try BeltReading.parse(
                Array(#"{"type": "belt", "site": "dc1", "lane": "L1", "time": "\#(now)", "speed": 1e300}"#.utf8))
        }
        // Milliseconds from outside seconds: nil for what is not finite or beyond the limit.
        #expect(Timestamp.milliseconds(seconds: 1.5) == 1_500)
        #expect(Timestamp.milliseconds(seconds: -2) == -2_000)
        #expect(Timestamp.milliseconds(seconds: 1e300) == nil && Timestamp.milliseconds(seconds: .nan) == nil)
        #expect(Timestamp.milliseconds(seconds: 86_401) == nil && Timestamp.milliseconds(seconds: 86_400) == 86_400_000)
        // Moving an instant saturates instead of overflowing.
        #expect(Timestamp(milliseconds: .max - 1).adding(milliseconds: 10).milliseconds == .max)
        #expect(Timestamp(milliseconds: .min + 1).adding(milliseconds: -10).milliseconds == .min)
    }
}
