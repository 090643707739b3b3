import ArgumentParser
import ScanAgentConfig
import Foundation
import ScanCore
import ScanPostgres
import ScanServices
import ScanReconciliation

/// `scanadmin topology load FILE | show`
struct TopologyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "topology",
        abstract: "Load and show the site topology: lanes, their cameras in belt order, pack stations.",
        discussion:
            "File format: docs/topology.md. Exit codes: 0 done, 1 database failure, 2 bad file (every problem by JSON path).",
        subcommands: [Load.self, Show.self])

    struct Load: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Replace the layout of every site the file names (other sites are kept).")
        @OptionGroup var connection: ConnectionOptions
        @Argument(help: "Topology JSON file.") var file: String

        func run() throws {
            let topology: Topology
            do {
                topology = try Topology.parse(try readInputFile(file, command: "topology load"), file: file)
            } catch let error as ConfigErrors {
                printError("scanadmin topology load: \(error)")
                throw ExitCode(2)
            }
            try withDatabase(connection, command: "topology load") { database in
                try SiteStore(connection: database).load(topology)
            }
            let lanes = topology.sites.reduce(0) { $0 + $1.lanes.count }
            let cameras = topology.sites.reduce(0) { $0 + $1.lanes.reduce(0) { $0 + $1.cameras.count } }
            print("loaded \(topology.sites.count) site(s), \(lanes) lane(s), \(cameras) lane camera(s) from \(file)")
        }
    }

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List lanes and stations with their cameras.")
        @OptionGroup var connection: ConnectionOptions
        @Option(help: "table, csv or json.") var format: ListingFormat = .table
        @Option(help: "Only this site.") var site: String?

        func run() throws {
            let topology = try withDatabase(connection, command: "topology show") {
                try SiteStore(connection: $0).topology()
            }
            var listing = Listing(columns: [
                "site", "timeZone", "kind", "id", "position", "camera", "offsetSeconds", "windowSeconds", "decision",
            ])
            listing.numeric = ["position"]
            for place in topology.sites where site == nil || place.id == site {
                for lane in place.lanes {
                    for (position, camera) in lane.cameras.enumerated() {
                        listing.rows.append([
                            place.id, place.timeZone, "lane", lane.id, String(position), camera.id,
                            seconds(camera.offsetMilliseconds), seconds(lane.windowMilliseconds),
                            lane.decision.map(Self.summary) ?? "",
                        ])
                    }
                }
                for station in place.stations {
                    for camera in station.cameras {
                        listing.rows.append([place.id, place.timeZone, "station", station.id, "", camera, "", "", ""])
                    }
                }
            }
            print(listing.render(format), terminator: "")
        }

        /// The aggregator's decisions for a lane: `deadline 1.50 s, orders, divert on no-read missing-required`.
        static func summary(_ decision: Topology.LaneDecision) -> String {
            var parts = ["deadline \(seconds(decision.deadlineMilliseconds)) s"]
            if decision.checkOrders { parts.append("orders") }
            if decision.divertOn != Set(DecisionReason.allCases) {
                let reasons = DecisionReason.allCases.filter(decision.divertOn.contains).map(\.rawValue)
                parts.append("divert on " + (reasons.isEmpty ? "nothing" : reasons.joined(separator: " ")))
            }
            return parts.joined(separator: ", ")
        }
    }
}

func seconds(_ milliseconds: Int64) -> String { String(format: "%.2f", Double(milliseconds) / 1000) }

/// Opens PostgreSQL, checks the schema is current (when the migrations folder is found), and
/// runs `body`; a database error is printed naming the command (exit 1).
func withDatabase<T>(_ connection: ConnectionOptions, command: String, _ body: (PGConnection) throws -> T) throws -> T {
    do {
        let database = try connection.connectPostgres()
        try MigrationsFolder.source(SettingResolver().string(variable: MigrationsFolder.variable)?.value).migrator()
            .requireCurrent(database)
        return try body(database)
    } catch let error as PGError {
        printError("scanadmin \(command): \(error)")
        throw ExitCode.failure
    }
}
