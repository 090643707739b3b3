import Foundation
import ScanCore
import ScanTestSupport
import ScanTestTiming
import Testing

private typealias H = AgentRunHarness

/// `make dist` (scripts/dist/build.sh) on the release programs `make test` built: the tarball and
/// the Debian packages are checked with Debian's own tools (dpkg-deb, lintian), the packaged
/// programs run with the toolchain's folder hidden, and the packages install and purge on this
/// machine (as root: CI's case) leaving nothing behind.
@Suite("make dist: tarball and Debian packages", .timed, .serialized)
struct PackagingTests {
    static let programs = ["scan-agent", "scan-aggregator", "scanadmin"]
    static let release = TestEnvironment.repoRoot + "/.build/release"
    static let toolchain = "/opt/swift"

    /// Runs `command` through bash; its status and what it printed (stdout then stderr).
    static func shell(_ command: String) throws -> (status: Int32, output: String) {
        let result = try ProcessRunner.run("/bin/bash", ["-c", command])
        return (result.status, result.stdoutText + result.stderr)
    }

    /// Packages the release build into a new folder; the folder and the files it holds.
    static func build() throws -> (dir: String, files: [String]) {
        for program in programs {
            try #require(
                FileManager.default.isExecutableFile(atPath: release + "/" + program),
                "no release \(program): make test builds it")
        }
        let dir = try TestEnvironment.temporaryDirectory()
        let built = try shell("\(TestEnvironment.repoRoot)/scripts/dist/build.sh --bin \(release) --out \(dir)/out")
        #expect(built.status == 0, "\(built.output)")
        let files = try FileManager.default.contentsOfDirectory(atPath: dir + "/out").sorted()
        return (dir, files)
    }

    /// One build (packaging compresses some 180 MB: minutes), checked three ways.
    @Test(
        "make dist: the tarball and a .deb a program pass lintian, run without the toolchain, and install and purge cleanly"
    )
    func dist() throws {
        let (dir, files) = try Self.build()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Self.packages(dir: dir, files: files)
        try Self.withoutToolchain(dir: dir, files: files)
        try Self.installAndPurge(dir: dir, files: files)
    }

    /// The tarball and one .deb a program: Depends from the libraries it links, nothing of the
    /// toolchain, a manual page that has every subcommand, its units, conffiles; lintian finds no
    /// error or warning.
    static func packages(dir: String, files: [String]) throws {
        let debs = files.filter { $0.hasSuffix(".deb") }
        #expect(debs.count == 3 && files.contains { $0.hasPrefix("scantrack-") && $0.hasSuffix(".tar.gz") }, "\(files)")
        for program in Self.programs {
            guard let deb = debs.first(where: { $0.hasPrefix(program + "_") }).map({ dir + "/out/" + $0 }) else {
                Issue.record("no package of \(program): \(files)")
                continue
            }
            let depends = try Self.shell("dpkg-deb -f \(deb) Depends").output
            #expect(depends.contains("libc6") && depends.contains("adduser"), "\(program): \(depends)")
            #expect(!depends.contains("swift"), "\(program): \(depends)")
            if program == "scan-agent" {
                for library in ["libzbar0", "libaravis-0.8-0", "libnats3.4", "libavformat", "libwebp"] {
                    #expect(depends.contains(library), "scan-agent's Depends lack \(library): \(depends)")
                }
            } else {
                #expect(depends.contains("libpq5") && !depends.contains("libzbar"), "\(program): \(depends)")
            }
            let listing = try Self.shell("dpkg-deb -c \(deb)").output
            for path in [
                "./usr/bin/\(program)", "./usr/share/man/man1/\(program).1.gz", "./usr/share/doc/\(program)/copyright",
                "./usr/share/doc/\(program)/changelog.gz", "./usr/share/doc/\(program)/docs/operators-guide.md",
            ] {
                #expect(listing.contains(path), "\(program) lacks \(path)")
            }
            let units = ["scan-agent": "scan-agent@.service", "scan-aggregator": "scan-aggregator.service"]
            if let unit = units[program] { #expect(listing.contains("./lib/systemd/system/\(unit)")) }
            if program == "scanadmin" {
                #expect(listing.contains("./usr/share/scantrack/migrations/roles/roles.sql"))
                #expect(listing.contains("./lib/systemd/system/scanadmin-serve.service"))
                #expect(listing.contains("./etc/scantrack/dashboard.env"))
            }
            // The program as packaged: only Debian's libraries.
            let unpacked = dir + "/unpacked-" + program
            #expect(try Self.shell("dpkg-deb -x \(deb) \(unpacked)").status == 0)
            let ldd = try Self.shell("ldd \(unpacked)/usr/bin/\(program)").output
            #expect(!ldd.contains(Self.toolchain) && !ldd.contains("libswift") && !ldd.contains("not found"), "\(ldd)")
            // Its manual page documents every subcommand its --help lists.
            // (groff's warnings come on stderr; hyphens may be rendered as U+2010 or U+2212)
            let manual = try ProcessRunner.run(
                "/usr/bin/man", ["--warnings", "-l", "\(unpacked)/usr/share/man/man1/\(program).1.gz"],
                environment: ["PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "MANWIDTH": "100"])
            let text = manual.stdoutText.replacingOccurrences(of: "\u{2212}", with: "-")
                .replacingOccurrences(of: "\u{2010}", with: "-")
            #expect(manual.status == 0 && text.contains("NAME"), "\(manual.stderr)")
            #expect(manual.stderr.isEmpty, "groff: \(manual.stderr)")
            let help = try ProcessRunner.run(Self.release + "/" + program, ["--help"]).stdoutText
            let subcommands =
                help.components(separatedBy: "SUBCOMMANDS:").dropFirst().first?
                .split(separator: "\n").compactMap { line -> String? in
                    guard line.hasPrefix("  "), !line.hasPrefix("   ") else { return nil }
                    // a name, not the closing "See 'scan-agent help <subcommand>'" line
                    return line.split(separator: " ").first.map(String.init).flatMap {
                        $0.first?.isLowercase == true ? $0 : nil
                    }
                } ?? []
            #expect(!subcommands.isEmpty, "\(help)")
            for subcommand in subcommands where subcommand != "help" {
                #expect(text.contains("\(program) \(subcommand)"), "\(program)(1) lacks \(subcommand)")
            }
            let lintian = try Self.shell("lintian --tag-display-limit 0 \(deb)")
            let findings = lintian.output.split(separator: "\n").filter { $0.hasPrefix("E:") || $0.hasPrefix("W:") }
            #expect(lintian.status == 0 && findings.isEmpty, "\(program): \(lintian.output)")
        }
        let tarball = try Self.shell("tar -tzf \(dir)/out/scantrack-*.tar.gz").output
        for program in Self.programs {
            #expect(tarball.contains("/bin/\(program)\n") && tarball.contains("/share/man/man1/\(program).1.gz"))
        }
        #expect(tarball.contains("/INSTALL\n") && tarball.contains("/lib/systemd/system/scan-agent@.service"))
    }

    /// The packaged programs run with the toolchain's folder hidden (a mount namespace):
    /// --version, and a replay that finds what the build's own replay finds.
    static func withoutToolchain(dir: String, files: [String]) throws {
        let unshare = try Self.shell("unshare -m true")
        try #require(
            unshare.status == 0 || TestEnvironment.isCI,
            "this machine cannot make a mount namespace (root needed): \(unshare.output)")
        #expect(unshare.status == 0, "\(unshare.output)")
        let tarball = try #require(files.first { $0.hasSuffix(".tar.gz") })
        #expect(try Self.shell("mkdir \(dir)/x && tar -xzf \(dir)/out/\(tarball) -C \(dir)/x").status == 0)
        let bin = try Self.shell("ls -d \(dir)/x/*/bin").output.trimmingCharacters(in: .whitespacesAndNewlines)
        let clip = try H.flowClip(frames: 60, seed: 4)
        let expected = try H.offline(clip).sightings.count
        #expect(expected > 0)
        try FileManager.default.createDirectory(atPath: dir + "/empty", withIntermediateDirectories: true)
        let hidden = """
            mount --bind \(dir)/empty \(Self.toolchain) && test -z "$(ls \(Self.toolchain))" && \
            \(bin)/scan-agent --version && \(bin)/scan-aggregator --version && \(bin)/scanadmin --version && \
            \(bin)/scan-agent replay \(clip) --sightings-only
            """
        let run = try Self.shell("unshare -m bash -c '\(hidden)'")
        #expect(run.status == 0, "\(run.output)")
        let lines = run.output.split(separator: "\n")
        for program in Self.programs {
            #expect(lines.contains { $0.hasPrefix(program + " ") && $0.contains("commit") }, "\(run.output)")
        }
        let sightings = lines.filter { $0.contains(#""type":"sighting""#) }.count
        #expect(sightings == expected, "\(sightings) sightings with the toolchain hidden, \(expected) from the build")
    }

    /// Installing the three packages makes the scantrack user, /etc/scantrack and
    /// /var/lib/scantrack; purging them leaves the machine as it was.
    static func installAndPurge(dir: String, files: [String]) throws {
        guard getuid() == 0 else {
            try #require(!TestEnvironment.isCI, "CI runs as root: dpkg -i needs it")
            return
        }
        // A machine that runs ScanTrack from packages keeps them: purging would take its configs.
        let present = try Self.shell(
            "dpkg-query -W \(Self.programs.joined(separator: " ")) 2>/dev/null; getent passwd scantrack;"
                + " ls -d /etc/scantrack /var/lib/scantrack 2>/dev/null")
        guard present.output.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
            try #require(!TestEnvironment.isCI, "ScanTrack is installed on this CI machine: \(present.output)")
            return
        }
        let debs = files.filter { $0.hasSuffix(".deb") }.map { dir + "/out/" + $0 }
        // What the machine holds where packages write, users included.
        let survey = """
            find /usr/bin /usr/share/man/man1 /usr/share/doc /lib/systemd/system /etc /var/lib \
              -maxdepth 2 2>/dev/null | grep -v -e '^/var/lib/dpkg' -e '^/var/lib/apt' -e '^/etc/ld.so.cache' \
              -e '^/var/lib/man-db' | sort; cat /etc/passwd /etc/group
            """
        let before = try Self.shell(survey).output
        let installed = try Self.shell("dpkg -i \(debs.joined(separator: " ")) 2>&1")
        defer { _ = try? Self.shell("dpkg --purge \(Self.programs.joined(separator: " ")) >/dev/null 2>&1") }
        #expect(installed.status == 0, "\(installed.output)")
        #expect(try Self.shell("getent passwd scantrack").output.contains("/var/lib/scantrack"))
        #expect(try Self.shell("stat -c '%U:%G %a' /var/lib/scantrack").output.hasPrefix("scantrack:scantrack 750"))
        #expect(try Self.shell("stat -c '%U:%G %a' /etc/scantrack").output.hasPrefix("root:scantrack 750"))
        #expect(FileManager.default.fileExists(atPath: "/etc/scantrack/aggregator.env"))
        #expect(FileManager.default.fileExists(atPath: "/etc/scantrack/agents"))
        let version = try Self.shell("/usr/bin/scan-agent --version").output
        #expect(version.hasPrefix("scan-agent ") && version.contains("commit"), "\(version)")
        // An operator's camera config (not the package's) goes with the purge too.
        try "{}".write(toFile: "/etc/scantrack/agents/cam-01.json", atomically: true, encoding: .utf8)
        let purged = try Self.shell("dpkg --purge \(Self.programs.joined(separator: " ")) 2>&1")
        #expect(purged.status == 0, "\(purged.output)")
        let after = try Self.shell(survey).output
        let added = Set(after.split(separator: "\n")).subtracting(before.split(separator: "\n"))
        let removed = Set(before.split(separator: "\n")).subtracting(after.split(separator: "\n"))
        #expect(added.isEmpty && removed.isEmpty, "left behind: \(added.sorted()); gone: \(removed.sorted())")
    }
}
