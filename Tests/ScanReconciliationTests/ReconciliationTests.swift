import Foundation
import ScanTestSupport
import ScanTestTiming
import Testing

import ScanCore

@testable import ScanReconciliation

@Suite("topology files", .timed)
struct TopologyTests {
    @Test("a lane's cameras get offsets from the travel times; stations and time zone are kept")
    func parses() throws {
        let text = #"""
            {"version": 1, "sites": [{"id": "dc1", "timeZone": "Europe/Zurich",
              "lanes": [{"id": "L1", "windowSeconds": 0.5, "graceSeconds": 3,
                         "cameras": [{"id": "cam-01"}, {"id": "cam-02", "travelSeconds": 1.5}, {"id": "cam-03", "travelSeconds": 2}]}],
              "stations": [{"id": "pack-01", "cameras": ["cam-10"]}]}]}
            """#
        let topology = try Topology.parse(Array(text.utf8), file: "t.json")
        let lane = try #require(topology.lane(site: "dc1", camera: "cam-03"))
        #expect(lane.id == "L1")
        #expect(lane.cameras.map(\.offsetMilliseconds) == [0, 1_500, 3_500])
        #expect(lane.windowMilliseconds == 500 && lane.graceMilliseconds == 3_000)
        #expect(lane.span == 3_500)
        #expect(topology.sites[0].timeZone == "Europe/Zurich")
        #expect(topology.sites[0].stations == [Topology.Station(id: "pack-01", cameras: ["cam-10"])])
        #expect(topology.lane(site: "dc2", camera: "cam-03") == nil)
        #expect(topology.lane(site: "dc1", camera: "cam-10") == nil)
    }

    @Test("every problem is named by its JSON path")
    func errors() throws {
        let text = #"""
            {"sites": [{"id": "dc 1", "timeZone": "Mars/Olympus",
              "lanes": [{"id": "L1", "cameras": [{"id": "a"}, {"id": "b"}]},
                        {"id": "L2", "cameras": [{"id": "a", "travelSeconds": 1}], "speed": 3}]}]}
            """#
        do {
            _ = try Topology.parse(Array(text.utf8), file: "bad.json")
            Issue.record("a bad topology was accepted")
        } catch {
            let paths = error.issues.map(\.path)
            #expect(error.file == "bad.json")
            #expect(paths.contains("sites[0].id"))
            #expect(paths.contains("sites[0].timeZone"))
            #expect(paths.contains("sites[0].lanes[0].cameras[1].travelSeconds"))  // required after the first
            #expect(paths.contains("sites[0].lanes[1].cameras[0].id"))  // on two lanes
            #expect(paths.contains("sites[0].lanes[1].speed"))
            #expect(paths.contains("sites[0].lanes[1].cameras[0].travelSeconds"))  // the first has none
        }
        #expect(throws: ConfigErrors.self) { try Topology.parse(Array("{".utf8), file: "x") }
    }
}

@Suite("cross-camera reconciliation", .timed)
struct ReconciliationTests {
    static let lane = Topology.Lane(
        id: "L1",
        cameras: [
            Topology.LaneCamera(id: "cam-01", offsetMilliseconds: 0),
            Topology.LaneCamera(id: "cam-02", offsetMilliseconds: 1_500),
            Topology.LaneCamera(id: "cam-03", offsetMilliseconds: 3_000),
        ], windowMilliseconds: 400, graceMilliseconds: 1_000)

    static func sighting(_ camera: String, at milliseconds: Int64, value: String = "4006381333931") -> LaneSighting {
        let time = Timestamp(milliseconds: 1_800_000_000_000 + milliseconds)
        return LaneSighting(
            site: "dc1", symbology: "EAN-13", value: value, valueEncoding: "text",
            member: PassMember(
                eventId: "\(camera)@\(milliseconds)", camera: camera, trackId: "\(camera)-t\(milliseconds)",
                firstSeen: time,
                lastSeen: time.adding(milliseconds: 300)))
    }

    /// Places every sighting, in the given order, and returns the passes.
    static func reconcile(_ sightings: [LaneSighting]) -> [ItemPass] {
        var passes: [ItemPass] = []
        var next = 0
        for sighting in sightings {
            _ = Reconciliation.place(sighting, lane: lane, passes: &passes) {
                next += 1
                return "item-\(next)"
            }
        }
        return passes
    }

    /// Three identical items 1 s apart, seen by three cameras with some jitter.
    static let identicalBackToBack: [LaneSighting] = (0..<3).flatMap { item -> [LaneSighting] in
        let start = Int64(item) * 1_000
        return [
            sighting("cam-01", at: start), sighting("cam-02", at: start + 1_500 + 120),
            sighting("cam-03", at: start + 3_000 - 90),
        ]
    }

    @Test("identical codes on items back to back stay apart: one pass per item, each seen by all three cameras")
    func identicalItems() {
        let passes = Self.reconcile(Self.identicalBackToBack)
        #expect(passes.count == 3)
        for (index, pass) in passes.enumerated() {
            #expect(pass.members.map(\.camera).sorted() == ["cam-01", "cam-02", "cam-03"])
            #expect(pass.missing(on: Self.lane).isEmpty)
            // Each pass holds the sightings of one item: first-camera times agree within the window.
            #expect(
                pass.members.allSatisfy {
                    abs(
                        $0.firstSeen.milliseconds - 1_800_000_000_000 - Int64(index) * 1_000
                            - (Self.lane.offset(of: $0.camera) ?? 0)) < 400
                })
        }
    }

    @Test("the order of arrival does not matter (agents publish independently)", arguments: [1, 2, 3, 4])
    func outOfOrder(seed: Int) {
        var generator = SeededGenerator(seed: UInt64(seed))
        let shuffled = Self.identicalBackToBack.shuffled(using: &generator)
        let passes = Self.reconcile(shuffled)
        #expect(passes.count == 3)
        let groups = Set(passes.map { Set($0.members.map(\.eventId)) })
        let expected = Set(Self.reconcile(Self.identicalBackToBack).map { Set($0.members.map(\.eventId)) })
        #expect(groups == expected)
    }

    @Test("an item one camera missed is one pass that names the missing camera; another code is another pass")
    func missingCamera() {
        let passes = Self.reconcile([
            Self.sighting("cam-01", at: 0), Self.sighting("cam-03", at: 3_050),
            Self.sighting("cam-02", at: 1_500, value: "5012345678900"),
        ])
        #expect(passes.count == 2)
        #expect(passes[0].missing(on: Self.lane) == ["cam-02"])
        #expect(passes[1].value == "5012345678900")
        #expect(passes[1].missing(on: Self.lane) == ["cam-01", "cam-03"])
    }

    @Test("a sighting outside the window opens a new pass; the same event twice changes nothing")
    func windowAndReplay() {
        var passes: [ItemPass] = []
        var n = 0
        let make = { () -> String in
            n += 1
            return "p\(n)"
        }
        #expect(
            Reconciliation.place(Self.sighting("cam-01", at: 0), lane: Self.lane, passes: &passes, newId: make)
                == .opened(0))
        #expect(
            Reconciliation.place(
                Self.sighting("cam-02", at: 1_500 + 500), lane: Self.lane, passes: &passes, newId: make) == .opened(1))
        #expect(
            Reconciliation.place(
                Self.sighting("cam-02", at: 1_500 + 300), lane: Self.lane, passes: &passes, newId: make) == .joined(0))
        #expect(
            Reconciliation.place(
                Self.sighting("cam-02", at: 1_500 + 300), lane: Self.lane, passes: &passes, newId: make) == .known(0))
        #expect(passes.count == 2)
    }

    @Test("a pass is due when every camera saw it, or when the lane's watermark passed its window and grace")
    func due() {
        var passes = Self.reconcile([Self.sighting("cam-01", at: 0), Self.sighting("cam-02", at: 1_500)])
        let base: Int64 = 1_800_000_000_000
        // Last camera expected at 3 000 ms; window 400 and grace 1 000 ms.
        #expect(!Reconciliation.isDue(passes[0], lane: Self.lane, watermark: Timestamp(milliseconds: base + 4_400)))
        #expect(Reconciliation.isDue(passes[0], lane: Self.lane, watermark: Timestamp(milliseconds: base + 4_401)))
        _ = Reconciliation.place(Self.sighting("cam-03", at: 3_000), lane: Self.lane, passes: &passes) { "x" }
        #expect(Reconciliation.isDue(passes[0], lane: Self.lane, watermark: Timestamp(milliseconds: base)))
    }

    @Test("a late sighting joins its closed pass and bumps the revision")
    func late() {
        var passes = Self.reconcile([Self.sighting("cam-01", at: 0), Self.sighting("cam-02", at: 1_500)])
        passes[0].closed = true
        passes[0].revision = 1
        let placement = Reconciliation.place(Self.sighting("cam-03", at: 3_100), lane: Self.lane, passes: &passes) {
            "new"
        }
        #expect(placement == .late(0))
        #expect(passes[0].revision == 2)
        #expect(passes[0].members.count == 3)
        #expect(!Reconciliation.isDue(passes[0], lane: Self.lane, watermark: Timestamp(milliseconds: Int64.max)))
    }
}

@Suite("pack verdicts", .timed)
struct PackEvaluationTests {
    static let order = [
        OrderLine(line: 1, code: "4006381333931", expected: 2), OrderLine(line: 2, code: "5012345678900", expected: 1),
    ]
    static func lookup(_ id: String) -> [OrderLine]? { id == "ORD-1" ? order : nil }
    static func codes(_ counts: [(String, Int)]) -> [CountedCode] {
        counts.map { CountedCode(value: $0.0, symbology: "EAN-13", count: $0.1) }
    }

    @Test("complete, short, over and unexpected, per line and for the order")
    func verdicts() {
        let complete = PackEvaluation.evaluate(
            sessionOrderId: "ORD-1", codes: Self.codes([("4006381333931", 2), ("5012345678900", 1)]), order: Self.lookup
        )
        #expect(complete.verdict == .complete)
        #expect(complete.lines.map(\.verdict) == [.complete, .complete])

        let short = PackEvaluation.evaluate(
            sessionOrderId: "ORD-1", codes: Self.codes([("4006381333931", 1), ("5012345678900", 1)]), order: Self.lookup
        )
        #expect(short.verdict == .short)
        #expect(
            short.lines[0]
                == PackLineResult(
                    line: 1, code: "4006381333931", symbology: "EAN-13", expected: 2, counted: 1, verdict: .short))

        let over = PackEvaluation.evaluate(
            sessionOrderId: "ORD-1", codes: Self.codes([("4006381333931", 3), ("5012345678900", 1)]), order: Self.lookup
        )
        #expect(over.verdict == .over)

        let unexpected = PackEvaluation.evaluate(
            sessionOrderId: "ORD-1",
            codes: Self.codes([("4006381333931", 2), ("5012345678900", 1), ("9780201379624", 1)]), order: Self.lookup)
        #expect(unexpected.verdict == .unexpected)
        #expect(
            unexpected.lines.last
                == PackLineResult(
                    line: nil, code: "9780201379624", symbology: "EAN-13", expected: 0, counted: 1, verdict: .unexpected
                ))

        // A missing line is short even with nothing counted; short outranks over and unexpected.
        let mixed = PackEvaluation.evaluate(
            sessionOrderId: "ORD-1", codes: Self.codes([("4006381333931", 5), ("9780201379624", 1)]), order: Self.lookup
        )
        #expect(mixed.verdict == .short)
        #expect(mixed.lines.map(\.verdict) == [.over, .short, .unexpected])
    }

    @Test("the order comes from a code with role order when the session has none; unknown orders are said so")
    func orderFromCode() {
        var codes = Self.codes([("4006381333931", 2), ("5012345678900", 1)])
        codes.insert(CountedCode(value: "ORD-1", symbology: "CODE-128", count: 1, role: "order"), at: 0)
        let fromCode = PackEvaluation.evaluate(sessionOrderId: nil, codes: codes, order: Self.lookup)
        #expect(fromCode.orderId == "ORD-1")
        #expect(fromCode.verdict == .complete)
        #expect(fromCode.lines.count == 2)  // the order label is not an item

        let unknown = PackEvaluation.evaluate(
            sessionOrderId: "ORD-404", codes: Self.codes([("4006381333931", 1)]), order: Self.lookup)
        #expect(unknown.verdict == .unknownOrder)
        #expect(unknown.orderId == "ORD-404")
        #expect(unknown.lines.map(\.counted) == [1])
        let none = PackEvaluation.evaluate(
            sessionOrderId: nil, codes: Self.codes([("4006381333931", 1)]), order: Self.lookup)
        #expect(none.verdict == .unknownOrder && none.orderId == nil)
    }
}

@Suite("order CSV", .timed)
struct OrderCSVTests {
    @Test("columns in any order, quoted fields, CRLF line ends, several orders")
    func parses() throws {
        let text =
            "line,Order_ID,quantity,code,note\r\n1,ORD-1,2,4006381333931,\"fragile, top\"\r\n2,ORD-1,1,\"50\"\"12\",x\r\n1,ORD-2,3,5012345678900,\r\n"
        let orders = try OrderCSV.parse(text, file: "o.csv")
        #expect(orders.map(\.id) == ["ORD-1", "ORD-2"])
        #expect(
            orders[0].lines == [
                OrderLine(line: 1, code: "4006381333931", expected: 2), OrderLine(line: 2, code: "50\"12", expected: 1),
            ])
        #expect(orders[1].lines == [OrderLine(line: 1, code: "5012345678900", expected: 3)])
    }

    @Test("every bad row is named by its line number")
    func errors() throws {
        let text =
            "order_id,line,code,quantity\nORD-1,1,400,2\nORD-1,x,400,2\nORD-1,2,,1\nORD-1,3,401,0\n,4,402,1\nORD-1,1,403,1\nORD-1,5\n"
        do {
            _ = try OrderCSV.parse(text, file: "bad.csv")
            Issue.record("a bad file was accepted")
        } catch {
            #expect(error.file == "bad.csv")
            #expect(error.issues.map(\.path) == ["line 3", "line 4", "line 5", "line 6", "line 7", "line 8"])
        }
        #expect(throws: ConfigErrors.self) { try OrderCSV.parse("order_id,code,quantity\nA,1,1\n", file: "h.csv") }
        #expect(throws: ConfigErrors.self) { try OrderCSV.parse("", file: "e.csv") }
    }

    /// The same three lines as Excel, LibreOffice and SAP write them.
    static let expectedLines = [
        OrderLine(line: 1, code: "4006381333931", expected: 2), OrderLine(line: 2, code: "5012345678900", expected: 1),
    ]

    @Test(
        "files as spreadsheets and ERPs export them: a UTF-8 byte-order mark, ';' or tab delimiters, quoted headers, quoted line breaks",
        arguments: [
            // Excel "CSV UTF-8" in a locale whose list separator is ';': BOM, CRLF, semicolons.
            "\u{FEFF}order_id;line;code;quantity\r\nORD-7;1;4006381333931;2\r\nORD-7;2;5012345678900;1\r\n",
            // Excel in an English locale: BOM and commas.
            "\u{FEFF}order_id,line,code,quantity\r\nORD-7,1,4006381333931,2\r\nORD-7,2,5012345678900,1\r\n",
            // SAP: quoted header and fields, ';', a note with a line break and a ';' inside quotes.
            "\"ORDER_ID\";\"LINE\";\"CODE\";\"QUANTITY\";\"NOTE\"\n\"ORD-7\";\"1\";\"4006381333931\";\"2\";\"top shelf;\nfragile\"\n\"ORD-7\";\"2\";\"5012345678900\";\"1\";\"\"\n",
            // Tab-separated, as a copy out of a spreadsheet.
            "order_id\tline\tcode\tquantity\nORD-7\t1\t4006381333931\t2\nORD-7\t2\t5012345678900\t1\n",
        ])
    func exportedFiles(text: String) throws {
        let orders = try OrderCSV.parse(text, file: "export.csv")
        #expect(orders.map(\.id) == ["ORD-7"])
        #expect(orders.first?.lines == Self.expectedLines)
    }

    @Test("a quoted line break keeps the line numbers of later rows true; an unclosed quote is named with its line")
    func quotedLineBreaks() throws {
        let text = "order_id,line,code,quantity,note\nORD-1,1,400,2,\"two\nlines\"\nORD-1,x,401,1,\n"
        do {
            _ = try OrderCSV.parse(text, file: "q.csv")
            Issue.record("a bad row was accepted")
        } catch {
            #expect(error.issues.map(\.path) == ["line 4"], "\(error.issues)")
        }
        do {
            _ = try OrderCSV.parse("order_id,line,code,quantity\nORD-1,1,\"400,2\nORD-1,2,401,1\n", file: "u.csv")
            Issue.record("an unclosed quote was accepted")
        } catch {
            #expect(error.issues.contains { $0.path == "line 2" && $0.message.contains("quote") }, "\(error.issues)")
        }
    }
}

@Suite("no-reads on item passes", .timed)
struct NoReadPassTests {
    static let lane = Topology.Lane(
        id: "L1",
        cameras: [
            Topology.LaneCamera(id: "a", offsetMilliseconds: 0),
            Topology.LaneCamera(id: "b", offsetMilliseconds: 1_500),
        ],
        windowMilliseconds: 400)

    static func pass(_ id: String, camera: String, at milliseconds: Int64) -> ItemPass {
        var pass = ItemPass(itemId: id, site: "dc1", lane: "L1", symbology: "EAN-13", value: "1", valueEncoding: "text")
        pass.members = [
            PassMember(
                eventId: id + ".s", camera: camera, trackId: id, firstSeen: Timestamp(milliseconds: milliseconds),
                lastSeen: Timestamp(milliseconds: milliseconds + 200))
        ]
        return pass
    }

    @Test("the pass whose expected time at the camera is nearest, within the window, and that camera did not read")
    func nearest() {
        let passes = [
            Self.pass("p0", camera: "a", at: 0), Self.pass("p1", camera: "a", at: 900),
            Self.pass("p2", camera: "b", at: 2_400),
        ]
        // b's no-read 1.5 s after a read p1 (at 900): expected 2,400, seen 2,450.
        #expect(
            Reconciliation.pass(
                forNoReadAt: Timestamp(milliseconds: 2_450), camera: "b", lane: Self.lane, passes: passes) == 1)
        // Outside every window: no camera read that item.
        #expect(
            Reconciliation.pass(
                forNoReadAt: Timestamp(milliseconds: 4_000), camera: "b", lane: Self.lane, passes: passes) == nil)
        // a's no-read near p2's expected time at a (900): p1 was read by a, p2 only by b.
        #expect(
            Reconciliation.pass(forNoReadAt: Timestamp(milliseconds: 950), camera: "a", lane: Self.lane, passes: passes)
                == 2)
    }
}
