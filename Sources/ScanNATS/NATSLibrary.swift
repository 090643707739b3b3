import CNATS
import Synchronization

/// cnats's threads must be gone before the process exits. `exit` runs OpenSSL's own exit handler,
/// which frees its locks; a cnats thread still reading a TLS connection then takes a freed lock
/// and the process dies with SIGSEGV after its work is done (one TLS agent run in about thirty).
/// An exit handler registered after OpenSSL's runs before it (they run last in, first out): it
/// closes the library and waits for cnats's threads, so OpenSSL tears down after them.
enum NATSLibrary {
    /// Whether a handler is registered, and whether one was registered after a TLS connection
    /// (OpenSSL is set up by then; a handler from before that might run after OpenSSL's).
    private static let registered = Mutex<(any: Bool, afterTLS: Bool)>((false, false))

    /// Called once a connection exists, `tls` when it uses TLS.
    static func closeAtExit(tls: Bool) {
        let register = registered.withLock { state -> Bool in
            guard !state.any || (tls && !state.afterTLS) else { return false }
            state.any = true
            state.afterTLS = state.afterTLS || tls
            return true
        }
        if register { atexit { NATSLibrary.closeAndWait() } }
    }

    /// Every connection is destroyed by the time the program returns; this waits for the threads
    /// that still hold the library (a reader finishing its socket), up to 2 s.
    private static func closeAndWait() {
        _ = nats_CloseAndWait(2_000)
    }
}
