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
            Cameras are those that ever sent a heartbeat (stored by scan-aggregator) and those in the topology. \
            A camera is silent when its last heartbeat is older than --silent-after seconds (or it never sent one), \
            unless that heartbeat said its source ended (a clip played to its end, an agent stopped): then it is ended.

            Exit codes: 0 done (with --check: every camera is heard), 1 database failure (with --check: a camera is silent).
            """)

    @OptionGroup var connection: ConnectionOptions
    @Option(help: "table, csv or json.") var format: ListingFormat = .table
    @Option(help: "Seconds without a heartbeat after which a camera counts as silent.") var silentAfter: Double = 15
    @Option(help: "Only this site.") var site: String?
    @Flag(help: "Exit 1 when any camera is silent (for monitoring scripts).") var check = false

    func run() throws {
        let cameras = try withDatabase(connection, command: "cameras") { database in
            try CameraStore(connection: database).cameras(site: site)
        }
        var listing = Listing(
            columns: [
                "camera", "site", "place", "state", "lastHeartbeat", "agoSeconds", "fps", "dropped", "tracks", "spool",
                "nats", "rules", "incomplete", "reconnects", "controls",
            ])
        listing.numeric = ["agoSeconds", "dropped", "tracks", "spool", "incomplete", "reconnects"]
        var silent = 0
        var ended = 0
        for camera in cameras {
            let ago = camera.secondsAgo
            let heard = ago.map { Double($0) <= silentAfter } ?? false
            // The last heartbeat of an agent that finished its clip or was stopped says `ended`:
            // it is not silent (an agent that crashed or lost its network sends no such word).
            let finished = !heard && camera.saidItEnded
            if finished { ended += 1 } else if !heard { silent += 1 }
            let place = [
                camera.lane.isEmpty ? "" : "lane \(camera.lane)",
                camera.station.isEmpty ? "" : "station \(camera.station)",
            ]
            .filter { !$0.isEmpty }.joined(separator: " ")
            let state =
                heard || finished ? (camera.sourceState ?? "ok") : (ago == nil ? "never heard" : "SILENT")
            listing.rows.append([
                camera.camera, camera.site, place, state, camera.lastSeen ?? "", ago.map(String.init) ?? "",
                camera.fps ?? "",
                camera.framesDropped ?? "", camera.liveTracks ?? "", camera.spoolDepth ?? "", camera.nats ?? "",
                camera.rulesRevision ?? "", camera.incompleteFrames ?? "", camera.reconnects ?? "",
                camera.controls ?? "",
            ])
        }
        print(listing.render(format), terminator: "")
        if format == .table {
            print(
                "\(cameras.count) camera(s), \(silent) silent (no heartbeat for \(Int(silentAfter)) s)"
                    + (ended > 0 ? ", \(ended) ended" : ""))
        }
        if check && silent > 0 { throw ExitCode.failure }
    }
}
