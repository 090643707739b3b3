import Foundation
import ScanCore
import ScanEvents
import ScanJPEG
import ScanNATS
import ScanPostgres
import ScanSynth
import ScanTestSupport
import ScanTestTiming
import Testing

/// The images bucket end to end: an agent grouping parcels on a rendered clip of labels at any
/// angle (some torn) keeps every parcel's and no-read's picture (`images.keep: all`); the
/// aggregator describes them; nats-py's own object store reads each one, and `scanadmin images`
/// lists and gets the same bytes.
@Suite("images bucket", .timed, .enabled(if: TestEnvironment.natsEnabled && TestEnvironment.postgresEnabled))
struct ImageBucketTests {
    typealias H = AgentRunHarness

    @Test(
        "every parcel and no-read of a clip has its picture in SCANTRACK_IMAGES, named in its row; nats-py's object store reads each with its digest, scanadmin images gets the same bytes, and a parcel's picture shows its codes",
        arguments: [UInt64(5), 29])
    func picturesInTheBucket(seed: UInt64) throws {
        let natsURL = try TestEnvironment.requireNATS()
        let python = TestEnvironment.repoRoot + "/.cache/venv/bin/python"
        try #require(
            FileManager.default.isExecutableFile(atPath: python), "run scripts/install-deps.sh (make test does)")
        let rig = try H.Rig(natsURL: natsURL, database: "st_images")
        defer { rig.cleanUp() }
        let (migrated, dir) = (rig.migrated, rig.dir)
        let database = migrated.connection
        let admin = TestEnvironment.productsDirectory + "/scanadmin"
        let environment = [
            "SCANTRACK_PG": migrated.dsn, "SCANTRACK_NATS": natsURL, "SCANTRACK_CONFIG": "",
            "SCANTRACK_MIGRATIONS": TestEnvironment.repoRoot + "/migrations",
        ]
        try H.tornLabelsRun(rig, seed: seed, natsURL: natsURL, extra: #", "images": {"keep": "all"}"#)
        func count(_ sql: String) throws -> Int { Int(try database.query(sql).rows.first?[0] ?? "0") ?? 0 }
        // Every parcel whose codes were seen, and every no-read, names its picture.
        #expect(
            try H.eventually(seconds: 60) {
                try count("SELECT count(*) FROM parcels WHERE codes > 0") >= 1
                    && count("SELECT count(*) FROM noreads") >= 1
                    && count("SELECT count(*) FROM parcels WHERE NOT merged") == 0
            }, "parcels and no-reads stored")
        #expect(try count("SELECT count(*) FROM parcels WHERE codes > 0 AND image_object IS NULL") == 0)
        #expect(try count("SELECT count(*) FROM noreads WHERE image_object IS NULL") == 0)
        let parcels = try database.query(
            """
            SELECT image_object, (SELECT string_agg(c->>'value', ' ') FROM jsonb_array_elements(body->'codes') c)
            FROM parcels WHERE image_object IS NOT NULL ORDER BY image_object
            """
        ).rows.map { (name: $0[0] ?? "", codes: ($0[1] ?? "").split(separator: " ").map(String.init)) }
        let noReads = try database.query(
            "SELECT image_object FROM noreads WHERE image_object IS NOT NULL ORDER BY image_object"
        ).rows.compactMap { $0[0] }
        let names = parcels.map(\.name) + noReads
        #expect(names.allSatisfy { ImageObject.parts(ofName: $0)?.site == "dc1" }, "\(names)")
        #expect(Set(names).count == names.count, "one object a parcel or no-read: \(names)")

