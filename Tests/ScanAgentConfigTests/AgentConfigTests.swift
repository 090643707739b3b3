import ScanTestTiming
import Testing

@testable import ScanCore
@testable import ScanAgentConfig
@testable import ScanVision

@Suite("agent config", .timed)
struct AgentConfigTests {
    @Test("the design's example parses with its values; everything else has defaults")
    func example() throws {
        let text = """
            {"camera": {"id": "cam-07", "site": "dc1", "lane": "L3", "station": "pack-12"},
             "source": {"type": "v4l2", "device": "/dev/video0", "width": 1280, "height": 720, "fps": 30},
             "decoder": {"symbologies": ["EAN-13", "CODE-128", "QR-Code"], "density": 2,
                         "regionOfInterest": {"x": 0.0, "y": 0.1, "width": 1.0, "height": 0.8}},
             "tracking": {"maxMissedFrames": 10, "minDecodes": 2},
             "session": {"start": "continuous", "stopAfterCodes": 3, "stopAfterSeconds": 10,
                         "stopAfterIdleSeconds": 2, "startDelaySeconds": 0},
             "nats": {"url": "nats://127.0.0.1:4222"},
             "spool": {"dir": "/var/lib/scantrack/cam-07", "maxBytes": 1073741824}}
            """
        let config = try AgentConfig.parse(Array(text.utf8), file: "agent.json")
        #expect(config.camera == CameraIdentity(id: "cam-07", site: "dc1", lane: "L3", station: "pack-12"))
        #expect(config.decoder.symbologies == [.ean13, .code128, .qrCode])
        #expect(config.decoder.regionOfInterest == RegionOfInterest(x: 0, y: 0.1, width: 1, height: 0.8))
        #expect(config.session.stopAfterCodes == 3)
        #expect(config.session.stopAfter == .seconds(10) && config.session.stopAfterIdle == .seconds(2))
        #expect(config.session.startDelay == .zero && config.heartbeat == .seconds(5))
        #expect(config.spool.maxBytes == 1 << 30)

        let minimal = try AgentConfig.parse(Array(#"{"camera": {"id": "c1"}}"#.utf8), file: "min.json")
        #expect(minimal.camera.site == "default")
        #expect(minimal.decoder.density == 2)
        #expect(minimal.tracking == TrackingConfig())
        #expect(minimal.spool.dir == "/var/lib/scantrack/c1")
    }

    @Test(
        "nats.credsFile, nats.nkeySeedFile and nats.tls name files; a certificate without its key is refused; an inbox prefix is a subject without wildcards"
    )
    func natsSecurityFiles() throws {
        let config = try AgentConfig.parse(
            Array(
                #"""
                {"camera": {"id": "cam-01"}, "source": {"type": "v4l2", "device": "/dev/video0"},
                 "nats": {"url": "tls://nats1:4222", "credsFile": "/etc/scantrack/cam-01.creds",
                          "tls": {"ca": "/etc/scantrack/ca.pem", "cert": "/etc/scantrack/cam-01.pem", "key": "/etc/scantrack/cam-01.key"}}}
                """#.utf8), file: "c.json")
        #expect(config.nats.credsFile == "/etc/scantrack/cam-01.creds")
        #expect(config.nats.tlsCA == "/etc/scantrack/ca.pem" && config.nats.tlsKey == "/etc/scantrack/cam-01.key")
        #expect(config.nats.inboxPrefix == nil, "the agent's own default applies")
        let prefixed = try AgentConfig.parse(
            Array(
                #"{"camera": {"id": "c"}, "source": {"type": "v4l2", "device": "/dev/video0"}, "nats": {"inboxPrefix": "_INBOX.dc1.c"}}"#
                    .utf8), file: "c.json")
        #expect(prefixed.nats.inboxPrefix == "_INBOX.dc1.c")
        do {
            _ = try AgentConfig.parse(
                Array(
                    #"{"camera": {"id": "c"}, "source": {"type": "v4l2", "device": "/dev/video0"}, "nats": {"inboxPrefix": "_INBOX.>", "tls": {"cert": "/c.pem", "ciphers": 1}}}"#
                        .utf8), file: "c.json")
            Issue.record("a certificate without its key was accepted")
        } catch {
            #expect(error.description.contains("nats.tls: cert and key go together"), "\(error)")
            #expect(error.description.contains("nats.tls.ciphers"), "\(error)")
            #expect(
                error.description.contains("nats.inboxPrefix: '_INBOX.>' is not a subject without wildcards"),
                "\(error)")
        }
    }

    @Test("every problem is listed with its JSON path and what is allowed")
    func allErrors() {
        let text = """
            {"camera": {"site": "dc1", "colour": "red"},
             "source": {"type": "usb", "fps": 0},
             "decoder": {"symbologies": ["EAN-13", "telepen"], "density": 1.5, "regionOfInterest": {"x": 0.5, "width": 0.8}},
             "session": {"start": "sometimes"},
             "nats": {"url": "http://x"},
             "extra": 1}
            """
        do {
            _ = try AgentConfig.parse(Array(text.utf8), file: "bad.json")
            Issue.record("a broken config was accepted")
        } catch {
            let paths = error.issues.map(\.path)
            for path in [
                "extra", "camera.colour", "camera.id", "source.type", "source.fps", "decoder.symbologies[1]",
                "decoder.density",
                "decoder.regionOfInterest", "session.start", "nats.url",
            ] {
                #expect(paths.contains(path), "missing an error at \(path): \(paths)")
            }
            #expect(error.description.contains("bad.json: source.type: 'usb' is not one of v4l2, clip"))
            #expect(error.description.contains("'telepen' is not a symbology"))
        }
    }

    @Test("decoder.zxingSweep takes symbologies of decoder.symbologies only, and names the one that is not")
    func sweep() throws {
        let good = try AgentConfig.parse(
            Array(
                #"{"camera": {"id": "c"}, "decoder": {"symbologies": ["QR-Code", "EAN-13"], "zxingSweep": ["QR-Code"]}}"#
                    .utf8),
            file: "good.json")
        #expect(good.decoder.zxingSweep == [.qrCode])
        #expect(
            try AgentConfig.parse(Array(#"{"camera": {"id": "c"}}"#.utf8), file: "min.json").decoder.zxingSweep.isEmpty)
        #expect {
            try AgentConfig.parse(
                Array(
                    #"{"camera": {"id": "c"}, "decoder": {"symbologies": ["QR-Code"], "zxingSweep": ["QR-Code", "EAN-13"]}}"#
                        .utf8),
                file: "sweep.json")
        } throws: { error in
            (error as? ConfigErrors)?.description.contains(
                "sweep.json: decoder.zxingSweep[1]: 'EAN-13' is not in decoder.symbologies") == true
        }
    }

    @Test("decoder.sweepEngine: zxing by default, zbar when asked, anything else named with what is allowed")
    func sweepEngine() throws {
        let parse = { (decoder: String) throws -> AgentConfig in
            try AgentConfig.parse(Array(#"{"camera": {"id": "c"}, "decoder": \#(decoder)}"#.utf8), file: "s.json")
        }
        #expect(try parse("{}").decoder.sweepEngine == .zxing)
        #expect(try parse(#"{"sweepEngine": "zbar"}"#).decoder.sweepEngine == .zbar)
        #expect {
            try parse(#"{"sweepEngine": "opencv"}"#)
        } throws: { error in
            (error as? ConfigErrors)?.description.contains(
                "s.json: decoder.sweepEngine: 'opencv' is not one of zxing, zbar")
                == true
        }
    }

    @Test("source.queueFrames: 2 by default, 1 to 64, and in the printed config")
    func queueFrames() throws {
        let parse = { (source: String) throws -> AgentConfig in
            try AgentConfig.parse(
                Array(#"{"camera": {"id": "c"}, "source": {"type": "clip", "path": "c.y4m"\#(source)}}"#.utf8),
                file: "q.json")
        }
        #expect(try parse("").source.queueFrames == 2)
        let deep = try parse(#", "queueFrames": 4"#)
        #expect(deep.source.queueFrames == 4)
        #expect(try AgentConfig.parse(Array(deep.document.serialized.utf8), file: "printed").source.queueFrames == 4)
        for wrong in ["0", "65", "\"4\""] {
            #expect {
                try parse(#", "queueFrames": \#(wrong)"#)
            } throws: { error in
                (error as? ConfigErrors)?.description.contains("q.json: source.queueFrames") == true
            }
        }
    }

    @Test(
        "source.startAt: a clip's start as an RFC 3339 time, in the printed config; a bad time or another source is refused"
    )
    func startAt() throws {
        let parse = { (source: String) throws -> AgentConfig in
            try AgentConfig.parse(
                Array(#"{"camera": {"id": "c"}, "source": {\#(source)}}"#.utf8), file: "t.json")
        }
        #expect(try parse(#""type": "clip", "path": "c.y4m""#).source.startAt == nil)
        let timed = try parse(#""type": "clip", "path": "c.y4m", "startAt": "2026-11-28T08:00:01.250Z""#)
        #expect(timed.source.startAt == Timestamp(rfc3339: "2026-11-28T08:00:01.250Z"))
        #expect(
            try AgentConfig.parse(Array(timed.document.serialized.utf8), file: "printed").source.startAt
                == timed.source.startAt)
        for (source, message) in [
            (
                #""type": "clip", "path": "c.y4m", "startAt": "tomorrow\u001b[2J""#,
                #"t.json: source.startAt: 'tomorrow\x1B[2J' is not an RFC 3339 time"#
            ),
            (#""type": "clip", "path": "c.y4m", "startAt": 1764316800"#, "t.json: source.startAt"),
            (
                #""type": "rtsp", "url": "rtsp://cam/s", "startAt": "2026-11-28T08:00:00Z""#,
                "t.json: source.startAt: only for a clip source"
            ),
        ] {
            #expect {
                try parse(source)
            } throws: { error in
                (error as? ConfigErrors)?.description.contains(message) == true
            }
        }
    }

    @Test("not JSON at all says where")
    func notJSON() {
        #expect {
            try AgentConfig.parse(Array("{\"camera\": {\"id\": \"x\"},}".utf8), file: "x.json")
        } throws: { error in
            (error as? ConfigErrors)?.description.contains("line 1") == true
        }
    }

    @Test("a region of interest maps to pixels inside the frame")
    func regionPixels() {
        #expect(
            RegionOfInterest(x: 0, y: 0.1, width: 1, height: 0.8).pixels(width: 1280, height: 720)
                == Box(minX: 0, minY: 72, maxX: 1279, maxY: 647))
        #expect(RegionOfInterest().pixels(width: 10, height: 10) == Box(minX: 0, minY: 0, maxX: 9, maxY: 9))
    }

    @Test("spool.whenFull chooses the policy at the limit; the site must be one subject token")
    func spoolPolicyAndSite() throws {
        let config = try AgentConfig.parse(
            Array(#"{"camera": {"id": "c1", "site": "dc-1"}, "spool": {"whenFull": "dropNewest"}}"#.utf8),
            file: "a.json")
        #expect(config.spool.whenFull == .dropNewest)
        #expect(
            try AgentConfig.parse(Array(#"{"camera": {"id": "c1"}}"#.utf8), file: "a.json").spool.whenFull
                == .dropOldest)
        do {
            _ = try AgentConfig.parse(
                Array(#"{"camera": {"id": "c1", "site": "dc.1"}, "spool": {"whenFull": "wait"}}"#.utf8), file: "b.json")
            Issue.record("accepted a dotted site and an unknown policy")
        } catch {
            #expect(error.issues.map(\.path).sorted() == ["camera.site", "spool.whenFull"])
            #expect(error.description.contains("dropOldest"))
        }
    }

    @Test("a cluster is its servers' URLs separated by commas; replicas are 1 to 5")
    func clusterURLs() throws {
        let urls = "nats://n1:4222,nats://n2:4222,tls://n3:4222"
        let config = try AgentConfig.parse(
            Array(#"{"camera": {"id": "c1"}, "nats": {"url": "\#(urls)", "replicas": 3}}"#.utf8), file: "a.json")
        #expect(config.nats.url == urls)
        #expect(config.nats.replicas == 3)
        #expect(try AgentConfig.parse(Array(#"{"camera": {"id": "c1"}}"#.utf8), file: "a.json").nats.replicas == nil)
        do {
            _ = try AgentConfig.parse(
                Array(#"{"camera": {"id": "c1"}, "nats": {"url": "nats://n1:4222,n2:4222", "replicas": 7}}"#.utf8),
                file: "b.json")
            Issue.record("accepted a server without a scheme and 7 replicas")
        } catch {
            #expect(error.issues.map(\.path).sorted() == ["nats.replicas", "nats.url"])
            #expect(error.description.contains("'n2:4222' is not a NATS URL"))
        }
    }

    @Test("metrics.listen is HOST:PORT (IPv6 in brackets, port 0 allowed); off when absent; a bad one is named")
    func metricsListen() throws {
        func parse(_ metrics: String) throws(ConfigErrors) -> AgentConfig {
            try AgentConfig.parse(Array(#"{"camera": {"id": "c1"}\#(metrics)}"#.utf8), file: "m.json")
        }
        #expect(try parse("").metricsListen == nil)
        #expect(try parse(#", "metrics": {"listen": "127.0.0.1:9464"}"#).metricsListen == "127.0.0.1:9464")
        #expect(try parse(#", "metrics": {"listen": "[::1]:0"}"#).metricsListen == "[::1]:0")
        for bad in [#""9464""#, #"":9464""#, #""host:99999""#, #""host""#, "9464"] {
            do {
                _ = try parse(#", "metrics": {"listen": \#(bad)}"#)
                Issue.record("accepted \(bad)")
            } catch {
                #expect(error.issues.map(\.path) == ["metrics.listen"], "\(bad)")
            }
        }
        do {
            _ = try parse(#", "metrics": {"port": 9464}"#)
            Issue.record("accepted metrics.port")
        } catch {
            #expect(error.issues.map(\.path) == ["metrics.port"])
        }
    }
}
