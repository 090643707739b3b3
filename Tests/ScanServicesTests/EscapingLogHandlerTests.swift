import Logging
import ScanServices
import ScanTestTiming
import Synchronization
import Testing

/// Log lines carry values from labels, cameras and servers: none of them may act on a terminal.
@Suite("escaping log handler", .timed)
struct EscapingLogHandlerTests {
    /// Keeps what reaches it.
    final class Recorder: Sendable {
        let events = Mutex<[(message: String, metadata: Logger.Metadata)]>([])
    }

    struct Recording: LogHandler {
        let recorder: Recorder
        var logLevel: Logger.Level = .trace
        var metadata: Logger.Metadata = [:]
        var metadataProvider: Logger.MetadataProvider?
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) {
            recorder.events.withLock { $0.append((event.message.description, event.metadata ?? [:])) }
        }
    }

    @Test("messages and metadata (nested too) reach the handler with ESC, CR, LF and bidi overrides escaped")
    func escapes() {
        let recorder = Recorder()
        let logger = Logger(label: "test") { _ in EscapingLogHandler(Recording(recorder: recorder)) }
        logger.warning(
            "value \u{1B}[2Jcleared\r\nforged line",
            metadata: [
                "value": "abc\u{202E}fed", "nested": ["inner": "\u{1B}]0;title\u{07}"],
                "list": ["ok", "\u{9B}31m"], "count": "\(3)",
            ])
        logger.info("plain 4006381333931", metadata: ["camera.id": "cam-01"])
        let events = recorder.events.withLock { $0 }
        #expect(events.count == 2)
        #expect(events[0].message == "value \\x1B[2Jcleared\\x0D\\x0Aforged line")
        #expect(events[0].metadata["value"] == "abc\\u{202E}fed")
        #expect(events[0].metadata["nested"] == ["inner": "\\x1B]0;title\\x07"])
        #expect(events[0].metadata["list"] == ["ok", "\\x9B31m"])
        #expect(events[1].message == "plain 4006381333931" && events[1].metadata["camera.id"] == "cam-01")
    }
}
