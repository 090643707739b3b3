import ScanCore
import ScanMedia

/// The synthetic conveyor scenes used by tests, benchmarks and the demo. Deterministic: the same
/// name and parameters always give the same frames.
public enum Scenarios {
    public static let names = [
        "side-by-side", "back-to-back", "covered", "fixed-label", "dense", "fast-blur", "rotated", "two-codes",
        "two-codes-420", "prefixes", "flow", "lane", "pack", "totes", "inverted", "hd-rows", "fast-rows",
        "pop-up", "torn", "sscc", "long-sscc", "parcels", "parcel-stream", "tunnel-4k", "any-angle", "bench",
        "close-twins", "faults",
    ]

    /// A scene by name; `flow` takes its size, length, codes in view and seed from the arguments.
    public static func named(
        _ name: String, width: Int = 1280, height: Int = 720, frames: Int = 300, codesInView: Int = 10, seed: UInt64 = 7
    ) -> SynthScene? {
        switch name {
        case "side-by-side": sideBySide()
        case "back-to-back": backToBack()
        case "covered": covered()
        case "fixed-label": fixedLabel()
        case "dense": dense()
        case "fast-blur": fastBlur()
        case "rotated": rotated()
        case "two-codes": twoCodes(chroma: .mono)
        case "two-codes-420": twoCodes(chroma: .c420)
        case "prefixes": prefixes()
        case "flow": flow(width: width, height: height, frames: frames, codesInView: codesInView, seed: seed)
        case "lane": lane()
        case "pack": pack()
        case "totes": totes()
        case "inverted": inverted()
        case "hd-rows": hdRows(frames: frames, seed: seed)
        case "fast-rows": fastRows(frames: frames, seed: seed)
        case "pop-up": popUp()
        case "torn": torn()
        case "sscc": sscc()
        case "long-sscc": longSSCC(seed: seed)
        case "parcels": parcels(seed: seed)
        case "parcel-stream": parcelStream(frames: frames, seed: seed)
        case "any-angle": anyAngle(width: width, height: height, frames: frames, seed: seed)
        case "tunnel-4k": tunnel4K(frames: frames, seed: seed)
        case "bench": bench(seed: seed)
        case "close-twins": closeTwins(seed: seed)
        case "faults": faults(seed: seed)
        default: nil
        }
    }

    static func box(
        _ name: String, x: Double, y: Double, speed: Double, labels: [SynthLabel], width: Int = 280, height: Int = 150
    )
        -> SynthItem
    {
        SynthItem(name: name, width: width, height: height, startX: x, startY: y, velocityX: speed, labels: labels)
    }

    /// Two identical products side by side across the belt, and one other.
    public static func sideBySide() -> SynthScene {
        let same = SynthLabel(.ean13, "400638133393", offsetX: 16, offsetY: 20)
        return SynthScene(
            frameCount: 170,
            items: [
                box("a", x: -300, y: 20, speed: 8, labels: [same]),
                box("b", x: -300, y: 220, speed: 8, labels: [same]),
                box(
                    "c", x: -700, y: 120, speed: 8,
                    labels: [SynthLabel(.ean13, "590123412345", offsetX: 16, offsetY: 20)]),
            ])
    }

    /// Three identical products one behind the other with small gaps.
    public static func backToBack() -> SynthScene {
        let same = SynthLabel(.ean13, "400638133393", offsetX: 16, offsetY: 20)
        return SynthScene(
            frameCount: 150,
            items: (0..<3).map { index in
                box("item\(index)", x: -300 - Double(index) * 310, y: 120, speed: 8, labels: [same])
            })
    }

    /// A label covered by an arm for 8 frames in the middle of its pass.
    public static func covered() -> SynthScene {
        SynthScene(
            frameCount: 100,
            items: [
                box(
                    "a", x: -300, y: 120, speed: 8,
                    labels: [SynthLabel(.ean13, "871234567890", offsetX: 16, offsetY: 20)])
            ],
            occluders: [SynthOccluder(x: 0, y: 0, width: 290, height: 160, followsItem: 0, frames: 70..<78)])
    }

    /// A lane label fixed in view for the whole clip while items pass.
    public static func fixedLabel() -> SynthScene {
        let lane = SynthItem(
            name: "lane", width: 300, height: 80, startX: 330, startY: 310, velocityX: 0,
            labels: [SynthLabel(.code128, "LANE-L3", offsetX: 6, offsetY: 4, barHeight: 22)], shade: 120)
        return SynthScene(
            frameCount: 160,
            items: [
                lane,
                box(
                    "a", x: -300, y: 40, speed: 8,
                    labels: [SynthLabel(.ean13, "400000000001", offsetX: 16, offsetY: 20)]),
                box(
                    "b", x: -650, y: 40, speed: 8,
                    labels: [SynthLabel(.ean13, "400000000002", offsetX: 16, offsetY: 20)]),
                box(
                    "c", x: -1000, y: 40, speed: 8,
                    labels: [SynthLabel(.ean13, "400000000003", offsetX: 16, offsetY: 20)]),
            ])
    }

