import Foundation

/// Waiting, bounded, for what a server or another process does in its own time.
public enum Polling {
    /// Calls `body` every 100 ms until it gives a value or `seconds` pass; nil then.
    public static func value<T>(seconds: Double, _ body: () throws -> T?) rethrows -> T? {
        let deadline = Date(timeIntervalSinceNow: seconds)
        while true {
            if let value = try body() { return value }
            if Date() >= deadline { return nil }
            usleep(100_000)
        }
    }

    /// Calls `body` every 100 ms until it returns true or `seconds` pass.
    public static func until(seconds: Double, _ body: () throws -> Bool) rethrows -> Bool {
        try value(seconds: seconds) { try body() ? true : nil } ?? false
    }

    /// The same from an async test, sleeping without holding its thread (a service group the test
    /// started may need it), every 20 ms.
    public static func until(seconds: Double, _ body: () -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        while !body() {
            if ContinuousClock.now >= deadline { return false }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return true
    }
}
