import ArgumentParser
import Foundation
import ScanCore
import ScanGenICam
import ScanRTSP
import ScanV4L2
import ScanAgentConfig

/// `scan-agent cameras [ID --controls] [--format table|json]`: the first command on a new line.
struct CamerasCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cameras",
        abstract: "List the cameras this machine sees (V4L2 devices and GenICam cameras), or one camera's controls.",
        discussion: """
            Without ID: every V4L2 device (/dev/video*: driver and card name) and every GenICam camera Aravis \
            finds (GigE Vision on the networks of this machine, USB3 Vision): interface, id, vendor, model, \
            serial and address. With a /dev/videoN: its V4L2 controls (value and range of each, the frame rate). The id \
            is what source.camera takes (a serial, a user id or an IP address work too). With ID and --controls: \
            the camera's controls with their current values and ranges (exposure, gain, frame rate, region, \
            binning, pixel format, trigger). With an rtsp:// or rtsps:// URL as ID: the stream's codec, size and \
            frame rate (an IP camera's settings are its own web page's or ONVIF's, not RTSP's). Exit codes: 0 \
            listed, 1 the camera cannot be opened, 64 bad usage.
            """)

    @Argument(
        help:
            "A GenICam camera (id, serial, user id or address) or a V4L2 device whose controls to show, or an RTSP URL."
    )
    var id: String?
    @Flag(help: "Show the camera's controls (with ID).") var controls = false
    @Option(
        help: ArgumentHelp(
            "With ID: take frames for SECONDS and print what capture costs (frames/s, incomplete frames, CPU per frame).",
            valueName: "SECONDS"))
    var measure: Double?
    @Option(help: "table or json.") var format = "table"
    @Option(
        name: .customLong("tls-ca"),
        help: "An rtsps camera: the CA file (PEM) its certificate must chain to (default: the system's store).")
    var tlsCA: String?
    @Flag(help: "An rtsp camera: answer a Basic challenge over plain rtsp (the password crosses readable).")
    var allowBasicAuth = false
    @Flag(help: .hidden) var fake = false

    func validate() throws {
        guard ["table", "json"].contains(format) else {
            throw ValidationError("--format '\(format)': use table or json")
        }
        if controls && id == nil {
            throw ValidationError("--controls needs a camera ID (scan-agent cameras lists them)")
        }
    }

    func run() throws {
        if let id, id.lowercased().hasPrefix("rtsp") {
            try showStream(id)
            return
        }
        if let id, id.hasPrefix("/dev/") {
            let device: V4L2Device
            do {
                device = try V4L2Device(path: id)
            } catch {
                writeStandardError("scan-agent cameras: cannot open \(TerminalText.escaped(id)): \(error)")
                throw ExitCode.failure
            }
            let capabilities = try? device.capabilities()
            show(
                id: id, vendor: capabilities?.driver ?? "", model: capabilities?.card ?? "", serial: "",
                readings: V4L2Controls.readings(device))
            return
        }
        if let id {
            let camera: GenICamCamera
            do {
                camera = try GenICamCamera(id: id)
            } catch {
                writeStandardError("scan-agent cameras: cannot open \(TerminalText.escaped(id)): \(error)")
                throw ExitCode.failure
            }
            if let measure {
                try measureCapture(camera, seconds: measure)
                return
            }
            show(
                id: id, vendor: camera.vendor, model: camera.model, serial: camera.serial, readings: camera.readings())
            return
        }
        var rows: [[String]] = []
        let devices = (try? FileManager.default.contentsOfDirectory(atPath: "/dev")) ?? []
        for name in devices.filter({ $0.hasPrefix("video") }).sorted() {
            // Driver and card name; a device that is busy or not a camera shows without them.
            let capabilities = try? V4L2Device(path: "/dev/" + name).capabilities()
            rows.append([
                "v4l2", "/dev/" + name, capabilities?.driver ?? "", capabilities?.card ?? "", "", "/dev/" + name,
            ])
        }
        for camera in GenICamDevices.list(fake: fake) {
            rows.append([camera.interface, camera.id, camera.vendor, camera.model, camera.serial, camera.address])
        }
        let columns = ["interface", "id", "vendor", "model", "serial", "address"]
        if format == "json" {
            let items = rows.map { row -> String in
                var writer = JSONWriter()
                for (column, value) in zip(columns, row) { writer.field(column, value) }
                return writer.text
            }
            print("[" + items.joined(separator: ",\n ") + "]")
        } else if rows.isEmpty {
            print("no camera found (V4L2: no /dev/video*; GenICam: none answered on this machine's networks or USB)")
        } else {
            print(table(columns, rows))
        }
    }

    /// One camera's controls, as a table or JSON; what the camera sent is shown escaped.
    func show(id: String, vendor: String, model: String, serial: String, readings: [ControlReading]) {
        if format == "json" {
            let items = readings.map { reading -> String in
                var writer = JSONWriter()
                writer.field("name", reading.name)
                writer.field("value", reading.value)
                writer.field("range", reading.range)
                return writer.text
            }
            var writer = JSONWriter()
            writer.field("id", id)
            writer.field("vendor", vendor)
            writer.field("model", model)
            writer.field("serial", serial)
            writer.raw("controls", Array(("[" + items.joined(separator: ",") + "]").utf8))
            print(writer.text)
        } else {
            print(TerminalText.escaped("\(vendor) \(model)" + (serial.isEmpty ? "" : ", serial \(serial)")))
            print(table(["control", "value", "range"], readings.map { [$0.name, $0.value, $0.range ?? ""] }))
        }
    }

    /// An RTSP camera: its stream's codec, size and frame rate, or (`--measure`) what taking
    /// and decoding its frames costs.
    func showStream(_ url: String) throws {
        let stream: RTSPStream
        do {
            stream = try RTSPStream(
                address: try RTSPAddress(url), policy: RTSPGuardPolicy(allowBasicAuth: allowBasicAuth, tlsCA: tlsCA))
        } catch {
            writeStandardError("scan-agent cameras: cannot open \(TerminalText.escaped(redactedURL(url))): \(error)")
            throw ExitCode.failure
        }
        if let measure {
            try measureCapture(seconds: measure, incomplete: { stream.damaged }) {
                try stream.next()?.image
            }
            return
        }
        if format == "json" {
            var writer = JSONWriter()
            writer.field("url", stream.address.redacted)
            writer.field("codec", stream.codec)
            writer.field("width", stream.width)
            writer.field("height", stream.height)
            writer.field("fps", stream.frameRate, decimals: 2)
            print(writer.text)
        } else {
            print(
                TerminalText.escaped(
                    "\(stream.address.redacted): \(stream.codec) \(stream.width)x\(stream.height), "
                        + "\(JSONWriter.format(stream.frameRate, decimals: 2)) frames/s"))
        }
    }

    /// A URL for an error line: without its password even when it does not parse.
    func redactedURL(_ url: String) -> String {
        if let address = try? RTSPAddress(url) { return address.redacted }
        guard let at = url.lastIndex(of: "@"), let scheme = url.range(of: "://") else { return url }
        return String(url[..<scheme.upperBound]) + "***" + String(url[at...])
    }

    /// Takes a GenICam camera's frames for `seconds`; see the other `measureCapture`.
    func measureCapture(_ camera: GenICamCamera, seconds: Double) throws {
        let stream: GenICamStream
        do {
            stream = try GenICamStream(camera: camera)
        } catch {
            writeStandardError("scan-agent cameras: \(error)")
            throw ExitCode.failure
        }
        try measureCapture(seconds: seconds, incomplete: { stream.incomplete }) {
            try stream.next(timeoutMicroseconds: 500_000)?.image
        }
    }

    /// Takes frames from `next` for `seconds` on this thread and prints what capture cost: the
    /// thread's CPU time per frame (a library's own receiving threads are counted in the process
    /// time beside it).
    func measureCapture(seconds: Double, incomplete: () -> Int, next: () throws -> GrayImage?) throws {
        func cpu(_ clock: clockid_t) -> Double {
            var time = timespec()
            clock_gettime(clock, &time)
            return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
        }
        var frames = 0
        var size = (0, 0)
        let started = ContinuousClock.now
        let threadStart = cpu(CLOCK_THREAD_CPUTIME_ID)
        let processStart = cpu(CLOCK_PROCESS_CPUTIME_ID)
        while ContinuousClock.now - started < .seconds(seconds) {
            let image: GrayImage?
            do {
                image = try next()
            } catch {
                writeStandardError("scan-agent cameras: \(error)")
                if frames == 0 { throw ExitCode.failure }
                break  // what was taken until then is measured
            }
            guard let image else { continue }
            frames += 1
            size = (image.width, image.height)
        }
        let wall =
            (ContinuousClock.now - started).seconds
        let thread = cpu(CLOCK_THREAD_CPUTIME_ID) - threadStart
        let process = cpu(CLOCK_PROCESS_CPUTIME_ID) - processStart
        let perFrame = frames > 0 ? thread / Double(frames) * 1e6 : 0
        let processPerFrame = frames > 0 ? process / Double(frames) * 1e6 : 0
        if format == "json" {
            var writer = JSONWriter()
            writer.field("width", size.0)
            writer.field("height", size.1)
            writer.field("frames", frames)
            writer.field("incomplete", incomplete())
            writer.field("fps", Double(frames) / wall, decimals: 1)
            writer.field("captureMicrosecondsPerFrame", perFrame, decimals: 1)
            writer.field("processMicrosecondsPerFrame", processPerFrame, decimals: 1)
            print(writer.text)
        } else {
            print(
                "\(size.0)x\(size.1): \(frames) frames in \(JSONWriter.format(wall, decimals: 1)) s "
                    + "(\(JSONWriter.format(Double(frames) / wall, decimals: 1)) frames/s), \(incomplete()) incomplete; "
                    + "capture \(JSONWriter.format(perFrame, decimals: 1)) µs a frame on this thread, "
                    + "\(JSONWriter.format(processPerFrame, decimals: 1)) µs for the whole process")
        }
    }

    /// An aligned table; cells that came from a camera are shown escaped.
    func table(_ columns: [String], _ rows: [[String]]) -> String {
        let cells = rows.map { $0.map(TerminalText.escaped) }
        var widths = columns.map(\.count)
        for row in cells { for (index, cell) in row.enumerated() { widths[index] = max(widths[index], cell.count) } }
        func line(_ row: [String]) -> String {
            row.enumerated().map { index, cell in
                index == row.count - 1 ? cell : cell.padding(toLength: widths[index], withPad: " ", startingAt: 0)
            }.joined(separator: "  ")
        }
        return ([line(columns.map { $0.uppercased() })] + cells.map(line)).joined(separator: "\n")
    }
}