    /// Forty QR-labelled totes in view at once, drifting slowly.
    public static func dense() -> SynthScene {
        var items: [SynthItem] = []
        for row in 0..<5 {
            for column in 0..<8 {
                let number = row * 8 + column + 1
                let data = "TOTE-" + String(repeating: "0", count: number < 10 ? 2 : 1) + String(number)
                items.append(
                    SynthItem(
                        name: data, width: 92, height: 92, startX: 20 + Double(column) * 112,
                        startY: 12 + Double(row) * 104,
                        velocityX: 1.5, labels: [SynthLabel(.qrCode, data, moduleSize: 3, offsetX: 2, offsetY: 2)],
                        shade: 150))
            }
        }
        return SynthScene(width: 960, height: 540, frameCount: 24, items: items)
    }

    /// Fast items with motion blur.
    public static func fastBlur() -> SynthScene {
        SynthScene(
            frameCount: 90,
            items: (0..<3).map { index in
                box(
                    "fast\(index)", x: -280 - Double(index) * 520, y: 110, speed: 22,
                    labels: [
                        SynthLabel(.ean8, "963850\(index)", moduleSize: 3, offsetX: 8, offsetY: 20, barHeight: 40)
                    ],
                    width: 270, height: 170)
            },
            exposure: 0.2)
    }

    /// Labels rotated by up to ±10°.
    public static func rotated() -> SynthScene {
        let angles = [10.0, -10.0, 6.0]
        return SynthScene(
            frameCount: 150,
            items: angles.enumerated().map { index, angle in
                box(
                    "rot\(index)", x: -300 - Double(index) * 340, y: 100, speed: 8,
                    labels: [
                        SynthLabel(
                            .ean13, "40123455\(index)45\(index)", offsetX: 10, offsetY: 10, rotationDegrees: angle)
                    ],
                    width: 290, height: 190)
            })
    }

    /// Boxes that carry two codes each (a product EAN and a logistics Code 128).
    public static func twoCodes(chroma: Y4MHeader.Chroma) -> SynthScene {
        SynthScene(
            frameCount: 120,
            items: (0..<2).map { index in
                box(
                    "box\(index)", x: -320 - Double(index) * 360, y: 40, speed: 8,
                    labels: [
                        SynthLabel(.ean13, "50123456789\(index)", offsetX: 16, offsetY: 12),
                        SynthLabel(.code128, "LPN-88\(index)", offsetX: 16, offsetY: 150),
                    ],
                    width: 310, height: 280)
            },
            chroma: chroma)
    }

    /// Six products, three with codes starting 40 and three starting 41, one after the other:
    /// for weekday/weekend prefix rules and sessions that stop after N codes.
    public static func prefixes() -> SynthScene {
        let codes = ["400638133393", "410000000012", "400000000025", "410000000036", "410000000049", "400000000051"]
        return SynthScene(
            frameCount: 340,
            items: codes.enumerated().map { index, code in
                box(
                    "p\(index)", x: -300 - Double(index) * 340, y: 120, speed: 8,
                    labels: [SynthLabel(.ean13, code, offsetX: 16, offsetY: 20)])
            })
    }

    /// A steady stream of items for benchmarks and the demo: lanes of boxes with EAN-13, Code 128
    /// and QR labels, spaced so that about `codesInView` codes are in view at once.
    public static func flow(width: Int, height: Int, frames: Int, codesInView: Int, seed: UInt64, speed: Double = 6)
        -> SynthScene
    {
        var generator = SplitMix(seed: seed)
        let laneHeight = 140
        let lanes = max(1, min(codesInView, height / laneHeight))
        let perLane = max(1.0, Double(codesInView) / Double(lanes))
        let spacing = Double(width + 200) / perLane
        var items: [SynthItem] = []
        var serial = 0
        for lane in 0..<lanes {
            let laneY = Double(lane * (height / lanes)) + 6
            var x = Double(width) - Double(generator.next() % 60)
            // Enough items to keep the lane full for the whole clip.
            let needed = Int((speed * Double(frames) + Double(width)) / spacing) + Int(perLane) + 2
            for _ in 0..<needed {
                serial += 1
                let kind = generator.next() % 3
                let label: SynthLabel
                let boxWidth: Int
                switch kind {
                case 0:
                    label = SynthLabel(.qrCode, "TOTE-\(seed)-\(serial)", moduleSize: 3, offsetX: 6, offsetY: 6)
                    boxWidth = 110
                case 1:
                    label = SynthLabel(
                        .code128, "P\(100_000 + serial)", moduleSize: 2, offsetX: 6, offsetY: 6, barHeight: 40)
                    boxWidth = 190
                default:
                    let digits = String(400_000_000_000 + Int(generator.next() % 99_999_999))
                    label = SynthLabel(
                        .ean8, String(digits.suffix(7)), moduleSize: 2, offsetX: 6, offsetY: 6, barHeight: 40)
                    boxWidth = 200
                }
                // Items are laid out leftwards from the lane's head: each starts a gap before the
                // previous one's left edge, so no two boxes overlap.
                x -= max(spacing, Double(boxWidth) + 30)
                items.append(
                    SynthItem(
                        name: "flow\(serial)", width: boxWidth, height: min(laneHeight - 12, 120), startX: x,
                        startY: laneY,
                        velocityX: speed, labels: [label]))
            }
        }
        return SynthScene(width: width, height: height, frameCount: frames, items: items, noise: 8, seed: seed)
    }

