import Foundation
import Hummingbird
import Logging
import Metrics
import Prometheus
import ServiceLifecycle

/// One check of a program's readiness (NATS connected, PostgreSQL reachable, consumer bound).
public struct HealthCheck: Sendable, Equatable {
    public var name: String
    public var ok: Bool
    public var detail: String

    public init(name: String, ok: Bool, detail: String) {
        self.name = name
        self.ok = ok
        self.detail = detail
    }
}

/// What a program's services say of their connections, as they connect and lose them.
public final class Readiness: Sendable {
    private let checks: Mutex<[String: HealthCheck]>
    private let order: [String]
    private let probe: (@Sendable () -> [HealthCheck])?

    /// `names`: the checks that must all pass, in the order they are shown; each starts failing
    /// until `set`. `probe`: checks made afresh at each request (after the named ones).
    public init(_ names: [String], probe: (@Sendable () -> [HealthCheck])? = nil) {
        order = names
        self.probe = probe
        checks = Mutex(
            Dictionary(uniqueKeysWithValues: names.map { ($0, HealthCheck(name: $0, ok: false, detail: "not yet")) }))
    }

    public func set(_ name: String, ok: Bool, detail: String = "") {
        checks.withLock {
            $0[name] = HealthCheck(name: name, ok: ok, detail: detail.isEmpty ? (ok ? "ok" : "failing") : detail)
        }
    }

    public var current: [HealthCheck] {
        checks.withLock { checks in order.compactMap { checks[$0] } } + (probe?() ?? [])
    }

    public var isReady: Bool { current.allSatisfy(\.ok) }
}

/// Minimal lock-protected box (Synchronization's Mutex needs newer platforms on macOS).
final class Mutex<Value>: @unchecked Sendable {
    // @unchecked: `value` is touched under `lock` only.
    private let lock = NSLock()
    private var value: Value
    init(_ value: Value) { self.value = value }
    func withLock<T>(_ body: (inout Value) -> T) -> T { lock.withLock { body(&value) } }
}

/// The process's metrics: swift-metrics backed by a Prometheus registry, bootstrapped once.
public enum ScanMetrics {
    public static let registry = PrometheusCollectorRegistry()

    private static let bootstrapped: Bool = {
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
        return true
    }()

    /// Points swift-metrics at the Prometheus registry (the first call does; later ones nothing).
    public static func bootstrap() { _ = bootstrapped }

    /// The registry in the Prometheus text format.
    public static func text() -> String { registry.emitToString() }

    /// The HTTP service of `/metrics`, `/health/live` and `/health/ready`. `onListening` gets the
    /// bound address (the real port when 0 was asked for).
    public static func endpoint(
        host: String, port: Int, readiness: Readiness, logger: Logger,
        onListening: @escaping @Sendable (String) -> Void = { _ in }
    ) -> some Service {
        bootstrap()
        let router = Router()
        router.get("/metrics") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(bytes: registry.emitToBuffer())))
        }
        router.get("/health/live") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "text/plain"],
                body: .init(byteBuffer: ByteBuffer(string: "live\n")))
        }
        router.get("/health/ready") { _, _ in
            let checks = readiness.current
            let text = checks.map { "\($0.name) \($0.ok ? "ok" : "failing"): \($0.detail)\n" }.joined()
            return Response(
                status: checks.allSatisfy(\.ok) ? .ok : .serviceUnavailable, headers: [.contentType: "text/plain"],
                body: .init(byteBuffer: ByteBuffer(string: text)))
        }
        return Application(
            router: router, configuration: .init(address: .hostname(host, port: port), serverName: "scantrack"),
            onServerRunning: { channel in
                let shown = host.contains(":") ? "[\(host)]" : host
                let address = "http://\(shown):\(channel.localAddress?.port ?? port)"
                logger.info("metrics and health", metadata: ["address": "\(address)/metrics"])
                onListening(address)
            },
            logger: logger)
    }
}
