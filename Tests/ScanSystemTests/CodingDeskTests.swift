import Foundation
import ScanCore
import ScanNATS
import ScanPostgres
import ScanSynth
import ScanTestSupport
import ScanTestTiming
import Testing

/// The coding desk (`scanadmin serve --operators-file`) in a real headless Chromium: no-reads an
/// agent raised on a rendered clip of torn labels (at any angle), keyed by a signed-in operator,
/// stored once with their name and received by the WMS consumer; what another site's page could
/// send refused.
@Suite("coding desk in a browser", .timed, .enabled(if: TestEnvironment.natsEnabled && TestEnvironment.postgresEnabled))
struct CodingDeskTests {
    typealias H = AgentRunHarness

    @Test(
        "an operator signs in, sees the lane's no-reads with their pictures, a mistyped EAN-13 is refused on the page, the right one goes to the WMS as coded once; a foreign Origin, a missing token or cookie and a wrong password are refused",
        arguments: [UInt64(5), 17])
    func keyOnThePage(seed: UInt64) throws {
        let natsURL = try TestEnvironment.requireNATS()
        let python = TestEnvironment.repoRoot + "/.cache/venv/bin/python"
        try #require(
            FileManager.default.isExecutableFile(atPath: python), "run scripts/install-deps.sh (make test does)")
        try #require(ProcessRunner.which("chromium") != nil, "chromium is installed by scripts/install-deps.sh")
        let rig = try H.Rig(natsURL: natsURL, database: "st_desk")
        defer { rig.cleanUp() }
        let (prefix, migrated, dir) = (rig.prefix, rig.migrated, rig.dir)
        let database = migrated.connection
        let admin = TestEnvironment.productsDirectory + "/scanadmin"
        try H.tornLabelsRun(rig, seed: seed, natsURL: natsURL)
        func count(_ sql: String) throws -> Int { Int(try database.query(sql).rows.first?[0] ?? "0") ?? 0 }
        // Each box a parcel; a torn label's box is a no-read parcel, merged into a parcel pass.
        #expect(
            try H.eventually(seconds: 60) {
                try count("SELECT count(*) FROM noreads WHERE settled") >= 1
                    && count("SELECT count(*) FROM parcels") >= 1
                    && count("SELECT count(*) FROM parcels WHERE NOT merged") == 0
                    && count("SELECT count(*) FROM parcel_passes WHERE published_revision = 1") >= 1
            })
        let noReads = try count("SELECT count(*) FROM noreads")

        // The operators file, as an administrator writes it.
        let operators = dir + "/operators"
        let password = "correct horse battery"
        let set = try ProcessRunner.run(
            admin, ["operators", "set", "maria", "--file", operators], stdin: Array((password + "\n").utf8))
        #expect(set.status == 0, "\(set.stderr)")
        let stored = try String(contentsOfFile: operators, encoding: .utf8)
        #expect(stored.hasPrefix("maria:pbkdf2-sha256$600000$") && !stored.contains(password))
        try (password + "\n").write(toFile: dir + "/password", atomically: true, encoding: .utf8)

        let (serve, url) = try DashboardSecurityTests.serve(
            ["--listen", "127.0.0.1:0", "--operators-file", operators], dsn: migrated.dsn, dir: dir)
        rig.running.append(serve)
        let output = TestEnvironment.repoRoot + "/.build/test-output/coding-desk-\(seed)"
        let browsed = try ProcessRunner.run(
            python,
            [
                TestEnvironment.repoRoot + "/scripts/coding_desk_browser.py", "--url", url, "--lane", "dc1/L1",
                "--operator", "maria", "--password-file", dir + "/password", "--code", "5012345678900",
                "--bad-code", "5012345678901", "--symbology", "EAN-13", "--out", output,
            ])
        try #require(browsed.status == 0, "\(browsed.stderr)")
        let page = try JSONValue.parse(Array(browsed.stdoutText.utf8))
        #expect(page["unsigned"] == .string("/coding/sign-in"), "the desk asks who you are first")
        #expect(page["lanes"]?["operator"] == .string("maria"))
        #expect(page["lanes"]?["lanes"]?["dc1/L1"]?.intValue == noReads, "\(browsed.stdoutText)")
        guard case .array(let listed)? = page["before"]?["noReads"],
            case .array(let images)? = page["before"]?["images"]
        else { throw TestFailure("no list: \(browsed.stdoutText)") }
        #expect(listed.count == noReads, "every unresolved no-read of the lane")
        #expect(!images.isEmpty && images.allSatisfy { $0["loaded"] == .bool(true) }, "\(images)")
        let target = try #require(page["target"]?.stringValue)

        // The typo is refused on the page, naming the check digit; nothing is stored.
        guard case .array(let errors)? = page["mistyped"]?["errors"] else { throw TestFailure("\(browsed.stdoutText)") }
        #expect(errors.contains { $0.stringValue?.contains("check digit") == true }, "\(errors)")
        #expect(page["mistyped"]?["noReads"] == page["before"]?["noReads"])

        // The right code: stored once under the operator's name, gone from the list.
        let notice = page["after"]?["notice"]?.stringValue ?? ""
        #expect(notice.contains(target) && notice.contains("keyed EAN-13 '5012345678900'"), "\(notice)")
        guard case .array(let after)? = page["after"]?["noReads"] else { throw TestFailure("\(browsed.stdoutText)") }
        #expect(after.count == listed.count - 1 && !after.contains(.string(target)))
        let rows = try database.query("SELECT noread_id, outcome, code, keyed_by FROM noread_codings").rows
        #expect(rows == [[target, "keyed", "5012345678900", "maria"]], "only the one keyed on the page")

        // What another site's page could send with the operator's cookie, refused before anything.
        #expect(page["foreignOrigin"]?["status"]?.intValue == 403)
        #expect(page["noToken"]?["status"]?.intValue == 403)
        #expect(page["noCookie"]?["status"]?.intValue == 403)
        #expect(page["wrongPassword"]?["status"]?.intValue == 401)
        guard case .array(let cookies)? = page["cookie"], let cookie = cookies.first, cookies.count == 1 else {
            throw TestFailure("one cookie: \(browsed.stdoutText)")
        }
        #expect(cookie["name"] == .string("scantrack_desk") && cookie["path"] == .string("/coding"))
        #expect(cookie["httpOnly"] == .bool(true) && cookie["sameSite"] == .string("Strict"), "no script reads it")
        #expect(try count("SELECT count(*) FROM noread_codings") == 1)

        // The WMS receives it, once, as the schema says, and the no-read's parcel pass again as
        // revision 2 with the keyed code.
        #expect(try H.eventually(seconds: 60) { try count("SELECT count(*) FROM noread_codings WHERE published") == 1 })
        #expect(
            try H.eventually(seconds: 60) {
                try count(
                    """
                    SELECT count(*) FROM parcel_passes p JOIN noread_codings c ON c.parcel_pass_id = p.pass_id
                    WHERE p.revision = 2 AND p.published_revision = 2 AND NOT p.no_read
                      AND p.codings @> '[{"outcome": "keyed", "keyedBy": "maria"}]'
                    """) == 1
            }, "the keyed no-read's parcel pass, revision 2")
        let passes = try count("SELECT count(*) FROM parcel_passes")
        let wms = try ProcessRunner.run(
            python,
            [
                TestEnvironment.repoRoot + "/scripts/wms_consumer.py", "--results", "--nats", natsURL, "--prefix",
                prefix, "--idle", "1",
            ])
        let summary = try JSONValue.parse(wms.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(summary["coded"]?.intValue == 1, "\(wms.stdoutText) \(wms.stderr)")
        #expect(summary["parcelPasses"]?.intValue == passes + 1, "each pass's revision 1, and the keyed one's 2")
        #expect(summary["problems"] == .array([]), "\(wms.stdoutText)")
    }
}