    /// The demo's conveyor lane: ten products one behind the other, identical ones back
    /// to back among them (4006381333931 three times, 9780201379624 twice), 1.4 s apart.
    public static func lane() -> SynthScene {
        let codes = [
            "400638133393", "400638133393", "400638133393", "501234567890", "978020137962", "978020137962",
            "590123412345",
            "400638133393", "871234567890", "501234567890",
        ]
        return SynthScene(
            frameCount: 600,
            items: codes.enumerated().map { index, code in
                box(
                    "l\(index)", x: -300 - Double(index) * 340, y: 120, speed: 8,
                    labels: [SynthLabel(.ean13, code, offsetX: 16, offsetY: 20)])
            })
    }

    /// Six boxes on a slatted belt, one behind the other; the second, fourth and fifth carry torn
    /// labels (a blank band through the bars): three reads, three no-reads, and the slats and box
    /// edges nothing.
    public static func torn() -> SynthScene {
        let labels: [(String, Bool)] = [
            ("400638133393", false), ("501234567890", true), ("978020137962", false), ("590123412345", true),
            ("871234567890", true), ("400638133393", false),
        ]
        var scene = SynthScene(
            frameCount: 380,
            items: labels.enumerated().map { index, label in
                box(
                    "t\(index)", x: -300 - Double(index) * 340, y: 120, speed: 8,
                    labels: [SynthLabel(.ean13, label.0, offsetX: 16, offsetY: 20, torn: label.1)])
            })
        scene.beltSlats = 64
        return scene
    }

    /// Four boxes with GS1-128 shipping labels (an SSCC and a best-before date) printed at 1.5 px
    /// a module: barely readable, decoded in some frames only, and each must still count once.
    /// More `noise` (grey levels) reads fewer of them; none at 34.
    public static func sscc(noise: Int = 18) -> SynthScene {
        let labels = [
            "[00]340123450000000018[15]261231", "[00]340123450000000025[15]261231",
            "[00]340123450000000032[15]270115", "[00]340123450000000049[15]270115",
        ]
        return SynthScene(
            width: 800, height: 360, frameCount: 300,
            items: labels.enumerated().map { index, data in
                box(
                    "s\(index)", x: -420 - Double(index) * 480, y: 110, speed: 9,
                    labels: [
                        SynthLabel(.code128, data, moduleSize: 3, offsetX: 14, offsetY: 20, barHeight: 70, gs1: true)
                            .scaledBy(0.5)
                    ], width: 380, height: 150)
            }, noise: noise, exposure: 0.25)
    }

    /// Six boxes with long GS1-128 shipping labels (an SSCC, a best-before date and a batch: 38
    /// characters of data), alternately at 1.5 and 2 px a module, each skewed by up to ±4° and
    /// blurred by the belt's motion; beside each an EAN-13 at 2 px a module. `seed` sets the skew,
    /// the speed (7–11 px a frame), the blur (0.6–1.6 px) and the noise (8–23 grey levels): at the highest
    /// noises some 1.5 px labels are read in a few frames only or not at all, and each must still
    /// be one sighting or one no-read.
    public static func longSSCC(seed: UInt64) -> SynthScene {
        var random = SplitMix(seed: seed)
        func uniform(_ low: Double, _ high: Double) -> Double {
            low + (high - low) * Double(random.next() % 10_000) / 10_000
        }
        let ssccs = [
            "340123450000080019", "340123450000080026", "340123450000080033", "340123450000080040",
            "340123450000080057", "340123450000080064",
        ]
        let eans = ["400638133393", "590123412345", "978020137962", "871234567890", "501234567890", "761234567890"]
        let speed = uniform(7, 11)
        let items = ssccs.enumerated().map { index, sscc in
            let fine = index % 2 == 0
            var long = SynthLabel(
                .code128, "[00]\(sscc)[15]27\(String(format: "%02d", index + 1))15[10]B\(7310 + index)",
                moduleSize: fine ? 3 : 2, offsetX: 14, offsetY: 16, rotationDegrees: uniform(-4, 4),
                barHeight: fine ? 30 : 24, gs1: true)
            if fine { long = long.scaledBy(0.5) }
            let ean = SynthLabel(
                .ean13, eans[index], offsetX: 14, offsetY: 120, rotationDegrees: uniform(-4, 4), barHeight: 30)
            return box(
                "long-\(index)", x: -640 - Double(index) * 720, y: 40 + uniform(0, 60), speed: speed,
                labels: [long, ean], width: 600, height: 210)
        }
        return SynthScene(
            width: 1024, height: 400, frameCount: Int((640 + 6 * 720 + 1024) / speed), items: items,
            noise: 8 + Int(random.next() % 16), exposure: uniform(0.6, 1.6) / speed, seed: seed)
    }

