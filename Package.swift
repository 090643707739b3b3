// swift-tools-version:6.2
import PackageDescription

/// One set of settings for every target: Swift 6 language mode, strict concurrency, and every
/// warning an error (`make test` fails on one; the packages we depend on are not affected).
let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .treatAllWarnings(as: .error),
]

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
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        // The dashboard's HTTP server (`scanadmin serve`); its optional traits are not needed.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.0", traits: []),
        // Metrics: the swift-metrics API in the programs, a Prometheus registry behind it (ScanMetrics).
        .package(url: "https://github.com/apple/swift-metrics", from: "2.9.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.0"),
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
        // zint renders codes for the synthetic conveyor only (tests, benchmarks, demo); agents never link it.
        .systemLibrary(name: "CZint", providers: [.apt(["libzint-dev"])]),
        // zxing-cpp 3.1.1, built from its pinned source by scripts/build-zxing.sh (make does it) into
        // .cache/zxing; its pkg-config file has a name of our own so Debian's older zxing is never taken.
        .systemLibrary(name: "CZXing", pkgConfig: "scantrack-zxing"),

        // Pure core: no C module, no I/O.
        .target(name: "ScanCore", swiftSettings: swiftSettings),
        // Pure too, but only the aggregator's (item passes, pack verdicts, order files) and only
        // the reports' (shifts): kept out of ScanCore so that it changes for the agent's reasons only.
        .target(name: "ScanReconciliation", dependencies: ["ScanCore"], swiftSettings: swiftSettings),
        .target(name: "ScanReports", dependencies: ["ScanCore"], swiftSettings: swiftSettings),

        // Adapters: the only modules that import a C module.
        .target(name: "ScanZBar", dependencies: ["CZBar", "ScanCore"], swiftSettings: swiftSettings),
        .target(name: "ScanZXing", dependencies: ["CZXing", "ScanCore"], swiftSettings: swiftSettings),
        .target(name: "ScanV4L2", dependencies: ["CV4L2", "ScanCore"], swiftSettings: swiftSettings),
        .target(name: "ScanNATS", dependencies: ["CNATS", "ScanCore"], swiftSettings: swiftSettings),
        .target(
            name: "ScanPostgres", dependencies: ["CLibPQ", "ScanCore", "ScanReconciliation"],
            swiftSettings: swiftSettings),
        .target(name: "ScanPNG", dependencies: ["CPNG", "ScanCore"], swiftSettings: swiftSettings),
        .target(name: "ScanJPEG", dependencies: ["CTurboJPEG", "ScanCore"], swiftSettings: swiftSettings),
        .target(name: "ScanGenICam", dependencies: ["CAravis", "ScanCore"], swiftSettings: swiftSettings),
        .target(name: "ScanRTSP", dependencies: ["CAVCodec", "ScanCore"], swiftSettings: swiftSettings),

        // Services: threads for blocking C under swift-service-lifecycle, logging set-up, retry logs.
        .target(
            name: "ScanServices",
            dependencies: [
                "ScanCore",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        // /metrics (Prometheus text) and /health/live|ready over HTTP, for the long-running programs.
        .target(
            name: "ScanMetrics",
            dependencies: [
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
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
                "ScanCore", "ScanServices",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
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
                "ScanCore", "ScanReconciliation", "ScanServices",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),

        // Wiring.
        .target(
            name: "ScanAgent",
            dependencies: [
                "ScanCore", "ScanAgentRuntime", "ScanServices", "ScanZBar", "ScanZXing", "ScanV4L2", "ScanGenICam",
                "ScanRTSP", "ScanNATS",
                "ScanPNG", "ScanJPEG", "ScanMetrics",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "ScanAggregator",
            dependencies: [
                "ScanAggregatorRuntime", "ScanCore", "ScanReconciliation", "ScanServices", "ScanNATS", "ScanPostgres",
                "ScanMetrics",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "ScanAdmin",
            dependencies: [
                "ScanCore", "ScanReconciliation", "ScanReports", "ScanServices", "ScanNATS", "ScanPostgres",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(name: "ScanSynth", dependencies: ["CZint", "ScanCore"], swiftSettings: swiftSettings),
        .executableTarget(name: "scan-bench", dependencies: ["ScanCore"], swiftSettings: swiftSettings),
        // A GigE Vision camera that shows a clip (Aravis's fake camera): tests and demonstrations.
        .executableTarget(
            name: "scan-fake-camera", dependencies: ["ScanGenICam", "ScanCore"], swiftSettings: swiftSettings),
        .executableTarget(
            name: "scan-bench-ingest",
            dependencies: [
                "ScanAggregator", "ScanAggregatorRuntime", "ScanCore", "ScanNATS", "ScanPostgres", "ScanServices",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings),
        .executableTarget(name: "scan-synth", dependencies: ["ScanSynth", "ScanCore"], swiftSettings: swiftSettings),
        .executableTarget(
            name: "scan-agent", dependencies: ["ScanAgent", "ScanServices"], swiftSettings: swiftSettings),
        .executableTarget(
            name: "scan-aggregator", dependencies: ["ScanAggregator", "ScanServices"], swiftSettings: swiftSettings),
        .executableTarget(
            name: "scanadmin", dependencies: ["ScanAdmin", "ScanServices"], swiftSettings: swiftSettings),

        // Fakes for the runtimes' ports: the agent's (scripted frames and decoder, recording bus,
        // memory spool, scripted commands and rules), the aggregator's (scripted consumer, recording
        // publisher, memory stores) and the manual clock both use.
        .target(
            name: "ScanTesting",
            dependencies: [
                "ScanCore", "ScanAgentRuntime", "ScanAggregatorRuntime", "ScanReconciliation", "ScanServices",
            ],
            path: "Tests/ScanTesting",
            swiftSettings: swiftSettings),
        .testTarget(
            name: "ScanAgentRuntimeTests",
            dependencies: [
                "ScanAgentRuntime", "ScanCore", "ScanServices", "ScanTesting",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "ScanAggregatorRuntimeTests",
            dependencies: [
                "ScanAggregatorRuntime", "ScanCore", "ScanReconciliation", "ScanServices", "ScanTesting",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "ScanReconciliationTests", dependencies: ["ScanReconciliation", "ScanCore", "ScanTestSupport"],
            swiftSettings: swiftSettings),
        .testTarget(name: "ScanReportsTests", dependencies: ["ScanReports", "ScanCore"], swiftSettings: swiftSettings),
        .testTarget(
            name: "ScanServicesTests",
            dependencies: [
                "ScanServices", .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ], swiftSettings: swiftSettings),
        .target(
            name: "ScanTestSupport", dependencies: ["ScanCore", "ScanNATS", "ScanPostgres"],
            path: "Tests/ScanTestSupport",
            swiftSettings: swiftSettings),
        .testTarget(
            name: "ScanCoreTests", dependencies: ["ScanCore", "ScanTestSupport"], swiftSettings: swiftSettings),
        .testTarget(
            name: "ScanZBarTests", dependencies: ["ScanZBar", "ScanCore", "ScanSynth", "ScanTestSupport"],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "ScanZXingTests", dependencies: ["ScanZXing", "ScanCore", "ScanSynth", "ScanTestSupport"],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "ScanPNGTests", dependencies: ["ScanPNG", "ScanCore", "ScanTestSupport"], swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "ScanV4L2Tests", dependencies: ["ScanV4L2", "ScanCore", "ScanTestSupport"],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "ScanNATSTests", dependencies: ["ScanNATS", "ScanCore", "ScanTestSupport"],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "ScanPostgresTests", dependencies: ["ScanPostgres", "ScanTestSupport"],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "ScanAdminTests", dependencies: ["ScanAdmin", "ScanCore", "ScanPostgres", "ScanTestSupport"],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "ScanAggregatorTests",
            dependencies: [
                "ScanAggregator", "ScanAggregatorRuntime", "ScanAgentRuntime", "ScanCore", "ScanNATS", "ScanPostgres",
                "ScanReconciliation",
                "ScanServices",
                "ScanTestSupport", "ScanTesting",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "ScanAgentTests",
            dependencies: [
                "ScanAgent", "ScanAgentRuntime", "ScanServices", "ScanCore", "ScanNATS", "ScanPostgres", "ScanSynth",
                "ScanZBar",
                "ScanZXing", "ScanPNG", "ScanJPEG", "ScanGenICam", "ScanTestSupport",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings),
    ]
)
