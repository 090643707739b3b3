import ScanServices
import Testing

@Suite("settings: flag, then environment, then file")
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
