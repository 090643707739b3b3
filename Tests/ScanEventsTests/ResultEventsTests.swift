import ScanCore
import ScanTestTiming
import Testing
import ScanEvents

/// The aggregator's results and dead letters as wire types: written from typed values, read back
/// the same, refused by field when broken.
@Suite("result wire types", .timed)
struct ResultEventsTests {
    static let t0 = Timestamp(milliseconds: 1795680001250)  // 2026-11-26T08:00:01.250Z

    static let pass = ItemPassEvent(
        itemId: "dc1-L1-00042", site: "dc1", lane: "L1", symbology: "EAN-13", value: "4006381333931",
        valueEncoding: nil, firstSeen: t0, lastSeen: t0.adding(milliseconds: 1_500), revision: 2, camerasExpected: 3,
        cameras: [
            .init(
                camera: "cam-01", trackId: "cam-01-r1-7", eventId: "cam-01-r1.s7", firstSeen: t0,
                lastSeen: t0.adding(milliseconds: 400), late: false),
            .init(
                camera: "cam-02", trackId: "cam-02-r1-3", eventId: "cam-02-r1.s3",
                firstSeen: t0.adding(milliseconds: 900),
                lastSeen: t0.adding(milliseconds: 1_500), late: true),
        ], missing: ["cam-03"])

    static let pack = PackRecordEvent(
        sessionId: "pack-01-r1-s4", site: "dc1", station: "P1", camera: "pack-01", orderId: "ORD-1001",
        verdict: .short, items: 3, startedAt: t0, completedAt: t0.adding(milliseconds: 60_000),
        lines: [
            .init(line: 1, code: "4006381333931", symbology: "EAN-13", expected: 2, counted: 2, verdict: .complete),
            .init(line: 2, code: "5901234123457", symbology: nil, expected: 2, counted: 1, verdict: .short),
            .init(line: nil, code: "LPN-9", symbology: "CODE-128", expected: 0, counted: 1, verdict: .unexpected),
        ])

    /// Element `index` of an array value.
    static func at(_ value: JSONValue?, _ index: Int) -> JSONValue? {
        guard case .array(let list)? = value, list.indices.contains(index) else { return nil }
        return list[index]
    }

    @Test("an item pass is written with the contract's fields and read back the same")
    func item() throws {
        let json = try JSONValue.parse(Self.pass.json)
        #expect(json["type"] == .string("item") && json["eventId"] == .string("dc1-L1-00042.r2"))
        #expect(json["time"] == .string("2026-11-26T08:00:02.750Z") && json["complete"] == .bool(false))
        #expect(json["missing"] == .array([.string("cam-03")]) && json["valueEncoding"] == nil)
        #expect(Self.at(json["cameras"], 1)?["late"] == .bool(true))
        #expect(try ItemPassEvent.parse(json) == Self.pass)
        var binary = Self.pass
        binary.valueEncoding = "base64"
        binary.missing = []
        let read = try ItemPassEvent.parse(try JSONValue.parse(binary.json))
        #expect(read == binary && read.complete)
    }

