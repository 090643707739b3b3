import Logging
import ServiceLifecycle
import UnixSignals

/// One program's `ServiceGroup`: started in the order given, stopped in reverse. A program's
/// group owns SIGTERM and SIGINT (graceful shutdown); a test's owns no signal.
public func programGroup(
    _ services: [ServiceGroupConfiguration.ServiceConfiguration], stopsOnSignals: Bool, logger: Logger
) -> ServiceGroup {
    ServiceGroup(
        configuration: ServiceGroupConfiguration(
            services: services, gracefulShutdownSignals: stopsOnSignals ? [.sigterm, .sigint] : [], logger: logger))
}
