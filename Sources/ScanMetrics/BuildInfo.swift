internal import CScanBuildInfo
import Foundation
import Metrics

/// The programs' version and the commit they were built from, for `--version` and the
/// `scantrack_build_info` metric.
public enum BuildInfo {
    /// ScanTrack's version, one for every program; raised with each release.
    public static let version = "0.9.0"

    /// 12 hex digits (`-dirty` when built with uncommitted changes), or "unknown" (no .git and no
    /// SCANTRACK_COMMIT at build time).
    public static let commit = String(cString: scantrack_build_commit())

    /// `--version`'s text: `PROGRAM VERSION (commit COMMIT)`.
    public static func versionText(program: String) -> String { "\(program) \(version) (commit \(commit))" }

    /// For the tools without an argument parser (scan-synth, scan-fake-camera): `--help`/`-h`
    /// prints `usage` and `--version` the version line, on standard output, and the tool exits 0.
    public static func answerHelpAndVersion(program: String, usage: String, arguments: [String]) {
        if arguments.contains("--help") || arguments.contains("-h") {
            print(usage, terminator: "")
            exit(0)
        }
        if arguments.contains("--version") {
            print(versionText(program: program))
            exit(0)
        }
    }

    /// `scantrack_build_info{program, version, commit} 1`: joins any metric to the build that made it.
    public static func record(program: String) {
        ScanMetrics.bootstrap()
        Gauge(
            label: "scantrack_build_info", dimensions: [("program", program), ("version", version), ("commit", commit)]
        )
        .record(1)
    }
}
