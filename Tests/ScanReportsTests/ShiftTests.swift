import Foundation
import ScanTestTiming
import Testing

import ScanCore

@testable import ScanReports

@Suite("shifts", .timed)
struct ShiftTests {
    /// (Without the zone's rules every expectation below fails, so no fallback can hide it.)
    static let zurich = TimeZone(identifier: "Europe/Zurich") ?? .gmt
    static func plan(_ spec: String = ShiftPlan.defaultSpec) throws -> ShiftPlan {
        try ShiftPlan.parse(spec, timeZone: zurich)
    }
    static func at(_ text: String) -> Date {
        Date(timeIntervalSince1970: Double(Timestamp(rfc3339: text)?.milliseconds ?? 0) / 1000)
    }
    static func hours(_ instance: ShiftPlan.Instance) -> Double {
        instance.end.timeIntervalSince(instance.start) / 3600
    }

    @Test(
        "today: the shifts of the current production day, local time; a night shift belongs to the day it starts, so after midnight today is still that day"
    )
    func today() throws {
        let plan = try Self.plan()
        // 15:00 in Zurich (UTC+1 in November): early and late have started.
        let shifts = try plan.resolve(.today, now: Self.at("2026-11-23T14:00:00.000Z"))
        #expect(shifts.map(\.label) == ["2026-11-23/early", "2026-11-23/late"])
        #expect(shifts[0].start == Self.at("2026-11-23T05:00:00.000Z"))
        let night = try plan.resolve(
            .dated(date: "2026-11-22", name: "night"), now: Self.at("2026-11-23T14:00:00.000Z"))[0]
        #expect(night.start == Self.at("2026-11-22T21:00:00.000Z") && night.end == Self.at("2026-11-23T05:00:00.000Z"))
        // 01:00 local on the 23rd: the night shift running now started on the 22nd.
        let current = try plan.resolve(.current, now: Self.at("2026-11-23T00:00:00.000Z"))
        #expect(current.map(\.label) == ["2026-11-22/night"])
        #expect(
            try plan.resolve(.previous, now: Self.at("2026-11-23T00:00:00.000Z")).map(\.label) == ["2026-11-22/late"])
        // The production day is still the 22nd: its three shifts, the night one under way.
        #expect(
            try plan.resolve(.today, now: Self.at("2026-11-23T00:00:00.000Z")).map(\.label) == [
                "2026-11-22/early", "2026-11-22/late", "2026-11-22/night",
            ])
        #expect(
            try plan.resolve(.yesterday, now: Self.at("2026-11-23T00:00:00.000Z")).map(\.label) == [
                "2026-11-21/early", "2026-11-21/late", "2026-11-21/night",
            ])
        // Once the early shift of the 23rd has started, the 23rd is today.
        #expect(
            try plan.resolve(.today, now: Self.at("2026-11-23T05:00:00.000Z")).map(\.label) == ["2026-11-23/early"])
        // Without a night shift, at 03:00 the day that ended at 22:00 is still today's report.
        let days = try Self.plan("early=06:00-14:00,late=14:00-22:00")
        #expect(
            try days.resolve(.today, now: Self.at("2026-11-23T02:00:00.000Z")).map(\.label) == [
                "2026-11-22/early", "2026-11-22/late",
            ])
        #expect(
            try plan.resolve(.named("late"), now: Self.at("2026-11-23T10:00:00.000Z")).map(\.label) == [
                "2026-11-22/late"
            ])
    }

    @Test("a night shift across a DST change lasts 9 hours in October and 7 in March")
    func daylightSaving() throws {
        let plan = try Self.plan()
        let autumn = try #require(plan.instance(plan.shifts[2], on: "2026-10-24"))
        #expect(Self.hours(autumn) == 9)
        #expect(autumn.start == Self.at("2026-10-24T20:00:00.000Z"))  // 22:00 CEST
        #expect(autumn.end == Self.at("2026-10-25T05:00:00.000Z"))  // 06:00 CET
        let spring = try #require(plan.instance(plan.shifts[2], on: "2026-03-28"))
        #expect(Self.hours(spring) == 7)
        let early = try #require(plan.instance(plan.shifts[0], on: "2026-10-25"))
        #expect(Self.hours(early) == 8)
    }

    @Test("bad shift definitions and selections are refused with a reason")
    func errors() throws {
        #expect(throws: ConfigErrors.self) { try ShiftPlan.parse("early=6-14", timeZone: Self.zurich) }
        #expect(throws: ConfigErrors.self) { try ShiftPlan.parse("a=06:00-06:00", timeZone: Self.zurich) }
        #expect(throws: ConfigErrors.self) { try ShiftPlan.parse("a=06:00-14:00,a=14:00-22:00", timeZone: Self.zurich) }
        #expect(throws: ConfigErrors.self) { try ShiftPlan.parse("a=25:00-02:00", timeZone: Self.zurich) }
        let plan = try Self.plan("day=07:00-19:00,night=19:00-07:00")
        #expect(plan.shifts.map(\.name) == ["day", "night"])
        #expect(throws: ShiftPlan.SelectionError.self) { try plan.resolve(.named("late"), now: Date()) }
        #expect(throws: ShiftPlan.SelectionError.self) {
            try plan.resolve(.dated(date: "23.11.2026", name: "day"), now: Date())
        }
        #expect(ShiftPlan.selection("2026-11-23/night") == .dated(date: "2026-11-23", name: "night"))
        #expect(ShiftPlan.selection("current") == .current)
    }
}
