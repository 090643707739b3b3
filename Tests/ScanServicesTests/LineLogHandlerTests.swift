import Foundation
import Logging
import ScanCore
import ScanServices
import ScanTestTiming
import Testing

/// The log line forms: text for people, JSON for Loki or ELK; both with millisecond times.
@Suite("log lines", .timed)
struct LineLogHandlerTests {
    static let time = Timestamp(milliseconds: 1_795_680_001_250)

    static func event(_ message: String, metadata: Logger.Metadata) -> LogEvent {
        LogEvent(
            level: .warning, message: Logger.Message(stringLiteral: message), metadata: metadata, source: "ScanAgent",
            file: "f.swift", function: "f()", line: 1)
    }

    @Test("text: RFC 3339 with milliseconds, level, logger, metadata sorted, source, message")
    func text() {
        let line = LineLogHandler.line(
            event: Self.event("spool full", metadata: ["lost": "3", "camera.id": "cam-1"]), label: "scan-agent",
            metadata: ["lost": "3", "camera.id": "cam-1"], format: .text, time: Self.time)
        #expect(line == "2026-11-26T08:00:01.250Z warning scan-agent: camera.id=cam-1 lost=3 [ScanAgent] spool full")
    }

    @Test("json: one object a line that parses back, metadata as keys (nested kept), reserved names moved aside")
    func json() throws {
        let metadata: Logger.Metadata = [
            "camera.id": "cam-1", "message": "clash", "nested": ["a": "1", "b": ["x", "y"]], "quote": "say \"hi\"\n",
        ]
        let line = LineLogHandler.line(
            event: Self.event("spool \"full\"", metadata: metadata), label: "scan-agent", metadata: metadata,
            format: .json, time: Self.time)
        #expect(!line.contains("\n"))
        let object = try JSONValue.parse(Array(line.utf8))
        #expect(object["time"] == .string("2026-11-26T08:00:01.250Z") && object["level"] == .string("warning"))
        #expect(object["logger"] == .string("scan-agent") && object["message"] == .string("spool \"full\""))
        #expect(object["camera.id"] == .string("cam-1") && object["metadata.message"] == .string("clash"))
        #expect(object["nested"]?["b"] == .array([.string("x"), .string("y")]))
        #expect(object["quote"] == .string("say \"hi\"\n"))
    }

    @Test(
        "json: service.name, service.version and host.name from the program; numbers stay numbers, number-like text stays text"
    )
    func resourceAndTypes() throws {
        let metadata: Logger.Metadata = [
            "lost": .stringConvertible(3), "seconds": .stringConvertible(0.25), "code": "0400",
            "value": "4006381333931",
            "service.name": "clash",
        ]
        let line = LineLogHandler.line(
            event: Self.event("spool full", metadata: metadata), label: "scan-agent", metadata: metadata, format: .json,
            time: Self.time, resource: ScanLogging.Resource(service: "scan-agent", version: "0.9.0+abc", host: "edge-7")
        )
        let object = try JSONValue.parse(Array(line.utf8))
        #expect(object["service.name"] == .string("scan-agent") && object["service.version"] == .string("0.9.0+abc"))
        #expect(object["host.name"] == .string("edge-7") && object["metadata.service.name"] == .string("clash"))
        #expect(line.contains(#""lost":3"#) && line.contains(#""seconds":0.25"#), "\(line)")
        #expect(object["code"] == .string("0400") && object["value"] == .string("4006381333931"), "a code is text")
        #expect(!ScanLogging.hostName().isEmpty)
    }

    @Test("--log-format takes text or json; anything else is an error naming the flag")
    func formats() throws {
        #expect(try ScanLogging.format("JSON") == .json)
        let error = #expect(throws: LogLevelError.self) { try ScanLogging.format("xml") }
        #expect(error?.description == "--log-format: 'xml' is not a log format (text, json)")
    }
}