    @Test("a pack record is written with its lines (no line number for an unexpected code) and read back the same")
    func packRecord() throws {
        let json = try JSONValue.parse(Self.pack.json)
        #expect(json["eventId"] == .string("pack-01-r1-s4.pack") && json["time"] == .string("2026-11-26T08:01:01.250Z"))
        #expect(Self.at(json["lines"], 2)?["line"] == nil && Self.at(json["lines"], 1)?["symbology"] == nil)
        #expect(try PackRecordEvent.parse(json) == Self.pack)
        var noOrder = Self.pack
        noOrder.orderId = nil
        noOrder.lines = []
        #expect(try PackRecordEvent.parse(try JSONValue.parse(noOrder.json)) == noOrder)
        // A verdict is one of the contract's: the record's or a line's.
        let text = String(decoding: Self.pack.json, as: UTF8.self)
        for broken in [
            text.replacingOccurrences(of: #""verdict":"short","items""#, with: #""verdict":"fine","items""#),
            text.replacingOccurrences(of: #""verdict":"unexpected""#, with: #""verdict":"<b>""#),
        ] {
            #expect(broken != text)
            let refused = #expect(throws: DeadLetter.self) {
                try PackRecordEvent.parse(try JSONValue.parse(Array(broken.utf8)))
            }
            #expect(refused?.reason == .badValue && refused?.detail.contains("verdict") == true)
        }
    }

    @Test("a dead letter carries at most 4 KiB of the message, base64, and reads back")
    func deadLetter() throws {
        let message = [UInt8](repeating: 0x7B, count: 5000)
        let letter = DeadLetterEvent(
            reason: .badToken, detail: "camera 'cam\\x0A' is not a token", subject: "st.v1.sighting.dc1.x",
            payload: message)
        #expect(letter.payload.count == 4096)
        let read = try DeadLetterEvent.parse(try JSONValue.parse(letter.json))
        #expect(read == letter)
    }

    @Test("broken results are refused naming the field")
    func refused() throws {
        func item(_ edit: (inout [(String, JSONValue)]) -> Void) -> DeadLetter? {
            guard case .object(var members) = try? JSONValue.parse(Self.pass.json) else { return nil }
            edit(&members)
            do {
                _ = try ItemPassEvent.parse(.object(members))
                return nil
            } catch { return error }
        }
        func replacing(_ key: String, _ value: JSONValue) -> (inout [(String, JSONValue)]) -> Void {
            { members in members = members.map { $0.0 == key ? ($0.0, value) : $0 } }
        }
        #expect(item(replacing("type", .string("pack")))?.reason == .unknownType)
        #expect(item(replacing("eventId", .string("other.r2")))?.detail.contains("eventId") == true)
        #expect(item(replacing("cameras", .array([.number(1)])))?.detail == "cameras[0] is a number, not an object")
        #expect(item(replacing("missing", .array([.number(1)])))?.detail.contains("missing") == true)
        #expect(item(replacing("site", .string("dc 1")))?.reason == .badToken)
        #expect(item(replacing("lastSeen", .string("yesterday")))?.reason == .badValue)
        let letter = try? DeadLetterEvent.parse(
            try JSONValue.parse(Array(#"{"reason": "nope", "detail": "", "subject": "s", "payload": ""}"#.utf8)))
        #expect(letter == nil)
    }
}

@Suite("coded results on the wire", .timed)
struct CodedEventTests {
    static let t0 = ResultEventsTests.t0

    static let keyed = CodedEvent(
        noReadId: "cam-02-r1-41", site: "dc1", lane: "L1", camera: "cam-02", outcome: .keyed,
        code: .init(
            symbology: "CODE-128", value: "00340123450000000017", gs1: true,
            gs1Elements: [.init(ai: "00", value: "340123450000000017")]),
        keyedBy: "maria \"<b>\"", keyedAt: t0.adding(milliseconds: 60_000), noReadFirstSeen: t0, itemId: "it-1",
        parcelPassId: "pp-1")

    @Test("a coded result reads back as it was written; without a code it carries null")
    func roundTrip() throws {
        #expect(try CodedEvent.parse(try JSONValue.parse(Self.keyed.json)) == Self.keyed)
        var noLabel = Self.keyed
        noLabel.outcome = .noLabel
        noLabel.code = nil
        noLabel.itemId = nil
        let value = try JSONValue.parse(noLabel.json)
        #expect(value["code"] == .null && value["eventId"] == .string("cam-02-r1-41.coded"))
        #expect(try CodedEvent.parse(value) == noLabel)
    }

    @Test("refused: an outcome outside the list, a code without keyed, keyed without a code, a wrong eventId")
    func refusals() throws {
        let text = String(decoding: Self.keyed.json, as: UTF8.self)
        for (from, to) in [
            (#""outcome":"keyed""#, #""outcome":"guessed""#),
            (#""outcome":"keyed""#, #""outcome":"no-label""#),
            (#""eventId":"cam-02-r1-41.coded""#, #""eventId":"other.coded""#),
        ] {
            #expect(text.contains(from), "\(from)")
            let broken = text.replacingOccurrences(of: from, with: to)
            #expect(throws: DeadLetter.self) { try CodedEvent.parse(try JSONValue.parse(Array(broken.utf8))) }
        }
    }
}