    /// Shipping boxes in two rows (side by side across the belt), back to back along it, each with
    /// one to three codes on one or two labels: a GS1-128 SSCC, an EAN-13, a QR licence plate.
    /// Two boxes are identical (same codes); one box's SSCC is torn (the box lacks it); one box
    /// has only a torn label (no code of it can be read). `seed` moves the boxes a little and
    /// sets the noise.
    public static func parcels(seed: UInt64, speed: Double = 7) -> SynthScene {
        var random = SplitMix(seed: seed)
        // SSCCs with their check digits.
        let ssccs = [
            "340123450000070010", "340123450000070027", "340123450000070034", "340123450000070041",
            "340123450000070058", "340123450000070065",
        ]
        func sscc(_ n: Int, torn: Bool = false) -> SynthLabel {
            SynthLabel(
                .code128, "[00]" + ssccs[n - 1], moduleSize: 2, offsetX: 16, offsetY: 14, barHeight: 50, torn: torn,
                gs1: true)
        }
        func ean(_ value: String, y: Int = 84, torn: Bool = false) -> SynthLabel {
            SynthLabel(.ean13, value, offsetX: 16, offsetY: y, torn: torn)
        }
        func plate(_ value: String) -> SynthLabel {
            SynthLabel(.qrCode, value, moduleSize: 3, offsetX: 260, offsetY: 84)
        }
        // (row, labels)
        let boxes: [(Int, [SynthLabel])] = [
            (0, [sscc(1), ean("400638133393")]),
            (1, [sscc(2), ean("590123412345"), plate("LPN-7001")]),
            (0, [sscc(3), plate("LPN-7002")]),
            (1, [sscc(4), ean("978020137962")]),  // identical to the next one
            (1, [sscc(4), ean("978020137962")]),
            (0, [sscc(5, torn: true), ean("871234567890")]),  // its SSCC is torn
            (0, [ean("501234567890", y: 30, torn: true)]),  // nothing on it can be read
            (1, [sscc(6)]),
        ]
        var along = [0.0, 0.0]
        var items: [SynthItem] = []
        for (index, (row, labels)) in boxes.enumerated() {
            let jitter = Double(random.next() % 30)
            let x = -440 - along[row] - jitter
            along[row] += 500 + jitter
            items.append(
                box(
                    "parcel-\(index)", x: x, y: row == 0 ? 24 : 290, speed: speed, labels: labels, width: 400,
                    height: 200))
        }
        let length = (along.max() ?? 0) + 960 + 400
        return SynthScene(
            width: 960, height: 540, frameCount: Int(length / speed), items: items, noise: 4 + Int(seed % 4) * 3,
            seed: seed)
    }

    /// The demo's pack station: three orders, each an order label (Code 128, `ORD-…`)
    /// followed by its items, with a pause of several seconds between orders. ORD-1001 gets what
    /// it should, ORD-1002 one item short, ORD-1003 an item it does not hold.
    public static func pack() -> SynthScene {
        let orders: [(String, [String])] = [
            ("ORD-1001", ["400638133393", "400638133393", "501234567890"]),
            ("ORD-1002", ["978020137962", "978020137962"]),
            ("ORD-1003", ["400638133393", "871234567890"]),
        ]
        var items: [SynthItem] = []
        var x = -300.0
        for (order, codes) in orders {
            items.append(
                box(
                    order, x: x, y: 120, speed: 8,
                    labels: [SynthLabel(.code128, order, offsetX: 16, offsetY: 30, barHeight: 60)]))
            for (index, code) in codes.enumerated() {
                x -= 340
                items.append(
                    box(
                        "\(order)-\(index)", x: x, y: 120, speed: 8,
                        labels: [SynthLabel(.ean13, code, offsetX: 16, offsetY: 20)]))
            }
            x -= 340 + 8 * 30 * 4  // four seconds of empty belt: the session goes idle and completes
        }
        return SynthScene(frameCount: Int((-x + 640) / 8) + 30, items: items)
    }

