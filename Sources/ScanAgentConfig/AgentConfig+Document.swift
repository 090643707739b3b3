import ScanCore
import ScanVision

extension AgentConfig {
    /// The config as a document in the file's own keys, every setting there with its value after
    /// the defaults (`scan-agent config show`): `parse` reads it back to an equal config, except
    /// that a password in `source.url` is shown as `***`. Settings with no value and no default
    /// (a rules file, a TLS CA) are left out.
    public var document: JSONValue {
        var top: [(String, JSONValue)] = [
            (
                "camera",
                .object(
                    [("id", .string(camera.id)), ("site", .string(camera.site))]
                        + [
                            camera.lane.map { ("lane", .string($0)) }, camera.station.map { ("station", .string($0)) },
                        ].compactMap { $0 })
            ),
            ("source", source.document),
            ("decoder", Self.document(decoder)),
            (
                "tracking",
                .object([
                    ("maxMissedFrames", .int(tracking.maxMissedFrames)), ("minDecodes", .int(tracking.minDecodes)),
                    ("updateIntervalMs", .int(tracking.updateIntervalMilliseconds)),
                ])
            ),
            (
                "noread",
                .object(
                    [
                        ("enabled", .bool(noread.enabled)), ("minFrames", .int(noread.minFrames)),
                        ("maxImages", .int(noread.maxImages)), ("maxImageBytes", .int(noread.maxImageBytes)),
                    ] + [noread.imageDir.map { ("imageDir", .string($0)) }].compactMap { $0 })
            ),
            ("session", session.document),
            (
                "grouping",
                .object([
                    ("enabled", .bool(grouping.enabled)), ("maxGapPixels", .int(grouping.maxGapPixels)),
                    ("velocityTolerance", .number(grouping.velocityTolerance)),
                    ("require", .array(grouping.require.map { .string($0.name) })),
                ])
            ),
            ("decision", decision.document),
            ("nats", nats.document),
            (
                "spool",
                .object([
                    ("dir", .string(spool.dir)), ("maxBytes", .int(spool.maxBytes)),
                    ("whenFull", .string(spool.whenFull.rawValue)),
                ])
            ),
            ("images", images.document),
            ("heartbeatSeconds", .number(heartbeat.seconds)),
        ]
        if let rulesFile { top.append(("rules", .string(rulesFile))) }
        if let metricsListen { top.append(("metrics", .object([("listen", .string(metricsListen))]))) }
        if let logLevel { top.append(("logLevel", .string(logLevel))) }
        return .object(top)
    }

    private static func document(_ decoder: DecoderConfig) -> JSONValue {
        var members: [(String, JSONValue)] = [
            ("mode", .string(decoder.mode.rawValue)),
            ("symbologies", .array(decoder.symbologies.map { .string($0.rawValue) })),
            ("density", .int(decoder.density)),
        ]
        if let threads = decoder.threads { members.append(("threads", .int(threads))) }
        let region = decoder.regionOfInterest
        members += [
            (
                "regionOfInterest",
                .object([
                    ("x", .number(region.x)), ("y", .number(region.y)), ("width", .number(region.width)),
                    ("height", .number(region.height)),
                ])
            ),
            ("upcAsEAN13", .bool(decoder.upcAsEAN13)), ("zxingEveryNthFrame", .int(decoder.zxingEveryNthFrame)),
            ("secondOpinion", .bool(decoder.secondOpinion)),
            ("zxingSweep", .array(decoder.zxingSweep.map { .string($0.rawValue) })),
            ("sweepFrames", .int(decoder.sweepFrames)), ("sweepDensity", .int(decoder.sweepDensity)),
            ("sweepOverlap", .int(decoder.sweepOverlap)), ("trackedDensity", .int(decoder.trackedDensity)),
            ("trackedEngine", .string(decoder.trackedEngine.rawValue)),
            ("sweepEngine", .string(decoder.sweepEngine.rawValue)),
        ]
        return .object(members)
    }
}

extension SourceConfig {
    var document: JSONValue {
        var members: [(String, JSONValue)] = [("type", .string(kind.rawValue))]
        switch kind {
        case .v4l2:
            members += [
                ("device", .string(device)), ("width", .int(width)), ("height", .int(height)), ("fps", .int(fps)),
            ]
        case .clip:
            members += [path.map { ("path", .string($0)) }].compactMap { $0 }
            members += [("realtime", .bool(realtime)), ("dropLate", .bool(dropLate))]
            members += [startAt.map { ("startAt", .string($0.description)) }].compactMap { $0 }
        case .genicam:
            members += [camera.map { ("camera", .string($0)) }].compactMap { $0 }
            if !expect.isEmpty {
                let fields = [("vendor", expect.vendor), ("model", expect.model), ("serial", expect.serial)]
                members.append(
                    ("expect", .object(fields.compactMap { name, value in value.map { (name, .string($0)) } })))
            }
        case .rtsp:
            members += [url.map { ("url", .string($0.redacted)) }].compactMap { $0 }
            members.append(("transport", .string(transport)))
            members += [passwordFile.map { ("passwordFile", .string($0)) }].compactMap { $0 }
            if allowBasicAuth { members.append(("allowBasicAuth", .bool(true))) }
            if let tlsCA { members.append(("tls", .object([("ca", .string(tlsCA))]))) }
        }
        if !controls.isEmpty { members.append(("controls", controls.document)) }
        members.append(("queueFrames", .int(queueFrames)))
        return .object(members)
    }
}

