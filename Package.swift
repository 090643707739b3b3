// swift-tools-version:6.2
import PackageDescription

/// One set of settings for every target: Swift 6 language mode and strict concurrency. Every
/// warning is an error only when SCANTRACK_WARNINGS_AS_ERRORS=1, as `make test` (and so CI) sets
/// it: a warning a newer compiler adds fails our tests, never a user's `swift build`.
let warningsAsErrors = Context.environment["SCANTRACK_WARNINGS_AS_ERRORS"] == "1"
let swiftSettings: [SwiftSetting] =
    [.enableUpcomingFeature("ExistentialAny")] + (warningsAsErrors ? [.treatAllWarnings(as: .error)] : [])

/// The scene renderer is optimised in debug builds too: the tests render thousands of frames in
/// the debug test process, which unoptimised takes ten times as long (a 522-frame 720p scene: 25 s
/// against 2 s). It is test equipment, not what an agent runs, and its output is the same.
let optimizedInDebug: [SwiftSetting] = [.unsafeFlags(["-O"], .when(configuration: .debug))]

/// The commit in `--version` and `scantrack_build_info`: SCANTRACK_COMMIT when set (an image build
/// has no .git), else git's (12 digits, `-dirty` with uncommitted changes), else "unknown".
let commit: String = {
    if let given = Context.environment["SCANTRACK_COMMIT"], !given.isEmpty,
        given.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "." })
    {
        return given
    }
    guard let git = Context.gitInformation else { return "unknown" }
    return String(git.currentCommit.prefix(12)) + (git.hasUncommittedChanges ? "-dirty" : "")
}()

