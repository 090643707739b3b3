import Foundation
import Logging
import ScanAggregator
import ScanCore
import ScanNATS
import ScanPostgres
import ScanServices

/// scan-bench-ingest --nats URL --pg DSN [--events N] [--rate R] [--seconds S] [--migrations DIR]
///
/// Aggregator ingest against a real nats-server and PostgreSQL, in a database of its own:
/// 1. sustained: N sightings waiting in JetStream, ingested to committed rows (events/s);
/// 2. ceiling: the same rows with one plain `COPY … FROM STDIN` into the same (emptied) table;
/// 3. latency: sightings published at R/s for S seconds while ingesting; publish-to-commit p50/p99.
/// Prints `key=value` lines for scripts/bench.sh.
var options: [String: String] = [:]
var index = 1
while index + 1 < CommandLine.arguments.count {
    options[String(CommandLine.arguments[index].drop { $0 == "-" })] = CommandLine.arguments[index + 1]
    index += 2
}
guard let natsURL = options["nats"] ?? ProcessInfo.processInfo.environment["SCANTRACK_NATS"],
    let adminDSN = options["pg"] ?? ProcessInfo.processInfo.environment["SCANTRACK_PG"]
else {
    FileHandle.standardError.write(
        Data("scan-bench-ingest: pass --nats and --pg (or set SCANTRACK_NATS/SCANTRACK_PG)\n".utf8))
    exit(64)
}
let total = Int(options["events"] ?? "") ?? 200_000
let rate = Int(options["rate"] ?? "") ?? 2_000
let seconds = Int(options["seconds"] ?? "") ?? 20
let migrations = options["migrations"] ?? "migrations"

enum Bench {
    static func now() -> Double { Date().timeIntervalSince1970 }

    /// A sighting as an agent sends it; `time` carries the publish time for the latency run.
    static func sighting(_ n: Int, run: String, time: Timestamp) -> [UInt8] {
        let first = time.adding(milliseconds: -600)
        let value = "400638\(String(1_000_000 + n % 8_999_999))"
        let text = """
            {"type":"sighting","eventId":"\(run)-\(n).sighting","site":"dc1","camera":"cam-\(n % 4)","time":"\(time)",\
            "trackId":"\(run)-\(n)","symbology":"EAN-13","value":"\(value)","status":"accepted","firstSeen":"\(first)",\
            "lastSeen":"\(time.adding(milliseconds: -100))","firstFrame":\(n * 2),"lastFrame":\(n * 2 + 15),"frames":16,"decodes":14,\
            "lane":"L1","box":{"first":[[10,10],[200,10],[200,80],[10,80]],"last":[[510,10],[700,10],[700,80],[510,80]]},"velocity":950.0}
            """
        return Array(text.utf8)
    }

    static func stamp() -> Timestamp { Timestamp(milliseconds: Int64(now() * 1000)) }
}

/// Publish-to-commit latencies, appended from the ingest thread.
final class LatencyLog: @unchecked Sendable {
    // @unchecked: the array is guarded by the lock.
    private let lock = NSLock()
    private var values: [Double] = []
    func add(_ more: [Double]) { lock.withLock { values += more } }
    var sorted: [Double] { lock.withLock { values.sorted() } }
}

