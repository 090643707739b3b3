import Foundation
import Logging
import ScanAggregatorRuntime
import ScanCore
import ScanEvents
import ScanPostgres
import ScanReconciliation
import ScanServices
import ScanTestSupport
import ScanTestTiming
import ScanTesting
import Testing

@testable import ScanAggregator

/// Reconciliation's store contract: the same cases, and the same seeded random sequences of
/// rounds, run against the store in memory (what the runtime's tests use) and against
/// PostgreSQL (what the aggregator uses), through `ReconcileLoop` and the port alone. Each case
/// checks what the results say; the random sequences check that both stores publish the same.
///
/// Both stores run on their own clocks (the memory store's stands still, PostgreSQL's runs), so
/// the lanes' grace is long (120 s): passes close by event time — a later sighting raising the
/// lane's watermark — never because a lane went quiet while a test ran.
@Suite(
    "reconciliation's store contract, in memory and in PostgreSQL", .timed,
    .enabled(if: TestEnvironment.postgresEnabled))
struct ReconcileContractTests {
    enum Kind: String, CaseIterable, Sendable { case memory, postgres }

    static let base = Timestamp(milliseconds: 1_795_800_000_000)

    /// Lane L1 of dc1: cam-01, cam-02 1.5 s later; window 0.4 s, grace 120 s; a decision on
    /// every pass that misses a GS1-128 (no parcel here requires one) or reads no code. Station
    /// pack-01 with cam-10.
    static let topology = #"""
        {"version": 1, "sites": [{"id": "dc1",
          "lanes": [{"id": "L1", "windowSeconds": 0.4, "graceSeconds": 120,
                     "cameras": [{"id": "cam-01"}, {"id": "cam-02", "travelSeconds": 1.5}],
                     "decision": {"checkOrders": true, "divertOn": ["no-read", "unknown-order"]}}],
          "stations": [{"id": "pack-01", "cameras": ["cam-10"]}]}]}
        """#

    /// A store under the contract, with a loop over it that publishes into a recorder.
    final class Subject {
        let kind: Kind
        let loop: ReconcileLoop
        let results = RecordingPublisher()
        private let ingestEvents: ([[UInt8]]) throws -> Void
        private let settled: () throws -> [String: String?]
        /// Stores a no-read's coding as `scanadmin noreads resolve` does.
        let code: (CodedEvent) throws -> Void
        let drop: () -> Void

        init(_ kind: Kind, orders: [OrderCSV.Order]) throws {
            self.kind = kind
            let topology = try Topology.parse(Array(ReconcileContractTests.topology.utf8), file: "topology.json")
            let store: any ReconcileStore
            switch kind {
            case .memory:
                let clock = ManualClock()
                let memory = MemoryReconcileStore(clock: clock)
                memory.setTopology(topology)
                for order in orders { memory.addOrder(order.id, lines: order.lines) }
                ingestEvents = { events in
                    // One batch, stored at one time (PostgreSQL's now() is the transaction's).
                    clock.advance(by: .milliseconds(1))
                    for bytes in events { try Self.addToMemory(memory, bytes) }
                }
                settled = { memory.settledNoReads }
                code = { memory.addCoding($0) }
                drop = {}
                store = memory
            case .postgres:
                let database = try MigratedDatabase(prefix: "st_contract")
                try SiteStore(connection: database.connection).load(topology)
                try SiteStore(connection: database.connection).importOrders(
                    orders, source: "test")
                let ingest = PostgresSightingStore(dsn: database.dsn)
                ingestEvents = { events in _ = try ingest.store(try Self.batch(events)) }
                settled = {
                    var rows: [String: String?] = [:]
                    for row in try database.connection.query(
                        "SELECT event_id, item_id FROM noreads WHERE settled"
                    ).named("settled no-reads") {
                        rows[try row.text("event_id")] = try row.optionalText("item_id")
                    }
                    return rows
                }
                code = { coded in
                    try database.connection.query(
                        """
                        INSERT INTO noread_codings (site, camera, noread_id, lane, noread_first_seen, outcome, code,
                                                    symbology, gs1, parcel_pass_id, keyed_by, keyed_at)
                        VALUES ($1, $2, $3, $4, $5::timestamptz, $6, $7, $8, $9::boolean, $10, $11, $12::timestamptz)
                        """,
                        [
                            .text(coded.site), .text(coded.camera), .text(coded.noReadId), .text(coded.lane),
                            .text(coded.noReadFirstSeen.description), .text(coded.outcome.rawValue),
                            .optionalText(coded.code?.value), .optionalText(coded.code?.symbology),
                            .text(coded.code?.gs1 == true ? "true" : "false"), .optionalText(coded.parcelPassId),
                            .text(coded.keyedBy), .text(coded.keyedAt.description),
                        ])
                }
                drop = database.drop
                store = PostgresReconcileStore(dsn: database.dsn)
            }
            let ids = ReconcileLoopTestsCounter()
            loop = ReconcileLoop(
                store: store, publisher: results, subjects: ContractSubjects(prefix: "scantrack"),
                clock: ManualClock(), logger: Logger(label: "test"), newId: { "id-\(ids.next())" })
        }

        func ingest(_ events: [[UInt8]]) throws { try ingestEvents(events) }
        @discardableResult func round() throws -> ReconcileCounts { try loop.runOnce() }
        func settledNoReads() throws -> [String: String?] { try settled() }

        /// The published results of one family (`item`, `parcelpass`, `decision`, `pack`), parsed.
        func published(_ family: String) -> [JSONValue] {
            results.published.filter { $0.subject.hasPrefix("scantrack.v1.\(family).") }.compactMap {
                try? JSONValue.parse($0.bytes)
            }
        }

        /// Everything published, each message as its id and its JSON without the fields a store's
        /// clock writes (`time`; a decision's `late`), in the order published.
        func outcome() -> [String] {
            results.published.map { message in
                var text = message.id + " "
                if case .object(let fields)? = try? JSONValue.parse(message.bytes) {
                    let kept = fields.filter { $0.0 != "time" && $0.0 != "late" }
                    text += "\(kept.sorted { $0.0 < $1.0 }.map { "\($0.0)=\($0.1)" })"
                }
                return text
            }
        }

        /// An agent event as ingest parses it: its family from its type.
        static func event(_ bytes: [UInt8]) throws -> IngestEvent {
            let value = try JSONValue.parse(bytes)
            let type = value["type"]?.stringValue ?? ""
            let family = SubjectFamily(rawValue: type) ?? (type.hasPrefix("session.") ? .session : .status)
            return try IngestEvent.parse(value, family: family)
        }

        /// An agent event as ingest hands it to the memory store.
        static func addToMemory(_ store: MemoryReconcileStore, _ bytes: [UInt8]) throws {
            switch try event(bytes) {
            case .sighting(let sighting):
                store.addSighting(
                    UnreconciledSighting(
                        eventId: sighting.eventId, site: sighting.site, camera: sighting.camera,
                        trackId: sighting.trackId, symbology: sighting.symbology, value: sighting.value,
                        valueEncoding: sighting.valueEncoding, accepted: sighting.status == .accepted,
                        firstSeen: sighting.firstSeen, lastSeen: sighting.lastSeen))
            case .noRead(let noRead):
                store.addNoRead(
                    eventId: noRead.eventId, site: noRead.site, camera: noRead.camera, firstSeen: noRead.firstSeen)
            case .parcel(let parcel): store.addParcel(parcel)
            case .session(let session): store.addCompletedSession(session)
            default: Issue.record("no such event in the contract's cases")
            }
        }

        /// Agent events as ingest stores them in PostgreSQL.
        static func batch(_ events: [[UInt8]]) throws -> EventBatch {
            var batch = EventBatch()
            for bytes in events { batch.append(try event(bytes), body: String(decoding: bytes, as: UTF8.self)) }
            return batch
        }
    }

    /// A JSON array's strings.
    static func strings(_ value: JSONValue?) -> [String] {
        guard case .array(let items)? = value else { return [] }
        return items.compactMap(\.stringValue)
    }

    // MARK: events

    static func sighting(
        _ track: String, _ value: String, camera: String, at offset: Int64, status: String = "accepted"
    ) -> [UInt8] {
        let first = base.adding(milliseconds: offset)
        var writer = JSONWriter()
        writer.field("type", "sighting")
        writer.field("eventId", track + ".sighting")
        writer.field("site", "dc1")
        writer.field("camera", camera)
        writer.field("time", first.adding(milliseconds: 400).description)
        writer.field("trackId", track)
        writer.field("symbology", "EAN-13")
        writer.field("value", value)
        writer.field("status", status)
        if status == "rejected" { writer.field("ruleId", "reject-test") }
        writer.field("firstSeen", first.description)
        writer.field("lastSeen", first.adding(milliseconds: 200).description)
        writer.field("firstFrame", 1)
        writer.field("lastFrame", 9)
        writer.field("frames", 9)
        writer.field("decodes", 7)
        return writer.finished()
    }

    static func noRead(_ id: String, camera: String, at offset: Int64) -> [UInt8] {
        ReconcileTests.noRead(id, camera: camera, at: base.adding(milliseconds: offset))
    }

    /// `camera`'s parcel `id`, first seen `at`, with its codes (track id, value, status).
    static func parcel(_ id: String, camera: String, at offset: Int64, codes: [(String, String, String)]) -> [UInt8] {
        SampleEvents.parcel(
            id, camera: camera, firstSeen: base.adding(milliseconds: offset),
            codes: codes.map { (track: $0.0, value: $0.1, status: $0.2) })
    }

    static func session(_ id: String, orderId: String?, codes: [(String, Int, String?)], eventId: String? = nil)
        -> [UInt8]
    {
        var bytes = ReconcileTests.sessionCompleted(id, orderId: orderId, codes: codes)
        if let eventId {
            bytes = Array(
                String(decoding: bytes, as: UTF8.self).replacingOccurrences(
                    of: "\"\(id).completed\"", with: "\"\(eventId)\""
                ).utf8)
        }
        return bytes
    }

    /// Sightings far behind on both cameras (values nobody else has): the lane's watermark passes
    /// everything before them, so every earlier pass is due.
    static func sweep(at offset: Int64) -> [[UInt8]] {
        [
            sighting("sweep-1", "0000000000017", camera: "cam-01", at: offset),
            sighting("sweep-2", "0000000000017", camera: "cam-02", at: offset + 1_500),
        ]
    }

    // MARK: cases

    @Test(
        "identical items back to back, one camera missing one: one pass each, the miss named", arguments: Kind.allCases)
    func identicalItems(kind: Kind) throws {
        let subject = try Subject(kind, orders: [])
        defer { subject.drop() }
        var events: [[UInt8]] = []
        for item in 0..<6 {
            let at = Int64(item) * 900
            events.append(Self.sighting("a\(item)", "4006381333931", camera: "cam-01", at: at))
            if item != 3 {
                events.append(Self.sighting("b\(item)", "4006381333931", camera: "cam-02", at: at + 1_500 + 40))
            }
        }
        try subject.ingest(events)
        try subject.round()
        try subject.ingest(Self.sweep(at: 400_000))
        try subject.round()
        let items = subject.published("item").filter { $0["value"]?.stringValue == "4006381333931" }
        #expect(items.count == 6)
        let missing = items.filter { !Self.strings($0["missing"]).isEmpty }
        #expect(missing.count == 1)
        #expect(missing.first.map { Self.strings($0["missing"]) } == ["cam-02"])
        #expect(items.allSatisfy { $0["revision"]?.intValue == 1 })
    }

    @Test("a late sighting joins the closed pass as revision 2; a rejected one joins nothing", arguments: Kind.allCases)
    func lateSighting(kind: Kind) throws {
        let subject = try Subject(kind, orders: [])
        defer { subject.drop() }
        try subject.ingest([Self.sighting("a", "5012345678900", camera: "cam-01", at: 0)] + Self.sweep(at: 400_000))
        try subject.round()
        try subject.ingest([
            Self.sighting("b", "5012345678900", camera: "cam-02", at: 1_520),
            Self.sighting("c", "5012345678900", camera: "cam-02", at: 1_560, status: "rejected"),
        ])
        let round = try subject.round()
        #expect(round.lateSightings == 1)
        let revisions = subject.published("item").filter { $0["value"]?.stringValue == "5012345678900" }.compactMap {
            $0["revision"]?.intValue
        }
        #expect(revisions == [1, 2])
    }

    @Test("a no-read is attached to the pass the other camera read, or to none", arguments: Kind.allCases)
    func noReads(kind: Kind) throws {
        let subject = try Subject(kind, orders: [])
        defer { subject.drop() }
        try subject.ingest([
            Self.sighting("a", "4006381333931", camera: "cam-01", at: 0),
            Self.noRead("nr-1", camera: "cam-02", at: 1_530),
            Self.noRead("nr-2", camera: "cam-02", at: 60_000),
            Self.noRead("nr-3", camera: "cam-10", at: 0),
        ])
        try subject.round()
        try subject.ingest(Self.sweep(at: 400_000))
        try subject.round()
        let item = subject.published("item").first { $0["value"]?.stringValue == "4006381333931" }
        let settled = try subject.settledNoReads()
        #expect(settled.count == 3)
        let attached: String?? = settled["nr-1"]
        #expect(attached == .some(item?["itemId"]?.stringValue) && item != nil)
        for none in ["nr-2", "nr-3"] {
            let itemId: String?? = settled[none]
            #expect(itemId == .some(String?.none), "\(none)")
        }
    }

    @Test(
        "pack records: verdicts against the orders; a session delivered twice makes one", arguments: Kind.allCases)
    func packs(kind: Kind) throws {
        let subject = try Subject(
            kind,
            orders: [
                OrderCSV.Order(
                    id: "ORD-1",
                    lines: [OrderLine(line: 1, code: "111", expected: 2), OrderLine(line: 2, code: "222", expected: 1)])
            ])
        defer { subject.drop() }
        try subject.ingest([
            Self.session("s1", orderId: "ORD-1", codes: [("111", 2, nil), ("222", 1, nil)]),
            Self.session("s2", orderId: nil, codes: [("ORD-1", 1, "order"), ("111", 1, nil)]),
            Self.session("s3", orderId: "ORD-9", codes: [("111", 1, nil)]),
        ])
        try subject.round()
        try subject.ingest([
            Self.session("s1", orderId: "ORD-1", codes: [("111", 1, nil)], eventId: "s1.completed-again")
        ])
        try subject.round()
        var verdicts: [String: String] = [:]
        for pack in subject.published("pack") {
            if let session = pack["sessionId"]?.stringValue {
                #expect(verdicts[session] == nil, "two pack records of \(session)")
                verdicts[session] = pack["verdict"]?.stringValue ?? ""
            }
        }
        #expect(verdicts == ["s1": "complete", "s2": "short", "s3": "unknown-order"])
    }

    @Test(
        "parcels: both cameras' parcels of a box are one parcel pass with one decision; a box nobody read is diverted",
        arguments: Kind.allCases)
    func parcels(kind: Kind) throws {
        let subject = try Subject(kind, orders: [])
        defer { subject.drop() }
        try subject.ingest([
            Self.sighting("a1", "4006381333931", camera: "cam-01", at: 0),
            Self.sighting("b1", "4006381333931", camera: "cam-02", at: 1_510),
            Self.parcel("p1", camera: "cam-01", at: 0, codes: [("a1", "4006381333931", "accepted")]),
            Self.parcel("q1", camera: "cam-02", at: 1_510, codes: [("b1", "4006381333931", "accepted")]),
            Self.parcel("p2", camera: "cam-01", at: 5_000, codes: []),
            Self.parcel("q2", camera: "cam-02", at: 6_500, codes: []),
        ])
        for _ in 0..<3 { try subject.round() }
        let passes = subject.published("parcelpass")
        #expect(passes.count == 2)
        let decisions = subject.published("decision")
        #expect(decisions.count == 2)
        let actions = decisions.compactMap { $0["action"]?.stringValue }.sorted()
        #expect(actions == ["divert", "divert"])  // one unknown order (checkOrders), one no-read
        let reasons = Set(decisions.flatMap { Self.strings($0["reasons"]) })
        #expect(reasons == ["no-read", "unknown-order"])
    }

    @Test(
        "a box nobody read, keyed later: its parcel pass goes out again as revision 2 with the keyed code marked keyed, once; the decision stands",
        arguments: Kind.allCases)
    func keyedNoRead(kind: Kind) throws {
        let subject = try Subject(kind, orders: [])
        defer { subject.drop() }
        try subject.ingest([
            Self.parcel("p2", camera: "cam-01", at: 5_000, codes: []),
            Self.parcel("q2", camera: "cam-02", at: 6_500, codes: []),
        ])
        for _ in 0..<2 { try subject.round() }
        let first = subject.published("parcelpass")
        try #require(first.count == 1)
        #expect(first[0]["noRead"] == .bool(true) && first[0]["codings"] == nil)
        let passId = try #require(first[0]["passId"]?.stringValue)
        let keyed = CodedEvent(
            noReadId: "nr-p2", site: "dc1", lane: "L1", camera: "cam-01", outcome: .keyed,
            code: CodedEvent.Code(symbology: "EAN-13", value: "4006381333931"), keyedBy: "maria <b>",
            keyedAt: Self.base.adding(milliseconds: 60_000), noReadFirstSeen: Self.base.adding(milliseconds: 5_000),
            itemId: nil, parcelPassId: passId)
        var elsewhere = keyed
        (elsewhere.noReadId, elsewhere.parcelPassId) = ("nr-gone", "a-pass-long-dropped")
        try subject.code(keyed)
        try subject.code(elsewhere)
        for _ in 0..<3 { try subject.round() }
        let passes = subject.published("parcelpass")
        try #require(passes.count == 2)
        let second = try ParcelPassEvent.parse(passes[1])
        #expect(second.passId == passId && second.revision == 2 && !second.noRead)
        #expect(
            second.codes == [
                ParcelCode(
                    symbology: "EAN-13", value: "4006381333931", valueEncoding: nil, itemId: nil, keyedFor: "nr-p2")
            ])
        let sent = subject.results.published.filter { $0.subject.hasPrefix("scantrack.v1.parcelpass.") }
        let text = String(decoding: sent.last?.bytes ?? [], as: UTF8.self)
        #expect(text.contains(#""source":"keyed","noReadId":"nr-p2""#), "published as: \(text)")
        #expect(second.codings == [ParcelPassEvent.Coding(keyed)])
        #expect(subject.published("decision").count == 1, "decided once, as it closed")
        #expect(subject.published("coded").count == 2)
    }

    // MARK: seeded random rounds

    /// A lane's day in miniature: items of a few values 0.5–1.5 s apart, each camera reading most
    /// of them (some reads rejected), a no-read now and then for a miss, a parcel per camera per
    /// item, sessions at the bench (one delivered twice); delivered in shuffled chunks with
    /// rounds between them.
    static func script(seed: UInt64) -> [[[UInt8]]] {
        var random = SeededGenerator(seed: seed)
        let values = ["4006381333931", "5012345678900", "9780201379624"]
        var events: [[UInt8]] = []
        var at: Int64 = 0
        for item in 0..<Int.random(in: 10...24, using: &random) {
            at += Int64.random(in: 500...1_500, using: &random)
            let value = values[Int.random(in: 0..<values.count, using: &random)]
            for (camera, offset) in [("cam-01", Int64(0)), ("cam-02", Int64(1_500))] {
                let time = at + offset + Int64.random(in: -60...60, using: &random)
                let track = "\(camera)-\(item)"
                var codes: [(String, String, String)] = []
                if Double.random(in: 0..<1, using: &random) < 0.85 {
                    let status = Double.random(in: 0..<1, using: &random) < 0.1 ? "rejected" : "accepted"
                    events.append(Self.sighting(track, value, camera: camera, at: time, status: status))
                    codes.append((track, value, status))
                } else if Bool.random(using: &random) {
                    events.append(Self.noRead("nr-\(track)", camera: camera, at: time))
                }
                if Double.random(in: 0..<1, using: &random) < 0.8 {
                    events.append(Self.parcel("parcel-\(track)", camera: camera, at: time, codes: codes))
                }
            }
        }
        for session in 0..<Int.random(in: 1...4, using: &random) {
            let order = ["ORD-1", "ORD-2", nil][Int.random(in: 0..<3, using: &random)]
            events.append(
                Self.session(
                    "s\(session)", orderId: order,
                    codes: [("111", Int.random(in: 1...3, using: &random), nil), ("222", 1, nil)]))
        }
        events.append(Self.session("s0", orderId: "ORD-1", codes: [("111", 1, nil)], eventId: "s0.again"))
        // Cameras deliver late and out of order: shuffled within neighbourhoods, in chunks.
        var delivered: [[UInt8]] = []
        var rest = events
        while !rest.isEmpty {
            let take = min(rest.count, Int.random(in: 1...8, using: &random))
            delivered += Array(rest.prefix(take)).shuffled(using: &random)
            rest.removeFirst(take)
        }
        var chunks: [[[UInt8]]] = []
        while !delivered.isEmpty {
            let take = min(delivered.count, Int.random(in: 1...12, using: &random))
            chunks.append(Array(delivered.prefix(take)))
            delivered.removeFirst(take)
        }
        chunks.append(Self.sweep(at: at + 400_000))
        return chunks
    }

    static let orders = [
        OrderCSV.Order(id: "ORD-1", lines: [OrderLine(line: 1, code: "111", expected: 2)]),
        OrderCSV.Order(
            id: "ORD-2",
            lines: [OrderLine(line: 1, code: "111", expected: 1), OrderLine(line: 2, code: "222", expected: 1)]
        ),
    ]

    @Test(
        "seeded random rounds: both stores publish the same results in the same order and settle the same no-reads",
        arguments: [11, 23, 47] as [UInt64])
    func randomRounds(seed: UInt64) throws {
        let chunks = Self.script(seed: seed)
        let accepted = Set(
            chunks.joined().compactMap { bytes -> String? in
                guard let event = try? JSONValue.parse(bytes), event["type"]?.stringValue == "sighting",
                    event["status"]?.stringValue == "accepted"
                else { return nil }
                return event["eventId"]?.stringValue
            })
        struct Outcome {
            var published: [String]
            var settled: [String: String?]
            var totals: ReconcileCounts
        }
        var outcomes: [Kind: Outcome] = [:]
        for kind in Kind.allCases {
            let subject = try Subject(kind, orders: Self.orders)
            defer { subject.drop() }
            for chunk in chunks {
                try subject.ingest(chunk)
                try subject.round()
            }
            // Until nothing changes: parcels wait for their codes' passes, passes for the sweep.
            for _ in 0..<3 { try subject.round() }
            outcomes[kind] = Outcome(
                published: subject.outcome(), settled: try subject.settledNoReads(), totals: subject.loop.totals)
            // Every accepted read is in exactly one pass, as the pass's latest revision says.
            var latest: [String: (revision: Int, sightings: [String])] = [:]
            for item in subject.published("item") {
                guard let id = item["itemId"]?.stringValue, let revision = item["revision"]?.intValue,
                    case .array(let cameras)? = item["cameras"]
                else { continue }
                if revision > latest[id]?.revision ?? 0 {
                    latest[id] = (revision, cameras.compactMap { $0["eventId"]?.stringValue })
                }
            }
            let placed = latest.values.flatMap(\.sightings)
            #expect(Set(placed).count == placed.count, "\(kind): a read in two passes")
            #expect(Set(placed) == accepted, "\(kind): reads not in a pass: \(accepted.subtracting(placed).sorted())")
        }
        let memory = try #require(outcomes[.memory])
        let postgres = try #require(outcomes[.postgres])
        #expect(memory.totals.sightings > 0 && memory.totals.passesClosed > 0 && memory.totals.parcelPassesClosed > 0)
        #expect(memory.totals == postgres.totals)
        #expect(memory.settled == postgres.settled)
        #expect(memory.published.count == postgres.published.count)
        #expect(memory.published.map { $0.prefix { $0 != " " } } == postgres.published.map { $0.prefix { $0 != " " } })
        for (a, b) in zip(memory.published, postgres.published) where a != b {
            Issue.record("memory published\n\(a)\nPostgreSQL published\n\(b)")
            break
        }
    }
}

/// Ids in order (id-1, id-2, …): both stores name their passes alike.
final class ReconcileLoopTestsCounter: @unchecked Sendable {
    // @unchecked: used on the thread that runs the loop.
    private var value = 0
    func next() -> Int {
        value += 1
        return value
    }
}