let package = Package(
    name: "ScanTrack",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "scan-agent", targets: ["scan-agent"]),
        .executable(name: "scan-aggregator", targets: ["scan-aggregator"]),
        .executable(name: "scanadmin", targets: ["scanadmin"]),
        .executable(name: "scan-synth", targets: ["scan-synth"]),
        .executable(name: "scan-fake-camera", targets: ["scan-fake-camera"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", exact: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", exact: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", exact: "2.13.0"),
        // The dashboard's HTTP server (`scanadmin serve`); its optional traits are not needed.
        .package(url: "https://github.com/hummingbird-project/hummingbird", exact: "2.28.1", traits: []),
        // Metrics: the swift-metrics API in the programs, a Prometheus registry behind it (ScanMetrics).
        .package(url: "https://github.com/apple/swift-metrics", exact: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", exact: "2.4.1"),
        // PBKDF2 for the coding desk's operator passwords (scanadmin serve --operators-file).
        .package(url: "https://github.com/apple/swift-crypto", exact: "4.5.2"),
    ],
    targets: [
        // C libraries, reached through pkg-config; each has a shim for what Swift cannot call.
        .systemLibrary(name: "CZBar", pkgConfig: "zbar", providers: [.apt(["libzbar-dev"])]),
        .systemLibrary(name: "CV4L2", pkgConfig: "libv4l2", providers: [.apt(["libv4l-dev"])]),
        .systemLibrary(name: "CLibPQ", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),
        .systemLibrary(name: "CNATS", pkgConfig: "libnats", providers: [.apt(["libnats-dev"])]),
        .systemLibrary(name: "CPNG", pkgConfig: "libpng", providers: [.apt(["libpng-dev"])]),
        .systemLibrary(name: "CTurboJPEG", pkgConfig: "libturbojpeg", providers: [.apt(["libturbojpeg0-dev"])]),
        // GenICam cameras (GigE Vision, USB3 Vision) through Aravis 0.8.
        .systemLibrary(name: "CAravis", pkgConfig: "aravis-0.8", providers: [.apt(["libaravis-dev"])]),
        // RTSP cameras through FFmpeg 5.1's libavformat and libavcodec (docs/cameras.md says why not GStreamer).
        .systemLibrary(
            name: "CAVCodec", pkgConfig: "libavformat",
            providers: [.apt(["libavformat-dev", "libavcodec-dev", "libswscale-dev"])]),
        // Still images for `scan-agent decode` beyond PNG and JPEG: WebP, TIFF, GIF (BMP is read in Swift).
        .systemLibrary(name: "CWebP", pkgConfig: "libwebp", providers: [.apt(["libwebp-dev"])]),
        .systemLibrary(name: "CTIFF", pkgConfig: "libtiff-4", providers: [.apt(["libtiff-dev"])]),
        .systemLibrary(name: "CGIF", providers: [.apt(["libgif-dev"])]),
        // zint renders codes for the synthetic conveyor only (tests, benchmarks, demo); agents never link it.
        .systemLibrary(name: "CZint", providers: [.apt(["libzint-dev"])]),
        // zxing-cpp 3.1.1, built from its pinned source by scripts/build-zxing.sh (make does it) into
        // .cache/zxing; its pkg-config file has a name of our own so Debian's older zxing is never taken.
        .systemLibrary(name: "CZXing", pkgConfig: "scantrack-zxing"),
        // The commit the programs were built from, as a C string (see `commit` above).
        .target(name: "CScanBuildInfo", cSettings: [.define("SCANTRACK_COMMIT", to: "\"\(commit)\"")]),
        // OpenSSL without its exit handler (libssl-dev): see Sources/COpenSSLExit/openssl_exit.c.
        .target(name: "COpenSSLExit", linkerSettings: [.linkedLibrary("crypto")]),
        // A verified TLS client for rtsps cameras (libssl-dev): see Sources/CTLSClient/include/scantrack_tls.h.
        .target(name: "CTLSClient", linkerSettings: [.linkedLibrary("ssl"), .linkedLibrary("crypto")]),

        // Pure core: no C module, no I/O. ScanCore holds the values every module shares (time,
        // geometry, grey images, JSON, config reading, subject tokens, symbologies); each concern
        // above it is a module of its own, each depending only on those below it:
        // ScanMedia (Y4M, PGM) and ScanVision (detections, localiser, tracker, candidates, decode
        // planner) on ScanCore; ScanRules (rule engine, its regex engine, ruleset documents) and
        // ScanAgentConfig (the agent's config, line set-up, camera controls, commands, session
        // policies) on ScanVision; ScanEvents (every wire event and its validation: the contract)
        // on ScanCore alone, so the aggregator links nothing of the agent; ScanPipeline (a frame to
        // events, and the events built from tracks) on all of them; ScanFuzz (the fuzz targets) on top.
        .target(name: "ScanCore", swiftSettings: swiftSettings),
        .target(name: "ScanMedia", dependencies: ["ScanCore"], swiftSettings: swiftSettings),
        .target(name: "ScanVision", dependencies: ["ScanCore"], swiftSettings: swiftSettings),
        .target(name: "ScanRules", dependencies: ["ScanCore", "ScanVision"], swiftSettings: swiftSettings),
        .target(name: "ScanAgentConfig", dependencies: ["ScanCore", "ScanVision"], swiftSettings: swiftSettings),
        .target(
            name: "ScanEvents", dependencies: ["ScanCore"],
            swiftSettings: swiftSettings),
        .target(
            name: "ScanPipeline",
            dependencies: ["ScanAgentConfig", "ScanCore", "ScanEvents", "ScanRules", "ScanVision"],
            swiftSettings: swiftSettings),
        .target(
            name: "ScanFuzz",
            dependencies: [
                "ScanAgentConfig", "ScanCore", "ScanEvents", "ScanMedia", "ScanReconciliation", "ScanRules",
            ],
            swiftSettings: swiftSettings),
        // Pure too, but only the aggregator's (item passes, pack verdicts, order files) and only
        // the reports' (shifts): kept out of ScanCore so that it changes for the agent's reasons only.
        .target(
            name: "ScanReconciliation", dependencies: ["ScanCore", "ScanEvents"],
            swiftSettings: swiftSettings),
        .target(name: "ScanReports", dependencies: ["ScanCore"], swiftSettings: swiftSettings),

        // Adapters: the only modules that import a C module.
        .target(name: "ScanZBar", dependencies: ["CZBar", "ScanCore", "ScanVision"], swiftSettings: swiftSettings),
        .target(name: "ScanZXing", dependencies: ["CZXing", "ScanCore", "ScanVision"], swiftSettings: swiftSettings),
        .target(
            name: "ScanV4L2", dependencies: ["CV4L2", "ScanAgentConfig", "ScanCore"], swiftSettings: swiftSettings),
        .target(name: "ScanNATS", dependencies: ["CNATS", "ScanCore", "ScanEvents"], swiftSettings: swiftSettings),
        .target(
            name: "ScanPostgres", dependencies: ["CLibPQ", "ScanCore", "ScanEvents", "ScanReconciliation"],
            swiftSettings: swiftSettings),
        .target(name: "ScanPNG", dependencies: ["CPNG", "ScanCore"], swiftSettings: swiftSettings),
        .target(name: "ScanJPEG", dependencies: ["CTurboJPEG", "ScanCore"], swiftSettings: swiftSettings),
        .target(
            name: "ScanImages", dependencies: ["CGIF", "CTIFF", "CWebP", "ScanCore"], swiftSettings: swiftSettings),
        .target(
            name: "ScanGenICam", dependencies: ["CAravis", "ScanAgentConfig", "ScanCore"], swiftSettings: swiftSettings),
        .target(
            name: "ScanRTSP", dependencies: ["CAVCodec", "CTLSClient", "ScanAgentConfig", "ScanCore"],
            swiftSettings: swiftSettings),

        // Services: threads for blocking C under swift-service-lifecycle, logging set-up, retry logs.
        .target(
            name: "ScanServices",
            dependencies: [
                "ScanCore", "COpenSSLExit", .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        // /metrics (Prometheus text) and /health/live|ready over HTTP, for the long-running programs.
        .target(
            name: "ScanMetrics",
            dependencies: [
                "CScanBuildInfo", "ScanCore", "ScanServices",
                .product(name: "Hummingbird", package: "hummingbird"), .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        // The agent's runtime behind its ports (frame source, decoder, durable sink, event bus,
        // command and rules feeds, clock): no C module, so tests run it in-process with fakes.
        .target(
            name: "ScanAgentRuntime",
            dependencies: [
                "ScanAgentConfig", "ScanCore", "ScanEvents", "ScanPipeline", "ScanRules", "ScanServices", "ScanVision",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"), .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),

        // The aggregator's runtime behind its ports (event consumer, result publisher, sighting and
        // reconciliation stores, clock): ingest, reconciliation and their shutdown order, tested
        // in-process with fakes on a manual clock.
        .target(
            name: "ScanAggregatorRuntime",
            dependencies: [
                "ScanCore", "ScanEvents", "ScanReconciliation", "ScanServices",
                .product(name: "Logging", package: "swift-log"), .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),

        // Wiring.
        .target(
            name: "ScanAgent",
            dependencies: [
                "ScanAgentConfig", "ScanAgentRuntime", "ScanCore", "ScanEvents", "ScanGenICam", "ScanImages",
                "ScanJPEG",
                "ScanMedia", "ScanMetrics", "ScanNATS", "ScanPNG", "ScanPipeline", "ScanRTSP", "ScanReconciliation",
                "ScanRules", "ScanServices",
                "ScanV4L2", "ScanVision", "ScanZBar", "ScanZXing",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "ScanAggregator",
            dependencies: [
                "ScanAggregatorRuntime", "ScanCore", "ScanEvents", "ScanMetrics", "ScanNATS", "ScanPostgres",
                "ScanReconciliation", "ScanServices",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "ScanAdmin",
            dependencies: [
                "ScanAgentConfig", "ScanCore", "ScanEvents", "ScanMetrics", "ScanNATS", "ScanPostgres",
                "ScanReconciliation", "ScanReports", "ScanRules", "ScanServices",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"), .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "ScanSynth", dependencies: ["CZint", "ScanCore", "ScanMedia"],
            swiftSettings: swiftSettings + optimizedInDebug),
        .executableTarget(
            name: "scan-bench", dependencies: ["ScanCore", "ScanEvents", "ScanPipeline", "ScanRules", "ScanVision"],
            swiftSettings: swiftSettings),
        // A GigE Vision camera that shows a clip (Aravis's fake camera): tests and demonstrations.
        .executableTarget(
            name: "scan-fake-camera", dependencies: ["ScanCore", "ScanGenICam", "ScanMedia", "ScanMetrics"],
            swiftSettings: swiftSettings),
        .executableTarget(
            name: "scan-bench-ingest",
            dependencies: [
                "ScanAggregator", "ScanAggregatorRuntime", "ScanCore", "ScanNATS", "ScanPostgres", "ScanServices",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings),
        .executableTarget(
            name: "scan-synth", dependencies: ["ScanCore", "ScanMetrics", "ScanSynth"], swiftSettings: swiftSettings),
        .executableTarget(
            name: "scan-agent", dependencies: ["ScanAgent", "ScanMetrics", "ScanServices"], swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "scan-aggregator", dependencies: ["ScanAggregator", "ScanMetrics", "ScanServices"],
            swiftSettings: swiftSettings),
        .executableTarget(
            name: "scanadmin", dependencies: ["ScanAdmin", "ScanMetrics", "ScanServices"], swiftSettings: swiftSettings),

        // Fakes for the runtimes' ports: the agent's (scripted frames and decoder, recording bus,
        // memory spool, scripted commands and rules), the aggregator's (scripted consumer, recording
        // publisher, memory stores) and the manual clock both use.
        .target(
            name: "ScanTesting",
            dependencies: [
                "ScanAgentConfig", "ScanAgentRuntime", "ScanAggregatorRuntime", "ScanCore", "ScanEvents",
                "ScanPipeline", "ScanReconciliation", "ScanServices", "ScanVision",
            ],
            path: "Tests/ScanTesting",
            swiftSettings: swiftSettings),
        .testTarget(
            name: "ScanAgentRuntimeTests",
            dependencies: [
                "ScanTestTiming", "ScanAgentConfig", "ScanAgentRuntime", "ScanCore", "ScanEvents", "ScanMetrics",
                "ScanRules", "ScanServices", "ScanTesting", "ScanVision",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "ScanAggregatorRuntimeTests",
            dependencies: [
                "ScanTestTiming", "ScanAggregatorRuntime", "ScanCore", "ScanEvents", "ScanMetrics",
                "ScanReconciliation", "ScanServices", "ScanTesting",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "ScanReconciliationTests",
            dependencies: [
                "ScanTestTiming", "ScanAgentConfig", "ScanCore", "ScanEvents", "ScanReconciliation", "ScanTestSupport",
                "ScanTesting",
            ],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "ScanReportsTests", dependencies: ["ScanTestTiming", "ScanCore", "ScanReports"],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "ScanMetricsTests", dependencies: ["ScanTestTiming", "ScanMetrics", "ScanTestSupport"],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "ScanServicesTests",
            dependencies: [
                "ScanTestTiming", "ScanServices", "ScanTestSupport", .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ], swiftSettings: swiftSettings),
        // Times every test's own run for `make test`'s list of the slowest tests (TimedTrait).
        .target(name: "ScanTestTiming", path: "Tests/ScanTestTiming", swiftSettings: swiftSettings),
        // Test helpers against the real servers, the corpus and the built programs (replays).
        .target(
            name: "ScanTestSupport", dependencies: ["ScanCore", "ScanNATS", "ScanPostgres", "ScanSynth"],
            path: "Tests/ScanTestSupport", swiftSettings: swiftSettings),
        .testTarget(
            name: "ScanCoreTests", dependencies: ["ScanTestTiming", "ScanCore", "ScanTestSupport"],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "ScanMediaTests", dependencies: ["ScanTestTiming", "ScanCore", "ScanMedia", "ScanTestSupport"],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "ScanVisionTests", dependencies: ["ScanTestTiming", "ScanCore", "ScanVision"],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "ScanRulesTests",
            dependencies: ["ScanTestTiming", "ScanCore", "ScanRules", "ScanTestSupport", "ScanVision"],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "ScanAgentConfigTests",
            dependencies: [
                "ScanTestTiming", "ScanAgentConfig", "ScanCore", "ScanEvents", "ScanPipeline", "ScanVision",
            ],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "ScanEventsTests",
            dependencies: [
                "ScanTestTiming", "ScanAgentConfig", "ScanCore", "ScanEvents", "ScanPipeline", "ScanVision",
            ],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "ScanPipelineTests",
            dependencies: [
                "ScanTestTiming", "ScanAgentConfig", "ScanCore", "ScanEvents", "ScanPipeline", "ScanVision",
            ],
            swiftSettings: swiftSettings),
        // Hostile input across the contracts and the fuzzers' committed corpus.
        .testTarget(
            name: "ScanFuzzTests",
            dependencies: [
                "ScanTestTiming", "ScanAgentConfig", "ScanCore", "ScanEvents", "ScanFuzz", "ScanMedia",
                "ScanReconciliation", "ScanRules",
                "ScanTestSupport",
            ],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "ScanZBarTests",
            dependencies: [
                "ScanTestTiming", "ScanCore", "ScanMedia", "ScanSynth", "ScanTestSupport", "ScanVision", "ScanZBar",
            ],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "ScanZXingTests",
            dependencies: [
                "ScanTestTiming", "ScanCore", "ScanSynth", "ScanTestSupport", "ScanZXing", "ScanMedia", "ScanVision",
            ],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "ScanPNGTests", dependencies: ["ScanTestTiming", "ScanCore", "ScanPNG", "ScanTestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "ScanV4L2Tests",
            dependencies: ["ScanTestTiming", "ScanAgentConfig", "ScanCore", "ScanTestSupport", "ScanV4L2"],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "ScanNATSTests", dependencies: ["ScanTestTiming", "ScanCore", "ScanNATS", "ScanTestSupport"],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "ScanPostgresTests",
            dependencies: ["ScanTestTiming", "ScanCore", "ScanPostgres", "ScanReconciliation", "ScanTestSupport"],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "ScanAdminTests",
            dependencies: [
                "ScanTestTiming", "ScanAdmin", "ScanAgentConfig", "ScanCore", "ScanEvents", "ScanNATS", "ScanPostgres",
                "ScanReconciliation", "ScanReports", "ScanRules", "ScanTestSupport",
            ],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "ScanAggregatorTests",
            dependencies: [
                "ScanTestTiming", "ScanAgentConfig", "ScanAgentRuntime", "ScanAggregator", "ScanAggregatorRuntime",
                "ScanCore",
                "ScanEvents", "ScanNATS", "ScanPipeline", "ScanPostgres", "ScanReconciliation", "ScanServices",
                "ScanTestSupport",
                "ScanTesting", .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings),
        // Unit tests of scan-agent's own module (run ids, its spool).
        .testTarget(
            name: "ScanAgentTests",
            dependencies: [
                "ScanTestTiming", "ScanAgent", "ScanAgentRuntime", "ScanCore", "ScanServices", "ScanTestSupport",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings),
        // The integration tests: the built programs as processes (scan-agent on clips, stills and the
        // corpus; several programs at once) against the real servers: nats-server (and a cluster of
        // three), PostgreSQL, Aravis's fake camera, an RTSP server, Prometheus and headless Chromium.
        .testTarget(
            name: "ScanSystemTests",
            dependencies: [
                "ScanTestTiming", "ScanAgent", "ScanAgentConfig", "ScanAgentRuntime", "ScanCore", "ScanEvents",
                "ScanGenICam",
                "ScanJPEG", "ScanMedia", "ScanNATS", "ScanPNG", "ScanPostgres", "ScanRTSP", "ScanServices",
                "ScanSynth", "ScanTestSupport", "ScanVision", "ScanZXing",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings),
    ]
)