extension CameraControls {
    var document: JSONValue {
        var members: [(String, JSONValue)] = []
        if let exposureMicroseconds { members.append(("exposureMicroseconds", .number(exposureMicroseconds))) }
        members.append(("exposureAuto", .bool(exposureAuto)))
        if let gainDecibels { members.append(("gainDecibels", .number(gainDecibels))) }
        if let frameRate { members.append(("frameRate", .number(frameRate))) }
        if let focus { members.append(("focus", .number(focus))) }
        members.append(("focusAuto", .bool(focusAuto)))
        if let pixelFormat { members.append(("pixelFormat", .string(pixelFormat))) }
        if let region {
            members.append(
                (
                    "region",
                    .object([
                        ("x", .int(region.x)), ("y", .int(region.y)), ("width", .int(region.width)),
                        ("height", .int(region.height)),
                    ])
                ))
        }
        if let binning {
            members.append(
                ("binning", .object([("horizontal", .int(binning.horizontal)), ("vertical", .int(binning.vertical))])))
        }
        switch trigger {
        case nil: break
        case .freeRun: members.append(("trigger", .string("freeRun")))
        case .software: members.append(("trigger", .string("software")))
        case .line(let line, let rising):
            members.append(
                ("trigger", .object([("line", .string(line)), ("edge", .string(rising ? "rising" : "falling"))])))
        }
        if !features.isEmpty { members.append(("features", .object(features.map { ($0.name, $0.value) }))) }
        if !allowDangerousFeatures.isEmpty {
            members.append(("allowDangerousFeatures", .array(allowDangerousFeatures.map { .string($0) })))
        }
        members.append(("clampOutOfRange", .bool(clampOutOfRange)))
        return .object(members)
    }
}

extension SessionConfig {
    var document: JSONValue {
        var members: [(String, JSONValue)] = [("start", .string(start.rawValue))]
        if let stopAfterCodes { members.append(("stopAfterCodes", .int(stopAfterCodes))) }
        if let stopAfter { members.append(("stopAfterSeconds", .number(stopAfter.seconds))) }
        if let stopAfterIdle { members.append(("stopAfterIdleSeconds", .number(stopAfterIdle.seconds))) }
        members.append(("startDelaySeconds", .number(startDelay.seconds)))
        return .object(members)
    }
}

extension DecisionConfig {
    var document: JSONValue {
        var members: [(String, JSONValue)] = [
            ("enabled", .bool(enabled)), ("deadlineMs", .int(deadlineMilliseconds)),
        ]
        if let beltSpeed { members.append(("beltSpeed", .number(beltSpeed))) }
        if let divertDistance { members.append(("divertDistance", .number(divertDistance))) }
        members.append(
            ("divertOn", .array(DecisionReason.allCases.filter(divertOn.contains).map { .string($0.rawValue) })))
        members.append(("beltFromBus", .bool(beltFromBus)))
        if let pulsesPerMetre { members.append(("pulsesPerMetre", .number(pulsesPerMetre))) }
        members.append(("beltStaleMs", .int(beltStaleMilliseconds)))
        return .object(members)
    }
}

extension NATSConfig {
    var document: JSONValue {
        var members: [(String, JSONValue)] = [("url", .string(url)), ("prefix", .string(prefix))]
        let optional: [(String, String?)] = [
            ("credsFile", credsFile), ("nkeySeedFile", nkeySeedFile), ("inboxPrefix", inboxPrefix), ("user", user),
            ("passwordFile", passwordFile), ("tokenFile", tokenFile),
        ]
        if let replicas { members.append(("replicas", .int(replicas))) }
        members += optional.compactMap { name, value in value.map { (name, .string($0)) } }
        let tls: [(String, JSONValue)] = [("ca", tlsCA), ("cert", tlsCert), ("key", tlsKey)].compactMap { name, value in
            value.map { (name, .string($0)) }
        }
        if !tls.isEmpty { members.append(("tls", .object(tls))) }
        return .object(members)
    }
}

extension JSONValue {
    fileprivate static func int(_ value: Int) -> JSONValue { .number(Double(value)) }
}