do {
    let admin = try PGConnection(dsn: adminDSN)
    let name = "bench_ingest_\(getpid())"
    try admin.execute("DROP DATABASE IF EXISTS \(name)")
    try admin.execute("CREATE DATABASE \(name)")
    defer { _ = try? admin.execute("DROP DATABASE IF EXISTS \(name) WITH (FORCE)") }
    let dsn = adminDSN + " dbname=\(name)"
    let database = try PGConnection(dsn: dsn)
    try Migrator(directory: migrations).migrate(database)
    let connection = try NATSConnection(url: natsURL)
    let jetStream = try connection.jetStream()
    var logger = Logger(label: "bench")
    logger.logLevel = .error

    // 1. Sustained: everything waits in the stream first.
    var settings = IngestSettings(natsURL: natsURL, postgresDSN: dsn)
    settings.prefix = "bench\(getpid())"
    if let batch = Int(options["batch"] ?? "") { settings.batchSize = batch }
    try Ingestor.ensureStreams(jetStream, settings)
    defer {
        try? jetStream.deleteStream(settings.agentStream)
        try? jetStream.deleteStream(settings.deadLetterStream)
        try? jetStream.deleteStream(settings.subjects.resultsStream)
    }
    // Each sighting on its camera's subject (the aggregator takes an event only from there).
    let subject = { (n: Int) in "\(settings.prefix).v1.sighting.dc1.cam-\(n % 4)" }
    let loadTime = Bench.stamp()
    for n in 0..<total {
        try connection.publish(subject: subject(n), bytes: Bench.sighting(n, run: "s", time: loadTime))
        if n % 10_000 == 9_999 { try connection.flush(timeoutMilliseconds: 10_000) }
    }
    try connection.flush(timeoutMilliseconds: 10_000)
    while try jetStream.messageCount(stream: settings.agentStream) < UInt64(total) { usleep(50_000) }
    let ingestor = try Ingestor(settings: settings, logger: logger)
    var began = Bench.now()
    while ingestor.totals.stored[.sighting] < total {
        try ingestor.runOnce()
    }
    let ingestSeconds = Bench.now() - began
    let stored = Int(try database.query("SELECT count(*) FROM sightings").rows[0][0] ?? "") ?? 0
    print(
        "sustained_events=\(stored) sustained_seconds=\(String(format: "%.2f", ingestSeconds)) sustained_rate=\(Int(Double(stored) / ingestSeconds)) batch=\(settings.batchSize)"
    )

    // 2. Ceiling: the same rows, one COPY, same table, same indexes.
    let rows = try database.query(
        "SELECT \(["event_id", "site", "camera", "track_id", "symbology", "value", "value_encoding", "status", "lane", "first_seen", "last_seen", "first_frame", "last_frame", "frames", "decodes", "event_time", "body"].joined(separator: ",")) FROM sightings"
    ).rows
    try database.execute("TRUNCATE sightings")
    began = Bench.now()
    _ = try database.transaction { () throws(PGError) in
        try database.copyIn(
            "COPY sightings (event_id, site, camera, track_id, symbology, value, value_encoding, status, lane, first_seen, last_seen, first_frame, last_frame, frames, decodes, event_time, body) FROM STDIN",
            rows: rows)
    }
    let copySeconds = Bench.now() - began
    print(
        "copy_events=\(rows.count) copy_seconds=\(String(format: "%.2f", copySeconds)) copy_rate=\(Int(Double(rows.count) / copySeconds))"
    )
    try database.execute("TRUNCATE sightings")

    // 3. Latency at a steady rate: a publisher thread paces itself; ingest runs here.
    var steady = settings
    steady.prefix = settings.prefix + "l"
    try Ingestor.ensureStreams(jetStream, steady)
    defer {
        try? jetStream.deleteStream(steady.agentStream)
        try? jetStream.deleteStream(steady.deadLetterStream)
        try? jetStream.deleteStream(steady.subjects.resultsStream)
    }
    let steadySubject: @Sendable (Int) -> String = { [prefix = steady.prefix] n in
        "\(prefix).v1.sighting.dc1.cam-\(n % 4)"
    }
    let latencyIngestor = try Ingestor(settings: steady, logger: logger)
    let latencies = LatencyLog()
    latencyIngestor.onCommit = { times in
        let committed = Bench.now() * 1000
        latencies.add(times.map { committed - Double($0.milliseconds) })
    }
    let expected = rate * seconds
    let publisher = BackgroundWorker.running("publisher") {
        guard let connection = try? NATSConnection(url: natsURL) else { return }
        let start = Bench.now()
        var sent = 0
        while sent < expected {
            let due = min(expected, Int((Bench.now() - start) * Double(rate)))
            while sent < due {
                try? connection.publish(
                    subject: steadySubject(sent), bytes: Bench.sighting(sent, run: "l", time: Bench.stamp()))
                sent += 1
            }
            try? connection.flush(timeoutMilliseconds: 1_000)
            usleep(2_000)
        }
    }
    let latencyStart = Bench.now()
    while latencyIngestor.totals.stored[.sighting] < expected && Bench.now() - latencyStart < Double(seconds) + 30 {
        try latencyIngestor.runOnce()
    }
    publisher.wait()
    let sorted = latencies.sorted
    func percentile(_ p: Double) -> String {
        guard !sorted.isEmpty else { return "n/a" }
        return String(format: "%.0f", sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))])
    }
    print(
        "latency_rate=\(rate) latency_events=\(sorted.count) latency_p50_ms=\(percentile(0.5)) latency_p99_ms=\(percentile(0.99)) latency_max_ms=\(percentile(1.0))"
    )
} catch {
    FileHandle.standardError.write(Data("scan-bench-ingest: \(error)\n".utf8))
    exit(1)
}
