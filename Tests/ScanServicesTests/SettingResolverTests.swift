import Logging
import ScanServices
import ScanTestTiming
import Testing

@Suite("settings: flag, then environment, then file", .timed)
struct SettingResolverTests {
    @Test("the first given and non-empty level wins, and says where it came from")
    func order() throws {
        let resolver = SettingResolver(
            environment: ["SCANTRACK_PG": "host=env", "EMPTY": ""], file: ["pg": "host=file", "nats": "nats://file"])
        let flag = try #require(resolver.string(flag: ("pg", "host=flag"), variable: "SCANTRACK_PG", key: "pg"))
        #expect(flag == ("host=flag", .flag("pg")) && flag.origin.description == "--pg")
        let environment = try #require(resolver.string(flag: ("pg", nil), variable: "SCANTRACK_PG", key: "pg"))
        #expect(environment == ("host=env", .environment("SCANTRACK_PG")))
        let file = try #require(resolver.string(flag: ("pg", ""), variable: "EMPTY", key: "pg"))
        #expect(file == ("host=file", .file("pg")) && file.origin.description == #"the config file's "pg""#)
        #expect(resolver.string(variable: "NONE", key: "missing") == nil)
        #expect(resolver.string(variable: "EMPTY") == nil, "an empty variable is not a value")
    }

    @Test(
        "NATS: flag, SCANTRACK_NATS, NATS_URL, file; PostgreSQL: flag, SCANTRACK_PG, file, then libpq's own variables (the empty string)"
    )
    func connections() throws {
        let both = SettingResolver(
            environment: ["SCANTRACK_NATS": "nats://scantrack", "NATS_URL": "nats://generic", "PGHOST": "db"],
            file: ["nats": "nats://file", "pg": "host=file"])
        #expect(both.nats(flag: ("nats", "nats://flag"), key: "nats")?.value == "nats://flag")
        #expect(both.nats(flag: ("nats", nil), key: "nats")?.value == "nats://scantrack")
        let generic = SettingResolver(environment: ["NATS_URL": "nats://generic"], file: ["nats": "nats://file"])
        #expect(
            generic.nats(flag: ("nats", nil), key: "nats") ?? ("", .fallback) == (
                "nats://generic", .environment("NATS_URL")
            ))
        #expect(
            SettingResolver(environment: [:], file: ["nats": "nats://file"]).nats(flag: ("nats", nil), key: "nats")?
                .value == "nats://file")
        #expect(both.postgres(flag: ("pg", nil), key: "pg")?.value == "host=file")
        let libpq = try #require(SettingResolver(environment: ["PGSERVICE": "scantrack"]).postgres(flag: ("pg", nil)))
        #expect(libpq == ("", .environment("PGSERVICE")))
        #expect(SettingResolver(environment: ["PGHOST": ""]).postgres(flag: ("pg", nil)) == nil)
        #expect(
            SettingResolver(environment: ["SCANTRACK_PG": "host=x", "PGHOST": "db"]).postgres(flag: ("pg", nil))?.value
                == "host=x")
    }

    @Test("numbers: a flag's as given; an environment or file value that is not a number is an error naming its origin")
    func numbers() throws {
        let resolver = SettingResolver(environment: ["REPLICAS": "three", "DAYS": "7"], file: ["days": "9"])
        #expect(try resolver.int(flag: ("stream-replicas", 3), variable: "REPLICAS")?.value == 3)
        #expect(try resolver.int(variable: "DAYS", key: "days")?.value == 7)
        let error = #expect(throws: SettingError.self) {
            try resolver.int(flag: ("stream-replicas", nil), variable: "REPLICAS")
        }
        #expect(error?.description == "REPLICAS 'three' is not a whole number")
    }
}

@Suite("log level and form from flags or SCANTRACK_LOG_LEVEL / SCANTRACK_LOG_FORMAT", .timed)
struct LogChoiceTests {
    @Test("the flag, else the variable, else info and text; a bad value names where it came from")
    func order() throws {
        #expect(
            try LogChoice.resolve(level: nil, format: nil, environment: [:]) == LogChoice(level: .info, format: .text))
        let environment = ["SCANTRACK_LOG_LEVEL": "debug", "SCANTRACK_LOG_FORMAT": "JSON"]
        #expect(
            try LogChoice.resolve(level: nil, format: nil, environment: environment)
                == LogChoice(level: .debug, format: .json, levelGiven: true))
        #expect(
            try LogChoice.resolve(level: "warning", format: "text", environment: environment)
                == LogChoice(level: .warning, format: .text, levelGiven: true))
        #expect(
            try LogChoice.resolve(level: nil, format: nil, environment: ["SCANTRACK_LOG_LEVEL": ""])
                == LogChoice(level: .info, format: .text, levelGiven: false))
        do {
            _ = try LogChoice.resolve(level: nil, format: nil, environment: ["SCANTRACK_LOG_LEVEL": "loud"])
            Issue.record("a bad level was taken")
        } catch {
            #expect(
                error.description
                    == "SCANTRACK_LOG_LEVEL: 'loud' is not a log level (trace, debug, info, notice, warning, error, critical)"
            )
        }
        do {
            _ = try LogChoice.resolve(level: nil, format: "xml", environment: [:])
            Issue.record("a bad form was taken")
        } catch {
            #expect(error.description.hasPrefix("--log-format: 'xml' is not a log format"))
        }
    }
}
