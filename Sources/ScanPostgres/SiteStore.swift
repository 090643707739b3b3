import Foundation
import ScanCore
import ScanReconciliation

/// Topology and orders in PostgreSQL: written by `scanadmin` (or the aggregator's `--topology`),
/// read by the aggregator's reconciler and by reports.
public struct SiteStore {
    public let connection: PGConnection

    public init(connection: PGConnection) { self.connection = connection }

    /// Replaces the layout of every site in `topology` (other sites stay as they are), in one
    /// transaction.
    public func load(_ topology: Topology) throws(PGError) {
        try connection.transaction { () throws(PGError) in
            for site in topology.sites {
                try connection.query("DELETE FROM sites WHERE site = $1", [.text(site.id)])
                try connection.query(
                    "INSERT INTO sites (site, time_zone) VALUES ($1, $2)", [.text(site.id), .text(site.timeZone)])
                for lane in site.lanes {
                    try connection.query(
                        "INSERT INTO lanes (site, lane, window_ms, grace_ms) VALUES ($1, $2, $3, $4)",
                        [
                            .text(site.id), .text(lane.id), .int(Int(lane.windowMilliseconds)),
                            .int(Int(lane.graceMilliseconds)),
                        ])
                    if lane.decision != nil || lane.measureOffsetMilliseconds != 0 {  // migrations 0015, 0016
                        try connection.query(
                            "UPDATE lanes SET decision = $3::jsonb, measure_offset_ms = $4 WHERE site = $1 AND lane = $2",
                            [
                                .text(site.id), .text(lane.id),
                                .optionalText(lane.decision.map { String(decoding: $0.json, as: UTF8.self) }),
                                .int(Int(lane.measureOffsetMilliseconds)),
                            ])
                    }
                    for (position, camera) in lane.cameras.enumerated() {
                        try connection.query(
                            "INSERT INTO lane_cameras (site, lane, camera, position, offset_ms) VALUES ($1, $2, $3, $4, $5)",
                            [
                                .text(site.id), .text(lane.id), .text(camera.id), .int(position),
                                .int(Int(camera.offsetMilliseconds)),
                            ])
                    }
                }
                for station in site.stations {
                    try connection.query(
                        "INSERT INTO stations (site, station, cameras) VALUES ($1, $2, $3::text[])",
                        [.text(site.id), .text(station.id), .text(Self.arrayLiteral(station.cameras))])
                }
            }
        }
    }

    /// Every site as stored.
    public func topology() throws(PGError) -> Topology {
        var sites: [Topology.Site] = []
        for row in try connection.query("SELECT site, time_zone FROM sites ORDER BY site").named("sites") {
            sites.append(Topology.Site(id: try row.text("site"), timeZone: try row.text("time_zone")))
        }
        var laneCameras: [String: [Topology.LaneCamera]] = [:]
        for row in try connection.query(
            "SELECT site, lane, camera, offset_ms FROM lane_cameras ORDER BY site, lane, position"
        ).named("lane cameras") {
            laneCameras[try row.text("site") + "\u{0}" + row.text("lane"), default: []].append(
                Topology.LaneCamera(id: try row.text("camera"), offsetMilliseconds: Int64(try row.int("offset_ms"))))
        }
        for row in try connection.query(
            """
            SELECT site, lane, window_ms, grace_ms, decision::text AS decision, measure_offset_ms
            FROM lanes ORDER BY site, lane
            """
        ).named("lanes") {
            let site = try row.text("site")
            let lane = try row.text("lane")
            guard let index = sites.firstIndex(where: { $0.id == site }) else { continue }
            sites[index].lanes.append(
                Topology.Lane(
                    id: lane, cameras: laneCameras[site + "\u{0}" + lane] ?? [],
                    windowMilliseconds: Int64(try row.int("window_ms")),
                    graceMilliseconds: Int64(try row.int("grace_ms")),
                    decision: try row.optionalText("decision").flatMap {
                        Topology.LaneDecision(stored: Array($0.utf8))
                    },
                    measureOffsetMilliseconds: Int64(try row.int("measure_offset_ms"))))
        }
        for row in try connection.query(
            "SELECT site, station, coalesce(array_to_json(cameras)::text, '[]') AS cameras FROM stations ORDER BY site, station"
        ).named("stations") {
            let site = try row.text("site")
            guard let index = sites.firstIndex(where: { $0.id == site }) else { continue }
            let listed = try row.text("cameras")
            guard case .array(let items)? = try? JSONValue.parse(Array(listed.utf8)) else {
                throw PGError(
                    code: .unexpectedResult, function: "stations", input: "cameras",
                    message: "cameras '\(listed)' is not a list")
            }
            sites[index].stations.append(
                Topology.Station(id: try row.text("station"), cameras: items.compactMap(\.stringValue)))
        }
        return Topology(sites: sites)
    }

