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

/// Runs `reload` at each SIGHUP until the group stops: a program's `systemctl reload` (the units'
/// `ExecReload=kill -HUP $MAINPID`). What is reloaded is the program's to say; a program with
/// nothing to reload still takes the signal (its default action would end the program).
public struct HangupService: Service {
    let reload: @Sendable () -> Void

    public init(reload: @escaping @Sendable () -> Void) { self.reload = reload }

    public func run() async throws {
        let hangups = await UnixSignalsSequence(trapping: .sighup)
        for await _ in hangups.cancelOnGracefulShutdown() { reload() }
    }

    /// For a program whose settings are flags and the environment, which a running process cannot
    /// read again: SIGHUP is said to change nothing, instead of ending the program.
    public static func nothingToReload(logger: Logger) -> HangupService {
        HangupService {
            logger.notice(
                "SIGHUP: nothing to reload (settings come from flags and the environment); restart to change them")
        }
    }
}