    /// Totes on a conveyor in two rows: DataMatrix licence plates (two identical ones back to
    /// back), QR tote labels, a PDF417 shipping label and an EAN-13, as a distribution centre
    /// sees them. zbar reads the QR and EAN codes, zxing-cpp the DataMatrix and PDF417.
    public static func totes() -> SynthScene {
        let dm = { (value: String) in SynthLabel(.dataMatrix, value, moduleSize: 4, offsetX: 20, offsetY: 16) }
        let qr = { (value: String) in SynthLabel(.qrCode, value, moduleSize: 4, offsetX: 20, offsetY: 16) }
        let rowA: [SynthLabel] = [
            dm("LPN00012345"), qr("TOTE-0001"), dm("LPN00012346"), dm("LPN00012346"),
            SynthLabel(.pdf417, "SHIP 1Z999AA10123456784", moduleSize: 2, offsetX: 12, offsetY: 20, barHeight: 6),
            qr("TOTE-0002"),
        ]
        let rowB: [SynthLabel] = [
            qr("TOTE-0003"), dm("LPN00012347"), SynthLabel(.ean13, "400638133393", offsetX: 16, offsetY: 20),
            dm("LPN00012348"),
            qr("TOTE-0003"),
        ]
        var items: [SynthItem] = []
        for (row, labels) in [(0, rowA), (1, rowB)] {
            for (index, label) in labels.enumerated() {
                let x = -300 - Double(index) * 330 - Double(row) * 160
                items.append(
                    box(
                        "t\(row)-\(index)", x: x, y: row == 0 ? 20 : 220, speed: 9, labels: [label], width: 290,
                        height: 170))
            }
        }
        return SynthScene(width: 720, height: 400, frameCount: 290, items: items)
    }

    /// Reusable totes with reverse-printed QR labels (light on dark) among ordinary ones; two
    /// identical reverse-printed labels back to back. zbar reads only the ordinary labels; the
    /// zxing-cpp sweep (`decoder.zxingSweep`) finds the others.
    public static func inverted() -> SynthScene {
        let labels: [(String, Bool)] = [
            ("TOTE-2001", false), ("TOTE-2002", true), ("TOTE-2003", true), ("TOTE-2003", true), ("TOTE-2004", false),
        ]
        let items = labels.enumerated().map { index, label in
            box(
                "inv\(index)", x: -300 - Double(index) * 330, y: 60, speed: 9,
                labels: [SynthLabel(.qrCode, label.0, moduleSize: 4, offsetX: 20, offsetY: 16, inverted: label.1)],
                width: 290, height: 170)
        }
        return SynthScene(width: 720, height: 300, frameCount: Int((300 + 4 * 330 + 720) / 9) + 10, items: items)
    }

    /// A valid EAN-13's first twelve digits (the renderer adds the check digit), from the generator.
    static func eanDigits(_ generator: inout SplitMix) -> String {
        String(400_000_000_000 + Int(generator.next() % 99_999_999_999)).prefix(12).description
    }

    /// A full-HD conveyor: four rows of boxes, each with an EAN-13 or a Code 128 label, about 20
    /// codes in view at once (the real-time matrix-scan benchmark). Identical products appear
    /// side by side in neighbouring rows.
    public static func hdRows(frames: Int, seed: UInt64) -> SynthScene {
        var generator = SplitMix(seed: seed)
        let width = 1920
        let speed = 8.0
        let spacing = 400.0
        var items: [SynthItem] = []
        var serial = 0
        var repeated: SynthLabel?
        for row in 0..<4 {
            var x = Double(width) - 120 * Double(row) - Double(generator.next() % 80)
            let needed = Int((speed * Double(frames) + Double(width)) / spacing) + 3
            for index in 0..<needed {
                serial += 1
                let label: SynthLabel
                if index == 3, let same = repeated {
                    label = same  // the same product as in the row above, side by side
                } else if generator.next() % 2 == 0 {
                    label = SynthLabel(.ean13, eanDigits(&generator), offsetX: 20, offsetY: 30, barHeight: 60)
                } else {
                    label = SynthLabel(.code128, "LPN\(700_000 + serial)", offsetX: 20, offsetY: 30, barHeight: 60)
                }
                if index == 3 { repeated = label }
                x -= spacing
                items.append(
                    SynthItem(
                        name: "hd\(serial)", width: 330, height: 200, startX: x, startY: 20 + Double(row) * 270,
                        velocityX: speed, labels: [label]))
            }
        }
        return SynthScene(width: width, height: 1080, frameCount: frames, items: items, noise: 8, seed: seed)
    }