    /// Imports orders of `site` (nil: for every site) in one transaction, each as the next
    /// revision of its order (a WMS correcting an order re-sends it whole), through the same
    /// function as orders from NATS. Returns the lines written.
    @discardableResult
    public func importOrders(_ orders: [OrderCSV.Order], site: String? = nil, source: String) throws(PGError) -> Int {
        var lines = 0
        try connection.transaction { () throws(PGError) in
            for order in orders {
                _ = try applyOrder(
                    id: order.id, site: site, revision: nil, cancel: false,
                    lines: order.lines.map { ($0.line, $0.code, $0.expected) }, source: source)
                lines += order.lines.count
            }
        }
        return lines
    }

    /// Applies one order of `site` (nil: an order for every site, stored under '') through
    /// `scantrack_apply_order`: a revision newer than the stored one (nil: the next) replaces its
    /// lines or cancels it; an older or equal one changes nothing. Returns the revision stored
    /// before (0: none), or `revisionJumpRefused` when the revision jumps more than
    /// `maxRevisionJump` past it (nothing changed).
    public func applyOrder(
        id: String, site: String?, revision: Int?, cancel: Bool, lines: [(line: Int, code: String, quantity: Int)],
        source: String
    ) throws(PGError) -> Int {
        let row = try connection.query(
            """
            SELECT scantrack_apply_order($1, $2, $3::integer, $4::boolean, $5::integer[], $6::text[], $7::integer[], $8)
                AS stored
            """,
            [
                .text(id), .optionalText(site), revision.map { PGValue.int($0) } ?? .null,
                .text(cancel ? "true" : "false"),
                .text("{" + lines.map { String($0.line) }.joined(separator: ",") + "}"),
                .text(Self.arrayLiteral(lines.map(\.code))),
                .text("{" + lines.map { String($0.quantity) }.joined(separator: ",") + "}"), .text(source),
            ]
        ).named("apply order").first
        return try row?.int("stored") ?? 0
    }

    /// What `applyOrder` returns for a revision that jumps too far.
    public static let revisionJumpRefused = -1
    /// How far past the stored revision a new one may be (migration 0018).
    public static let maxRevisionJump = 1_000_000

    /// The revision a site's order has and whether it is cancelled; nil when it is not known.
    /// `site` nil: the order stored for every site.
    public func orderState(site: String?, _ orderId: String) throws(PGError) -> (revision: Int, cancelled: Bool)? {
        guard
            let row = try connection.query(
                "SELECT revision, cancelled FROM orders WHERE site = $1 AND order_id = $2",
                [.text(site ?? ""), .text(orderId)]
            ).named("order").first
        else { return nil }
        return (try row.int("revision"), try row.bool("cancelled"))
    }

