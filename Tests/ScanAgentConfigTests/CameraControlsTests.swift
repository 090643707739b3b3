import ScanTestTiming
import Testing

@testable import ScanCore
@testable import ScanAgentConfig

/// `source.controls` of a `genicam` source: read by path, refused by path.
@Suite("camera controls in the agent config", .timed)
struct CameraControlsTests {
    @Test("a genicam source with every control is read as written")
    func reads() throws {
        let config = try AgentConfig.parse(
            Array(
                #"""
                {"camera": {"id": "cam-1"}, "source": {"type": "genicam", "camera": "Basler-40012345", "controls": {
                  "exposureMicroseconds": 80, "gainDecibels": 6.5, "frameRate": 60, "pixelFormat": "Mono8",
                  "region": {"x": 16, "y": 8, "width": 1920, "height": 600}, "binning": {"horizontal": 2, "vertical": 2},
                  "trigger": {"line": "Line1", "edge": "falling"}, "features": {"BalanceWhiteAuto": "Off", "GevSCPD": 1000},
                  "clampOutOfRange": true}}}
                """#.utf8), file: "a.json")
        #expect(config.source.kind == .genicam && config.source.camera == "Basler-40012345")
        let controls = config.source.controls
        #expect(controls.exposureMicroseconds == 80 && controls.gainDecibels == 6.5 && controls.frameRate == 60)
        #expect(controls.region == CameraControls.Region(x: 16, y: 8, width: 1920, height: 600))
        #expect(controls.binning?.horizontal == 2 && controls.trigger == .line("Line1", rising: false))
        #expect(controls.features.map(\.name) == ["BalanceWhiteAuto", "GevSCPD"] && controls.clampOutOfRange)
        let software = try AgentConfig.parse(
            Array(#"{"camera": {"id": "c"}, "source": {"type": "genicam", "controls": {"trigger": "software"}}}"#.utf8),
            file: "b.json")
        #expect(software.source.controls.trigger == .software && software.source.camera == nil)
        let focused = try AgentConfig.parse(
            Array(#"{"camera": {"id": "c"}, "source": {"type": "v4l2", "controls": {"focus": 120}}}"#.utf8),
            file: "c.json")
        #expect(focused.source.controls.focus == 120 && !focused.source.controls.focusAuto)
    }

    @Test("source.expect names the vendor, model and serial the opened camera must report; unknown keys are refused")
    func expectedCamera() throws {
        let config = try AgentConfig.parse(
            Array(
                #"{"camera": {"id": "c"}, "source": {"type": "genicam", "camera": "10.0.0.7", "expect": {"vendor": "Basler", "serial": "40012345"}}}"#
                    .utf8), file: "a.json")
        #expect(config.source.expect == ExpectedCamera(vendor: "Basler", serial: "40012345"))
        let wrong = config.source.expect.mismatches(vendor: "Basler", model: "acA1920", serial: "666")
        #expect(wrong.map(\.0) == ["serial"] && wrong.first?.2 == "666", "\(wrong)")
        #expect(config.source.expect.mismatches(vendor: "Basler", model: "any", serial: "40012345").isEmpty)
        #expect(ExpectedCamera().mismatches(vendor: "x", model: "y", serial: "z").isEmpty)
        #expect(try AgentConfig.parse(Array(config.document.serialized.utf8), file: "b.json") == config)
        do {
            _ = try AgentConfig.parse(
                Array(#"{"camera": {"id": "c"}, "source": {"type": "genicam", "expect": {"mac": "00:11"}}}"#.utf8),
                file: "c.json")
            Issue.record("an unknown source.expect key was accepted")
        } catch {
            #expect(error.issues.map(\.path) == ["source.expect.mac"], "\(error)")
        }
    }

    @Test(
        "features that reset, reflash, touch files or persistent network settings are refused by path unless allowDangerousFeatures names them; the allowance is written back"
    )
    func dangerousFeatures() throws {
        func parse(_ controls: String) throws -> AgentConfig {
            try AgentConfig.parse(
                Array(#"{"camera": {"id": "c"}, "source": {"type": "genicam", "controls": \#(controls)}}"#.utf8),
                file: "a.json")
        }
        for name in [
            "DeviceReset", "DeviceFactoryReset", "DeviceFirmwareVersion", "FileOperationExecute", "FileAccessBuffer",
            "UserSetSave", "UserSetDefault", "DeviceUserID", "GevPersistentIPAddress",
            "GevCurrentIPConfigurationPersistentIP", "devicereset",
        ] {
            do {
                _ = try parse(#"{"features": {"\#(name)": 1}}"#)
                Issue.record("\(name) was accepted")
            } catch let error as ConfigErrors {
                #expect(error.issues.map(\.path) == ["source.controls.features.\(name)"], "\(error)")
                #expect(error.description.contains("allowDangerousFeatures"), "\(error)")
            } catch {
                Issue.record("\(name): \(error)")
            }
        }
        // Ordinary features pass; a dangerous one named in the allowance too, and it reads back.
        let allowed = try parse(
            #"{"features": {"GevSCPD": 1000, "UserSetSave": "Execute"}, "allowDangerousFeatures": ["UserSetSave"]}"#)
        #expect(allowed.source.controls.features.map(\.name) == ["GevSCPD", "UserSetSave"])
        let again = try AgentConfig.parse(Array(allowed.document.serialized.utf8), file: "b.json")
        #expect(again.source.controls == allowed.source.controls)
        #expect(!CameraControls.isDangerous("ExposureTime") && !CameraControls.isDangerous("LineSource"))
    }

    @Test("a set-controls change is applied alone now, and merged into the controls applied at every reconnect")
    func changed() {
        var config = CameraControls()
        config.exposureMicroseconds = 80
        config.gainDecibels = 6
        config.features = [("GevSCPD", .number(1000))]
        var change = CameraControls()
        change.exposureMicroseconds = 60
        change.focus = 40
        change.region = .init(x: 0, y: 100, width: 640, height: 200)
        let (now, merged) = config.changed(by: change)
        #expect(now.exposureMicroseconds == 60 && now.focus == 40 && now.gainDecibels == nil)
        #expect(now.region == nil && now.features.isEmpty, "a region restarts the stream; features stay as they are")
        #expect(merged.exposureMicroseconds == 60 && merged.gainDecibels == 6 && merged.focus == 40)
        #expect(merged.region == change.region && merged.features.count == 1)
        // Light and strobe live: features set now, in the order given; one named again keeps its
        // place with its new value.
        var light = CameraControls()
        light.features = [
            ("LineSelector", .string("Line2")), ("GevSCPD", .number(500)), ("LineSource", .string("ExposureActive")),
        ]
        let (lightNow, lightMerged) = merged.changed(by: light)
        #expect(lightNow.features.map(\.name) == ["LineSelector", "GevSCPD", "LineSource"])
        #expect(lightMerged.features.map(\.name) == ["GevSCPD", "LineSelector", "LineSource"])
        #expect(lightMerged.features.first?.value == .number(500))
    }

    @Test("a bad control is refused by its path")
    func refuses() {
        let text = #"""
            {"camera": {"id": "c"}, "source": {"type": "genicam", "controls": {"exposureMicroseconds": 0,
              "gain": 3, "region": {"x": 1}, "trigger": "sometimes", "features": {"Nested": {"a": 1}}}}}
            """#
        let errors = #expect(throws: ConfigErrors.self) { try AgentConfig.parse(Array(text.utf8), file: "c.json") }
        let paths = Set(errors?.issues.map(\.path) ?? [])
        #expect(
            paths == [
                "source.controls.exposureMicroseconds", "source.controls.gain", "source.controls.region",
                "source.controls.trigger", "source.controls.features.Nested",
            ], "\(errors?.description ?? "")")
    }
}
