import ScanAgentConfig
import ScanCore
import ScanEvents
import ScanMedia
import ScanReconciliation
import ScanRules

/// The inputs ScanTrack reads from outside, as entry points for fuzzing (`make fuzz` runs them
/// under libFuzzer, scripts/fuzz/) and for the regression test that replays the fuzzers' corpus:
/// each hands arbitrary bytes to one reader, which must return or throw, never crash, and checks
/// what must hold whatever the input.
public enum FuzzTarget: String, CaseIterable, Sendable {
    /// Every subject the aggregator consumes: sightings, session events, no-reads, heartbeats, tracks.
    case events
    case agentConfig = "agent-config"
    case ruleset
    /// A pattern (first line) and a text (the rest): the ASCII table and the NFA must agree.
    case regex
    /// A Y4M stream header, a PGM image and a BMP image.
    case clipHeaders = "clip-headers"
    /// A whole Y4M clip, read frame by frame as the agent reads a clip file.
    case clip
    /// An agent command: verb (first line) and body.
    case commands
    case topology
    /// What a lane's PLC, scales and WMS send, a message a line: belt readings (speeds and encoder
    /// counts, folded into the belt's speed and a divert point), measurements and orders.
    case laneInputs = "lane-inputs"

    public func run(_ bytes: [UInt8]) {
        switch self {
        case .events: Self.events(bytes)
        case .agentConfig: _ = try? AgentConfig.parse(bytes, file: "fuzz.json")
        case .ruleset:
            guard let ruleset = try? Ruleset.parse(bytes, file: "fuzz.json") else { return }
            for value in ["4006381333931", "", "LANE-1", String(decoding: bytes.prefix(64), as: UTF8.self)] {
                _ = ruleset.evaluate(
                    RuleSubject(
                        value: value, symbology: .ean13, camera: CameraIdentity(id: "cam-1", site: "dc1", lane: "L1"),
                        time: Timestamp(milliseconds: 1_795_800_000_000)))
            }
        case .regex:
            let (head, rest) = Self.firstLine(bytes)
            guard let regex = try? LinearRegex(String(decoding: head, as: UTF8.self)) else { return }
            let text = String(decoding: rest, as: UTF8.self)
            if regex.matches(text) != regex.nfaMatches(text) {
                fatalError("/\(regex.pattern)/ on \(text.debugDescription): the ASCII table and the NFA disagree")
            }
        case .clipHeaders:
            _ = try? Y4MHeader.parse(Self.firstLine(bytes).head)
            _ = try? PGM.parse(bytes)
            _ = try? BMP.parse(bytes)
        case .clip: Self.clip(bytes)
        case .commands:
            let (verb, body) = Self.firstLine(bytes)
            _ = AgentCommand.parse(verb: String(decoding: verb, as: UTF8.self), body: body)
        case .topology: _ = try? Topology.parse(bytes, file: "fuzz.json")
        case .laneInputs: Self.laneInputs(bytes)
        }
    }

    /// Each line as the agent reads a belt reading (then the lane's speed from all so far, and the
    /// divert point 3 m on at it, which must be nil or no earlier than the last read) and as the
    /// aggregator reads a measurement and an order.
    static func laneInputs(_ bytes: [UInt8]) {
        var belt = BeltSpeed(pulsesPerMetre: 500, staleMilliseconds: 1_000)
        let lastSeen = Timestamp(milliseconds: 1_795_800_000_000)
        for line in bytes.split(separator: UInt8(ascii: "\n")).prefix(64) {
            let message = Array(line)
            if let reading = try? BeltReading.parse(message) {
                belt.add(reading, arrived: reading.time)
                let speed = belt.speed(at: reading.time)
                if let at = DecisionEvent.divertPoint(lastSeen: lastSeen, distance: 3, speed: speed), at < lastSeen {
                    fatalError("a divert point before the parcel's last read at \(String(describing: speed)) m/s")
                }
            }
            guard let event = try? EventValidator.parse(message) else { continue }
            _ = try? MeasureEvent.parse(event)
            _ = try? OrderMessage.parse(event)
        }
    }

    /// Reads every frame (at most 1,000) of a clip held in memory; a frame read has the header's
    /// size. Headers of frames larger than 1 MiB are only parsed: the input (64 KiB at most
    /// under `make fuzz`) could not complete one, and allocating 16384² pixels per run would
    /// only slow the fuzzer down.
    static func clip(_ bytes: [UInt8]) {
        guard var stream = try? Y4MStream(source: MemoryClipBytes(bytes)), stream.header.frameBytes <= 1 << 20
        else { return }
        var image = GrayImage(width: 0, height: 0, pixels: [])
        while stream.framesRead < 1_000, (try? stream.readFrame(into: &image)) == true {
            if image.width != stream.header.width || image.height != stream.header.height {
                fatalError(
                    "frame \(stream.framesRead): \(image.width)×\(image.height) read from a \(stream.header) clip")
            }
        }
    }

    /// The bytes up to the first newline, and after it.
    static func firstLine(_ bytes: [UInt8]) -> (head: [UInt8], rest: [UInt8]) {
        guard let newline = bytes.firstIndex(of: 0x0A) else { return (bytes, []) }
        return (Array(bytes[..<newline]), Array(bytes[(newline + 1)...]))
    }

    /// As the aggregator reads an agent message: size, JSON, the type's reader, then the sender
    /// check against the subject the event's own site and camera give (which must pass).
    static func events(_ bytes: [UInt8]) {
        guard let event = try? EventValidator.parse(bytes, maxBytes: EventValidator.maxNoReadBytes) else { return }
        var sender: (family: SubjectFamily, site: String, camera: String)?
        if let sighting = try? SightingEvent.parse(event) {
            sender = (.sighting, sighting.site, sighting.camera)
        } else if let session = try? SessionEvent.parse(event) {
            sender = (.session, session.envelope.site, session.envelope.camera)
        } else if let noRead = try? NoReadEvent.parse(event) {
            sender = (.noread, noRead.site, noRead.camera)
        } else if let status = try? StatusEvent.parse(event) {
            sender = (.status, status.site, status.camera)
        } else if let track = try? TrackEvent.parse(event) {
            sender = (.track, track.envelope.site, track.envelope.camera)
        }
        guard let sender else { return }
        let subjects = ContractSubjects()
        // Parsing accepted the event, so its site and camera are tokens and its own subject builds.
        guard let subject = try? subjects.agent(sender.family, site: sender.site, camera: sender.camera) else {
            fatalError("a parsed event's site or camera is not a subject token")
        }
        let tokenSafe = { (name: String) in SubjectToken.isValid(name) }
        let accepted =
            (try? EventValidator.checkSender(
                site: sender.site, camera: sender.camera, subject: subject, family: sender.family, subjects: subjects))
            != nil
        if tokenSafe(sender.site) && tokenSafe(sender.camera) && !accepted {
            fatalError("an event on its own subject \(subject) was refused")
        }
        if accepted && !(tokenSafe(sender.site) && tokenSafe(sender.camera)) {
            fatalError("an event whose site or camera is not a subject token was accepted on \(subject)")
        }
    }
}