    /// Rows of equal boxes across a belt `width` wide, `spacing` apart along it, enough to fill
    /// `frames` frames at `speed`; `stagger` moves each row's first box back, `label` makes each
    /// box's label (in that order, so a seed gives the same scene).
    static func beltRows(
        _ rows: Int, width: Int, speed: Double, spacing: Double, frames: Int, box: (width: Int, height: Int),
        pitch: Double, top: Double, name: String, generator: inout SplitMix,
        stagger: (Int, inout SplitMix) -> Double, label: (Int, inout SplitMix) -> SynthLabel
    ) -> [SynthItem] {
        beltRows(
            rows, width: width, speed: speed, spacing: spacing, frames: frames, box: box, pitch: pitch, top: top,
            name: name, generator: &generator, stagger: stagger, labels: { [label($0, &$1)] })
    }

    /// `beltRows` with any number of labels a box.
    static func beltRows(
        _ rows: Int, width: Int, speed: Double, spacing: Double, frames: Int, box: (width: Int, height: Int),
        pitch: Double, top: Double, name: String, generator: inout SplitMix,
        stagger: (Int, inout SplitMix) -> Double, labels: (Int, inout SplitMix) -> [SynthLabel]
    ) -> [SynthItem] {
        var items: [SynthItem] = []
        var serial = 0
        for row in 0..<rows {
            var x = Double(width) - stagger(row, &generator)
            let needed = Int((speed * Double(frames) + Double(width)) / spacing) + 3
            for _ in 0..<needed {
                serial += 1
                let made = labels(serial, &generator)
                x -= spacing
                items.append(
                    SynthItem(
                        name: "\(name)\(serial)", width: box.width, height: box.height, startX: x,
                        startY: top + Double(row) * pitch, velocityX: speed, labels: made))
            }
        }
        return items
    }

    /// A sorter's infeed at 30 parcels a second: six rows of small parcels, 330 px apart, moving
    /// 55 px a frame at 30 fps, each with one EAN-13 label; every tenth label is torn (a no-read
    /// parcel). The decision-latency benchmark's load.
    public static func parcelStream(frames: Int, seed: UInt64) -> SynthScene {
        var generator = SplitMix(seed: seed)
        let items = beltRows(
            6, width: 1280, speed: 55, spacing: 330, frames: frames, box: (300, 112), pitch: 119, top: 4, name: "ps",
            generator: &generator, stagger: { row, random in 55 * Double(row) + Double(random.next() % 40) }
        ) { serial, random in
            SynthLabel(.ean13, eanDigits(&random), offsetX: 24, offsetY: 8, barHeight: 30, torn: serial % 10 == 0)
        }
        return SynthScene(width: 1280, height: 720, frameCount: frames, items: items, noise: 6, seed: seed)
    }

    /// A 4K tunnel camera (3840x2160) over a wide belt: six rows of parcels, each with one to three
    /// codes: a GS1-128 SSCC at 2 px a module, an EAN-13, a DataMatrix licence plate; every label
    /// skewed by up to ±4°, slight motion blur, about 40 codes in view. The tunnel-scale decoding
    /// benchmark's scene (BENCHMARKS.md, raw engines as the baseline).
    public static func tunnel4K(frames: Int, seed: UInt64) -> SynthScene {
        var generator = SplitMix(seed: seed)
        let width = 3840
        let items = beltRows(
            6, width: width, speed: 14, spacing: 880, frames: frames, box: (760, 356), pitch: 360, top: 2,
            name: "t", generator: &generator,
            stagger: { row, random in 140 * Double(row) + Double(random.next() % 100) }
        ) { serial, random in
            let angle = Double(Int(random.next() % 9) - 4)
            let kinds = random.next() % 3  // 0: SSCC only; 1: SSCC and EAN-13; 2: all three
            var labels = [
                SynthLabel(
                    .code128, "[00]" + ssccWithCheckDigit(340_123_450_000_000_000 + serial * 10), moduleSize: 2,
                    offsetX: 24, offsetY: 14, rotationDegrees: angle, barHeight: 60, gs1: true)
            ]
            if kinds >= 1 {
                labels.append(
                    SynthLabel(
                        .ean13, eanDigits(&random), offsetX: 24, offsetY: 150, rotationDegrees: angle, barHeight: 60))
            }
            if kinds == 2 {
                labels.append(
                    SynthLabel(
                        .dataMatrix, "LP\(800_000 + serial)", moduleSize: 5, offsetX: 560, offsetY: 220,
                        rotationDegrees: angle))
            }
            return labels
        }
        return SynthScene(
            width: width, height: 2160, frameCount: frames, items: items, noise: 6, exposure: 0.15, seed: seed)
    }

    /// An 18-digit SSCC: the 17 digits of `body / 10` and their GS1 check digit.
    static func ssccWithCheckDigit(_ body: Int) -> String {
        let digits = String(body / 10)
        return digits + String(Symbology.gs1CheckDigit(digits.compactMap(\.wholeNumberValue)))
    }