    /// The lines of the order `orderId` at `site`: the site's own order of that id, else one
    /// imported for every site; nil when neither is known, or the one that counts is cancelled.
    public func orderLines(site: String, _ orderId: String) throws(PGError) -> [OrderLine]? {
        guard
            let order = try connection.query(
                """
                SELECT site, cancelled FROM orders WHERE order_id = $1 AND site IN ($2, '')
                ORDER BY site = $2 DESC LIMIT 1
                """, [.text(orderId), .text(site)]
            ).named("order").first, !(try order.bool("cancelled"))
        else { return nil }
        var lines: [OrderLine] = []
        for row in try connection.query(
            "SELECT line, code, quantity FROM order_lines WHERE site = $1 AND order_id = $2 ORDER BY line",
            [.text(try order.text("site")), .text(orderId)]
        ).named("order lines") {
            lines.append(
                OrderLine(line: try row.int("line"), code: try row.text("code"), expected: try row.int("quantity")))
        }
        return lines
    }

    /// Every order (of any site, `""` for every site) with one of these ids, with its lines.
    public func orders(ids: Set<String>) throws(PGError) -> [OrderKey: StoredOrder] {
        guard !ids.isEmpty else { return [:] }
        let idList = SiteStore.arrayLiteral(ids.sorted())
        var orders: [OrderKey: StoredOrder] = [:]
        for row in try connection.query(
            "SELECT site, order_id, cancelled FROM orders WHERE order_id = ANY($1::text[])", [.text(idList)]
        ).named("orders") {
            orders[OrderKey(site: try row.text("site"), orderId: try row.text("order_id"))] = StoredOrder(
                cancelled: try row.bool("cancelled"), lines: [])
        }
        guard !orders.isEmpty else { return [:] }
        for row in try connection.query(
            "SELECT site, order_id, line, code, quantity FROM order_lines WHERE order_id = ANY($1::text[]) ORDER BY line",
            [.text(idList)]
        ).named("order lines") {
            let key = OrderKey(site: try row.text("site"), orderId: try row.text("order_id"))
            orders[key]?.lines.append(
                OrderLine(line: try row.int("line"), code: try row.text("code"), expected: try row.int("quantity")))
        }
        return orders
    }

    /// One counted line of a pack record of an order.
    public struct PackedLine: Sendable, Equatable {
        public var sessionId: String
        public var station: String
        public var packVerdict: String
        public var line: Int?
        public var code: String
        public var expected: Int
        public var counted: Int
        public var verdict: String

        /// Every counted line of the pack records the `WHERE` clause that follows picks.
        static let selectSQL = """
            SELECT r.session_id, r.station, r.verdict AS pack_verdict, l.line, l.code, l.expected, l.counted, l.verdict
            FROM pack_records r JOIN pack_lines l USING (session_id)
            """

        /// From a row of `selectSQL`.
        init(_ row: PGRow) throws(PGError) {
            sessionId = try row.text("session_id")
            station = try row.text("station")
            packVerdict = try row.text("pack_verdict")
            line = try row.optionalInt("line")
            code = try row.text("code")
            expected = try row.int("expected")
            counted = try row.int("counted")
            verdict = try row.text("verdict")
        }
    }

    /// The lines of every pack record of `orderId` (at `site`, or at every site), by completion
    /// and position.
    public func packedLines(orderId: String, site: String? = nil) throws(PGError) -> [PackedLine] {
        var lines: [PackedLine] = []
        for row in try connection.query(
            "\(PackedLine.selectSQL) WHERE r.order_id = $1 AND ($2::text IS NULL OR r.site = $2) ORDER BY r.completed_at, l.position",
            [.text(orderId), .optionalText(site)]
        ).named("pack lines") {
            lines.append(try PackedLine(row))
        }
        return lines
    }

    /// A PostgreSQL array literal (`{"a","b"}`), quoting every element.
    public static func arrayLiteral(_ values: [String]) -> String {
        "{"
            + values.map {
                "\"" + $0.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
                    + "\""
            }
            .joined(separator: ",") + "}"
    }
}
