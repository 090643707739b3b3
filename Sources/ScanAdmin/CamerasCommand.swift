import ArgumentParser
import Foundation
import ScanCore
import ScanPostgres

/// `scanadmin cameras`: every known camera with its last heartbeat, and who is silent.
struct CamerasCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cameras",
        abstract: "Every known camera with its last heartbeat (fps, drops, tracks, spool, rules), and who is silent.",
        discussion: """
            Cameras are those that ever sent a heartbeat (stored by scan-aggregator) and those in the topology.
            A camera is silent when its last heartbeat is older than --silent-after seconds (or it never sent one).
            Exit codes: 0 done (with --check: every camera is heard), 1 database failure (with --check: a camera is silent).
            """)

    @OptionGroup var connection: ConnectionOptions
    @Option(help: "table, csv or json.") var format: ListingFormat = .table
    @Option(help: "Seconds without a heartbeat after which a camera counts as silent.") var silentAfter: Double = 15
    @Option(help: "Only this site.") var site: String?
    @Flag(help: "Exit 1 when any camera is silent (for monitoring scripts).") var check = false

    func run() throws {
        let rows = try withDatabase(connection, command: "cameras") { database in
            try database.query(
                """
                WITH known AS (
                    SELECT camera, site FROM cameras
                    UNION SELECT camera, site FROM lane_cameras
                    UNION SELECT unnest(cameras), site FROM stations
                )
                SELECT k.camera, k.site, coalesce(c.lane, l.lane, ''), coalesce(c.station, s.station, ''),
                       to_char(c.last_seen AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
                       extract(epoch FROM now() - c.last_seen)::bigint,
                       c.last_status->>'fpsProcessed', c.last_status->>'framesDropped', c.last_status->>'liveTracks',
                       c.last_status->'spool'->>'depth', c.last_status->>'nats', c.last_status->'rules'->>'revision',
                       c.last_status->'source'->>'state'
                FROM (SELECT DISTINCT ON (camera) camera, site FROM known ORDER BY camera, site) k
                LEFT JOIN cameras c ON c.camera = k.camera
                LEFT JOIN lane_cameras l ON l.camera = k.camera AND l.site = k.site
                LEFT JOIN LATERAL (SELECT station FROM stations WHERE site = k.site AND k.camera = ANY(cameras) LIMIT 1) s ON true
                WHERE ($1::text IS NULL OR k.site = $1)
                ORDER BY k.site, k.camera
                """, [.optionalText(site)]
            ).rows
        }
        var listing = Listing(
            columns: [
                "camera", "site", "place", "state", "lastHeartbeat", "agoSeconds", "fps", "dropped", "tracks", "spool",
                "nats", "rules",
            ])
        listing.numeric = ["agoSeconds", "dropped", "tracks", "spool"]
        var silent = 0
        for row in rows {
            let ago = row[5].flatMap { Int($0) }
            let heard = ago.map { Double($0) <= silentAfter } ?? false
            if !heard { silent += 1 }
            let place = [
                row[2].map { $0.isEmpty ? "" : "lane \($0)" }, row[3].map { $0.isEmpty ? "" : "station \($0)" },
            ]
            .compactMap { $0 }.filter { !$0.isEmpty }.joined(separator: " ")
            let state = heard ? (row[12] ?? "ok") : (ago == nil ? "never heard" : "SILENT")
            listing.rows.append([
                row[0] ?? "", row[1] ?? "", place, state, row[4] ?? "", ago.map(String.init) ?? "", row[6] ?? "",
                row[7] ?? "",
                row[8] ?? "", row[9] ?? "", row[10] ?? "", row[11] ?? "",
            ])
        }
        print(listing.render(format), terminator: "")
        if format == .table {
            print("\(rows.count) camera(s), \(silent) silent (no heartbeat for \(Int(silentAfter)) s)")
        }
        if check && silent > 0 { throw ExitCode.failure }
    }
}