        // The sightings of a parcel's codes name its picture.
        let sightingsNamed = try count(
            """
            SELECT count(*) FROM parcels p, jsonb_array_elements(p.body->'codes') c, sightings s
            WHERE p.image_object IS NOT NULL AND s.event_id = (c->>'trackId') || '.sighting'
              AND s.image_object = p.image_object
            """)
        #expect(
            sightingsNamed
                == (try count(
                    "SELECT coalesce(sum(jsonb_array_length(body->'codes')), 0) FROM parcels WHERE image_object IS NOT NULL"
                )))
        #expect(sightingsNamed > 0)
        // Their events name the parcel, and (keep: all) its picture whenever one was taken by the
        // time the code ended: never a name the parcel's row does not hold.
        #expect(
            try count(
                """
                SELECT count(*) FROM parcels p, jsonb_array_elements(p.body->'codes') c, sightings s
                WHERE s.event_id = (c->>'trackId') || '.sighting' AND s.body->>'parcelId' IS DISTINCT FROM p.parcel_id
                """) == 0, "a sighting names the parcel its code is in")
        let sightingsNamingPictures = try count("SELECT count(*) FROM sightings WHERE body ? 'parcelImage'")
        #expect(sightingsNamingPictures > 0)
        #expect(
            try count(
                """
                SELECT count(*) FROM sightings s WHERE s.body ? 'parcelImage' AND NOT EXISTS (
                    SELECT 1 FROM parcels p WHERE p.parcel_id = s.body->>'parcelId'
                      AND p.image_object = s.body->>'parcelImage' AND s.image_object = p.image_object)
                """) == 0, "every picture a sighting names is its parcel's, stored")

        // Each parcel pass names its cameras' pictures (what the WMS receives in parcelpass).
        let passImages = try database.query(
            "SELECT m->>'image' FROM parcel_passes p, jsonb_array_elements(p.members) m WHERE m ? 'image' ORDER BY 1"
        ).rows.compactMap { $0[0] }
        #expect(passImages == parcels.map(\.name), "\(passImages)")

        // The events as stored hold to their schemas, imageObject and all.
        var bodies = ""
        for (table, schema) in [("parcels", "parcel"), ("noreads", "noread"), ("sightings", "sighting")] {
            let named = table == "sightings" ? "body ? 'parcelImage'" : "image_object IS NOT NULL"
            for row in try database.query("SELECT body::text FROM \(table) WHERE \(named)").rows {
                bodies += schema + "\t" + (row[0] ?? "") + "\n"
            }
        }
        try bodies.write(toFile: dir + "/bodies.tsv", atomically: true, encoding: .utf8)
        let validated = try ProcessRunner.run(
            python,
            [
                "-c",
                """
                import json, sys, jsonschema
                schemas = {}
                for line in open(sys.argv[1]):
                    name, body = line.rstrip("\\n").split("\\t", 1)
                    schema = schemas.setdefault(name, json.load(open(sys.argv[2] + "/" + name + ".schema.json")))
                    event = json.loads(body)
                    assert ("parcelImage" if name == "sighting" else "imageObject") in event, body
                    jsonschema.validate(event, schema)
                print(len(open(sys.argv[1]).readlines()))
                """, dir + "/bodies.tsv", TestEnvironment.repoRoot + "/docs/schema",
            ])
        #expect(validated.status == 0, "\(validated.stderr)")
        #expect(
            validated.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)
                == "\(names.count + sightingsNamingPictures)")

        // nats-py's object store: each one, its digest checked by the client, and in the bucket's list.
        let out = dir + "/nats-py"
        let read = try ProcessRunner.run(
            python,
            [TestEnvironment.repoRoot + "/scripts/image_bucket_client.py", "--nats", natsURL, "--out", out]
                + names.flatMap { ["--name", $0] })
        try #require(read.status == 0, "\(read.stderr)")
        let result = try JSONValue.parse(Array(read.stdoutText.utf8))
        #expect(result["missing"] == .object([]), "\(read.stdoutText)")
        guard case .array(let listed)? = result["listed"] else { throw TestFailure(read.stdoutText) }
        #expect(Set(listed.compactMap(\.stringValue)) == Set(names), "the bucket lists them all")

        // scanadmin reads the same bytes; each is a JPEG the size its description gives.
        for name in names {
            let object = try #require(result["objects"]?[name], "\(name)")
            let file = try #require(object["file"]?.stringValue)
            let viaPython = try [UInt8](Data(contentsOf: URL(fileURLWithPath: file)))
            #expect(JPEGImage.isJPEG(viaPython) && viaPython.count == object["size"]?.intValue)
            let viaAdmin = dir + "/admin.jpg"
            let got = try ProcessRunner.run(
                admin, ["images", "get", name, "--out", viaAdmin], environment: environment)
            #expect(got.status == 0, "\(got.stderr)")
            #expect(try [UInt8](Data(contentsOf: URL(fileURLWithPath: viaAdmin))) == viaPython, "\(name)")
            #expect(try JPEGImage.decode(viaPython).width > 0)
        }
        let listing = try ProcessRunner.run(
            admin, ["images", "list", "--format", "json", "--time-zone", "UTC"], environment: environment)
        #expect(listing.status == 0, "\(listing.stderr)")
        guard case .array(let rows) = try JSONValue.parse(Array(listing.stdoutText.utf8)) else {
            throw TestFailure(listing.stdoutText)
        }
        #expect(Set(rows.compactMap { $0["object"]?.stringValue }) == Set(names), "\(listing.stdoutText)")

        // A parcel's picture shows its codes: scan-agent decode reads one of them from it.
        var unread: [String] = []
        for row in parcels {
            let file = try #require(result["objects"]?[row.name]?["file"]?.stringValue)
            let decoded = try ProcessRunner.run(ReplayHarness.agent, ["decode", "--format", "json", file])
            let values = decoded.stdoutText.split(separator: "\n").compactMap {
                try? JSONValue.parse(String($0))["value"]?.stringValue
            }
            if !values.contains(where: row.codes.contains) {
                unread.append("\(row.name) codes \(row.codes) read \(values)")
            }
        }
        #expect(unread.isEmpty, "\(unread)")

        // The dashboard: the lane page shows the parcels' pictures, served from the bucket as stored.
        let (serve, url) = try DashboardSecurityTests.serve(
            [
                "--listen", "127.0.0.1:0", "--nats", natsURL, "--shifts", DashboardBrowserTests.shiftsAroundNow(),
                "--time-zone", "UTC",
            ],
            dsn: migrated.dsn, dir: dir)
        rig.running.append(serve)
        let lanePage = TestEnvironment.httpGet(url + "/lanes/dc1/L1")
        #expect(lanePage.status == 200)
        let shown = parcels.map(\.name).filter { lanePage.body.contains("data-image=\"\($0)\"") }
        #expect(shown.count == min(12, parcels.count), "the lane's latest parcel pictures: \(shown)")
        for name in shown {
            let served = TestEnvironment.httpGetBytes(url + "/images/" + name)
            let file = try #require(result["objects"]?[name]?["file"]?.stringValue)
            let stored = try [UInt8](Data(contentsOf: URL(fileURLWithPath: file)))
            #expect(served.status == 200 && served.body == stored, "\(name)")
        }
        #expect(TestEnvironment.httpGet(url + "/images/dc1/cam-01/parcel/none-such.jpg").status == 404)
        #expect(TestEnvironment.httpGet(url + "/images/dc1/cam-01/parcel/x%0D%0APUB%20y.jpg").status == 404)

        // A name that is not one of ours never reaches a subject.
        let hostile = try ProcessRunner.run(
            admin, ["images", "get", "dc1/cam-01/parcel/x.jpg\r\nPUB evil", "--out", dir + "/x.jpg"],
            environment: environment)
        #expect(hostile.status == 64, "\(hostile.stderr)")
    }
}
