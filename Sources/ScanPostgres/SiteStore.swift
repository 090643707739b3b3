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
        for row in try connection.query("SELECT site, time_zone FROM sites ORDER BY site").rows {
            sites.append(Topology.Site(id: row[0] ?? "", timeZone: row[1] ?? "UTC"))
        }
        let lanes = try connection.query("SELECT site, lane, window_ms, grace_ms FROM lanes ORDER BY site, lane").rows
        let cameras = try connection.query(
            "SELECT site, lane, camera, offset_ms FROM lane_cameras ORDER BY site, lane, position"
        ).rows
        for row in lanes {
            guard let index = sites.firstIndex(where: { $0.id == row[0] }) else { continue }
            let members = cameras.filter { $0[0] == row[0] && $0[1] == row[1] }.map {
                Topology.LaneCamera(id: $0[2] ?? "", offsetMilliseconds: Int64($0[3] ?? "") ?? 0)
            }
            sites[index].lanes.append(
                Topology.Lane(
                    id: row[1] ?? "", cameras: members, windowMilliseconds: Int64(row[2] ?? "") ?? 1_000,
                    graceMilliseconds: Int64(row[3] ?? "") ?? 2_000))
        }
        for row in try connection.query(
            "SELECT site, station, array_to_json(cameras)::text FROM stations ORDER BY site, station"
        ).rows {
            guard let index = sites.firstIndex(where: { $0.id == row[0] }) else { continue }
            let cameras = (try? JSONValue.parse(row[2] ?? "[]")).flatMap { value -> [String]? in
                if case .array(let items) = value { return items.compactMap(\.stringValue) }
                return nil
            }
            sites[index].stations.append(Topology.Station(id: row[1] ?? "", cameras: cameras ?? []))
        }
        return Topology(sites: sites)
    }

    /// Imports orders in one transaction; an order already stored gets the new lines (a WMS
    /// correcting an order re-sends it whole). Returns the lines written.
    @discardableResult
    public func importOrders(_ orders: [OrderCSV.Order], source: String) throws(PGError) -> Int {
        var lines = 0
        try connection.transaction { () throws(PGError) in
            for order in orders {
                try connection.query("DELETE FROM orders WHERE order_id = $1", [.text(order.id)])
                try connection.query(
                    "INSERT INTO orders (order_id, source) VALUES ($1, $2)", [.text(order.id), .text(source)])
                for line in order.lines {
                    try connection.query(
                        "INSERT INTO order_lines (order_id, line, code, quantity) VALUES ($1, $2, $3, $4)",
                        [.text(order.id), .int(line.line), .text(line.code), .int(line.expected)])
                    lines += 1
                }
            }
        }
        return lines
    }

    /// An order's lines, or nil when the order is not known.
    public func orderLines(_ orderId: String) throws(PGError) -> [OrderLine]? {
        let known = try connection.query("SELECT 1 FROM orders WHERE order_id = $1", [.text(orderId)])
        guard !known.rows.isEmpty else { return nil }
        var lines: [OrderLine] = []
        for row in try connection.query(
            "SELECT line, code, quantity FROM order_lines WHERE order_id = $1 ORDER BY line", [.text(orderId)]
        ).named("order lines") {
            lines.append(
                OrderLine(line: try row.int("line"), code: try row.text("code"), expected: try row.int("quantity")))
        }
        return lines
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
    }

    /// The lines of every pack record of `orderId`, by completion and position.
    public func packedLines(orderId: String) throws(PGError) -> [PackedLine] {
        var lines: [PackedLine] = []
        for row in try connection.query(
            """
            SELECT r.session_id, r.station, r.verdict AS pack_verdict, l.line, l.code, l.expected, l.counted, l.verdict
            FROM pack_records r JOIN pack_lines l USING (session_id)
            WHERE r.order_id = $1 ORDER BY r.completed_at, l.position
            """, [.text(orderId)]
        ).named("pack lines") {
            lines.append(
                PackedLine(
                    sessionId: try row.text("session_id"), station: try row.text("station"),
                    packVerdict: try row.text("pack_verdict"), line: try row.optionalInt("line"),
                    code: try row.text("code"),
                    expected: try row.int("expected"), counted: try row.int("counted"), verdict: try row.text("verdict")
                ))
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