    /// A fast belt: rows of boxes close together, EAN-13 labels rotated by up to ±8°, motion blur.
    /// zbar can join the left half of one label with the right half of one in the next row; when
    /// the check digit fits, that value is on no label (a phantom).
    public static func fastRows(frames: Int, seed: UInt64) -> SynthScene {
        var generator = SplitMix(seed: seed)
        let items = beltRows(
            5, width: 1280, speed: 20, spacing: 330, frames: frames, box: (300, 132), pitch: 142, top: 6, name: "fr",
            generator: &generator, stagger: { row, random in 90 * Double(row % 2) + Double(random.next() % 60) }
        ) { _, random in
            let angle = Double(Int(random.next() % 17) - 8)
            return SynthLabel(
                .ean13, eanDigits(&random), offsetX: 24, offsetY: 10, rotationDegrees: angle, barHeight: 36)
        }
        return SynthScene(
            width: 1280, height: 720, frameCount: frames, items: items, noise: 8, exposure: 0.12, seed: seed)
    }

    /// Parcels lying any way up: rows of boxes (as many as the height holds, 350 px apart: two at
    /// 720p, three at 1080p, six at 4K), each with one EAN-13 or Code 128 label (2 px a module;
    /// at 4K every third label a DataMatrix, 4 px a module) turned to an angle drawn uniformly
    /// from 0–360°, 8 px a frame. The boxes are large enough to hold a label
    /// whole at any angle and stand apart (none hides another's label).
    public static func anyAngle(width: Int = 1280, height: Int = 720, frames: Int, seed: UInt64) -> SynthScene {
        var generator = SplitMix(seed: seed)
        let items = beltRows(
            max(1, (height - 6) / 350), width: width, speed: 8, spacing: 360, frames: frames, box: (310, 310),
            pitch: 350, top: 6, name: "aa",
            generator: &generator, stagger: { row, random in 170 * Double(row) + Double(random.next() % 80) }
        ) { serial, random in
            let angle = Double(random.next() % 3600) / 10
            if height >= 2160 && serial % 3 == 0 {
                return SynthLabel(
                    .dataMatrix, "DM\(seed)-\(serial)", moduleSize: 4, offsetX: 90, offsetY: 90,
                    rotationDegrees: angle)
            }
            if serial % 2 == 0 {
                return SynthLabel(
                    .ean13, eanDigits(&random), moduleSize: 2, offsetX: 20, offsetY: 20, rotationDegrees: angle,
                    barHeight: 50)
            }
            return SynthLabel(
                .code128, "AA\(seed)-\(serial)", moduleSize: 2, offsetX: 14, offsetY: 14, rotationDegrees: angle,
                barHeight: 50)
        }
        return SynthScene(width: width, height: height, frameCount: frames, items: items, noise: 8, seed: seed)
    }

    /// Seven boxes in a row, one EAN-13 or Code 128 label each at an angle drawn from 0–360°:
    /// three readable, one torn, one out of focus, one overexposed (glare), one drawn at 0.9 px a
    /// module. Each unreadable one should be one no-read that says why (`damaged`, `blurred`,
    /// `overexposed`, `too-small`), the readable ones sightings. `seed` sets the order, values,
    /// angles, speed (6–9 px a frame) and noise (4–11 grey levels).
    public static func faults(seed: UInt64) -> SynthScene {
        var random = SplitMix(seed: seed ^ 0xFA_0175)
        var kinds: [String] = ["ok", "ok", "ok", "torn", "defocused", "overexposed", "tiny"]
        for index in kinds.indices.reversed() {
            kinds.swapAt(index, Int(random.next() % UInt64(index + 1)))
        }
        let speed = 6 + Double(random.next() % 4)
        let items = kinds.enumerated().map { index, kind in
            let angle = Double(random.next() % 3600) / 10
            var label =
                index % 2 == 0
                ? SynthLabel(
                    .ean13, eanDigits(&random), moduleSize: 2, offsetX: 24, offsetY: 24, rotationDegrees: angle,
                    barHeight: 50)
                : SynthLabel(
                    .code128, "FT\(seed)-\(index)", moduleSize: 2, offsetX: 24, offsetY: 24, rotationDegrees: angle,
                    barHeight: 50)
            switch kind {
            case "torn": label.torn = true
            case "defocused": label.fault = .defocused
            case "overexposed": label.fault = .overexposed
            case "tiny": label = label.scaledBy(0.45)
            default: break
            }
            return box(
                "f\(index)", x: -330 - Double(index) * 480, y: 40, speed: speed, labels: [label], width: 300,
                height: 300)
        }
        let frames = Int((Double(kinds.count) * 480 + 1280) / speed) + 10
        return SynthScene(
            width: 1280, height: 400, frameCount: frames, items: items, noise: 4 + Int(random.next() % 8), seed: seed)
    }

    /// Boxes each carrying two identical labels one behind the other along the belt, 70 px (35
    /// modules at 2 px a module) between them, both turned to one angle drawn from 0–360°: an
    /// EAN-13 or a Code 128, 7–10 px a frame at 720p. Two tracks a box, each from when its label
    /// is first whole. `seed` sets the values, angles, places, speed and noise.
    public static func closeTwins(seed: UInt64) -> SynthScene {
        var random = SplitMix(seed: seed)
        let speed = 7 + Double(random.next() % 31) / 10
        let items = (0..<4).map { index in
            let angle = Double(random.next() % 3600) / 10
            let label =
                random.next() % 2 == 0
                ? SynthLabel(
                    .ean13, eanDigits(&random), moduleSize: 2, offsetX: 20, offsetY: 20, rotationDegrees: angle,
                    barHeight: 50)
                : SynthLabel(
                    .code128, "TW\(seed)-\(index)", moduleSize: 2, offsetX: 20, offsetY: 20, rotationDegrees: angle,
                    barHeight: 50)
            var item = SynthItem(
                name: "twins-\(index)", width: 300, height: 200, startX: -720 - Double(index) * 900,
                startY: 60 + Double(random.next() % 160), velocityX: speed, labels: [label, label])
            item.layout = .row(gap: 70)
            return item
        }
        return SynthScene(
            width: 1280, height: 720, frameCount: Int((720 + 3 * 900 + 1280) / speed), items: items,
            noise: 6 + Int(random.next() % 10), seed: seed)
    }

    /// A pack bench under a fixed camera: six items put down one after another at about the same
    /// spot, each taken away and the next put down 3–9 frames later (0.1–0.3 s at 30 fps: fewer
    /// than `tracking.maxMissedFrames`), a hand over the spot meanwhile. The first carries an
    /// order label (Code 128 `ORD-<n>`), the others products (EAN-13 or Code 128, 2 px a module);
    /// every label lies at an angle drawn from 0–360°. `seed` sets the values, the places (±20
    /// px), the angles, how long each item stays (18–37 frames), the gaps and the noise.
    public static func bench(seed: UInt64) -> SynthScene {
        var random = SplitMix(seed: seed)
        var items: [SynthItem] = []
        var occluders: [SynthOccluder] = []
        var frame = 6
        for index in 0..<6 {
            let angle = Double(random.next() % 3600) / 10
            let label: SynthLabel
            if index == 0 {
                label = SynthLabel(
                    .code128, "ORD-\(1000 + seed)", moduleSize: 2, offsetX: 14, offsetY: 14, rotationDegrees: angle,
                    barHeight: 50)
            } else if random.next() % 2 == 0 {
                label = SynthLabel(
                    .ean13, eanDigits(&random), moduleSize: 2, offsetX: 20, offsetY: 20, rotationDegrees: angle,
                    barHeight: 50)
            } else {
                label = SynthLabel(
                    .code128, "P\(seed)-\(index)", moduleSize: 2, offsetX: 14, offsetY: 14, rotationDegrees: angle,
                    barHeight: 50)
            }
            let stay = 18 + Int(random.next() % 20)
            let gap = 3 + Int(random.next() % 7)
            var item = SynthItem(
                name: "item-\(index)", width: 310, height: 310, startX: 470 + Double(random.next() % 41) - 20,
                startY: 200 + Double(random.next() % 41) - 20, velocityX: 0, labels: [label])
            item.present = frame..<(frame + stay)
            items.append(item)
            // The hand that takes one away and puts the next down: across the spot's upper part.
            occluders.append(
                SynthOccluder(x: 420, y: 150, width: 420, height: 150, frames: (frame + stay)..<(frame + stay + gap)))
            frame += stay + gap
        }
        return SynthScene(
            width: 1280, height: 720, frameCount: frame + 12, items: items, occluders: occluders,
            noise: 6 + Int(random.next() % 10), seed: seed)
    }

    /// A pack station: labels that appear in the middle of the view and stay (a label placed by
    /// hand), one after another, while the first one stays in view.
    public static func popUp() -> SynthScene {
        let codes = ["400638133393", "590123412345", "871234567890", "400638133393"]
        var items: [SynthItem] = [
            box("still", x: 60, y: 60, speed: 0, labels: [SynthLabel(.code128, "STATION-7", offsetX: 16, offsetY: 30)])
        ]
        var occluders: [SynthOccluder] = []
        for (index, code) in codes.enumerated() {
            let column = index % 2
            let row = index / 2
            items.append(
                box(
                    "placed\(index)", x: 420 + Double(column) * 330, y: 40 + Double(row) * 200, speed: 0,
                    labels: [SynthLabel(.ean13, code, offsetX: 16, offsetY: 20)]))
            // Hidden (not yet placed) until frame 20 × (index + 1).
            occluders.append(
                SynthOccluder(
                    x: -4, y: -4, width: 290, height: 160, followsItem: items.count - 1, frames: 0..<(20 * (index + 1)))
            )
        }
        return SynthScene(width: 1280, height: 480, frameCount: 130, items: items, occluders: occluders)
    }
}
