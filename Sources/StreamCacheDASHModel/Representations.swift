import Foundation

/// One `Representation` of an MPD as a player chooses it, its attributes inherited from its
/// `AdaptationSet` where it has none of its own, its `BaseURL` resolved, and how its segments are
/// addressed.
public struct DASHRepresentation: Hashable, Sendable {
    public var id: String
    /// Which `Period` (0 for the first).
    public var period: Int
    /// `video`, `audio`, `text` or what the MPD says (from `contentType`, else the MIME type).
    public var contentType: String
    public var mimeType: String?
    public var codecs: String?
    public var bandwidth: Int64
    public var width: Int?
    public var height: Int?
    public var frameRate: String?
    public var language: String?
    public var label: String?
    /// `Role` values (`main`, `alternate`, `subtitle`, …).
    public var roles: [String]
    /// The protection systems named by `ContentProtection` (`Widevine`, `PlayReady`, `FairPlay`,
    /// `ClearKey`, `cenc`, or the scheme URI).
    public var protection: [String]
    /// Where its relative URLs resolve.
    public var baseURL: URL
    /// Its `SegmentTemplate`, `SegmentList` or `SegmentBase`, merged down from the levels above.
    public var addressing: XMLNode?
    /// Seconds its period lasts, when the MPD says.
    public var periodDuration: Double?
    /// Seconds from the presentation's start to its period's (``DASHPeriod/start``).
    public var periodStart: Double = 0
    /// Its period's `id`, when it has one.
    public var periodID: String?

    /// The most bits per second a representation is taken to need (a terabit): a larger
    /// `bandwidth` is read as this, so that sums of bandwidths stay within `Int64`.
    public static let maximumBandwidth: Int64 = 1_000_000_000_000
}

extension MediaPresentation {
    /// Every representation, period by period, as the MPD lists them; `documentURL` is where the
    /// MPD came from.
    public func representations(documentURL: URL) -> [DASHRepresentation] {
        var result: [DASHRepresentation] = []
        let mpdBase = Self.base(of: root, against: documentURL)
        let periods = root.elements("Period")
        let total = root.attributes["mediaPresentationDuration"].flatMap(ISODuration.seconds)
        // Placed as ``periods()`` places them; where that refuses the MPD (overlapping periods),
        // each by its own attributes.
        let placed = try? self.periods()
        for (index, period) in periods.enumerated() {
            let periodBase = Self.base(of: period, against: mpdBase)
            let start = placed?[index].start ?? period.attributes["start"].flatMap(ISODuration.seconds) ?? 0
            let nextStart = periods.dropFirst(index + 1).first?.attributes["start"].flatMap(ISODuration.seconds)
            let duration =
                placed?[index].duration
                ?? period.attributes["duration"].flatMap(ISODuration.seconds) ?? (nextStart ?? total).map { $0 - start }
            let periodAddressing = Self.addressing(of: period, inherited: nil)
            for set in period.elements("AdaptationSet") {
                let setBase = Self.base(of: set, against: periodBase)
                let setAddressing = Self.addressing(of: set, inherited: periodAddressing)
                // Read once a set: each is a walk over all its children, representations included,
                // and once a representation it made the reading quadratic in them.
                let setComponentType = set.elements("ContentComponent").first?.attributes["contentType"]
                let setLabel = set.elements("Label").first?.text
                let setRoles = set.elements("Role")
                let setProtection = set.elements("ContentProtection")
                for representation in set.elements("Representation") {
                    func attribute(_ name: String) -> String? {
                        representation.attributes[name] ?? set.attributes[name]
                    }
                    let mimeType = attribute("mimeType")
                    let contentType =
                        set.attributes["contentType"] ?? representation.attributes["contentType"]
                        ?? mimeType.map { String($0.prefix { $0 != "/" }) }
                        ?? (setComponentType ?? "unknown")
                    result.append(
                        DASHRepresentation(
                            id: representation.attributes["id"] ?? "",
                            period: index,
                            contentType: contentType == "application" ? "text" : contentType,
                            mimeType: mimeType,
                            codecs: attribute("codecs"),
                            bandwidth: representation.attributes["bandwidth"].flatMap { Int64($0) }.map {
                                min(max($0, 0), DASHRepresentation.maximumBandwidth)
                            } ?? 0,
                            width: attribute("width").flatMap { Int($0) },
                            height: attribute("height").flatMap { Int($0) },
                            frameRate: attribute("frameRate"),
                            language: set.attributes["lang"] ?? representation.attributes["lang"],
                            label: representation.elements("Label").first?.text ?? setLabel ?? attribute("label"),
                            roles: (setRoles + representation.elements("Role")).compactMap {
                                $0.attributes["value"]
                            },
                            protection: Self.protectionNames(
                                setProtection + representation.elements("ContentProtection")
                            ),
                            baseURL: Self.base(of: representation, against: setBase),
                            addressing: Self.addressing(of: representation, inherited: setAddressing),
                            periodDuration: duration,
                            periodStart: start,
                            periodID: period.attributes["id"]
                        )
                    )
                }
            }
        }
        return result
    }

    /// The first `BaseURL` of `node` resolved against `base`, or `base`.
    static func base(of node: XMLNode, against base: URL) -> URL {
        guard let first = node.elements("BaseURL").first, let resolved = resolve(first.text, against: base) else {
            return base
        }
        return resolved
    }

    /// The segment addressing element of `node` merged over the one `inherited` from above: its
    /// attributes override, and children it lacks (`SegmentTimeline`, `Initialization`) are kept.
    static func addressing(of node: XMLNode, inherited: XMLNode?) -> XMLNode? {
        let own = node.elements.first { ["SegmentTemplate", "SegmentList", "SegmentBase"].contains($0.localName) }
        guard var own else { return inherited }
        guard let inherited, inherited.localName == own.localName else { return own }
        own.attributes = inherited.attributes.merging(own.attributes) { $1 }
        let ownNames = Set(own.elements.map(\.localName))
        own.children += inherited.children.filter {
            if case .element(let child) = $0 { !ownNames.contains(child.localName) } else { false }
        }
        return own
    }

    /// The systems `ContentProtection` elements name.
    static func protectionNames(_ elements: [XMLNode]) -> [String] {
        let known = [
            "edef8ba9-79d6-4ace-a3c8-27dcd51d21ed": "Widevine",
            "9a04f079-9840-4286-ab92-e65be0885f95": "PlayReady",
            "94ce86fb-07ff-4f43-adb8-93d2fa968ca2": "FairPlay",
            "e2719d58-a985-b3c9-781a-b030af78d30e": "ClearKey",
            "1077efec-c0b2-4d02-ace3-3c1e52e2fb4b": "ClearKey",
        ]
        var names: [String] = []
        for element in elements {
            let scheme = (element.attributes["schemeIdUri"] ?? "").lowercased()
            let name: String
            if scheme == "urn:mpeg:dash:mp4protection:2011" {
                name = element.attributes["value"] ?? "cenc"
            } else if scheme.hasPrefix("urn:uuid:") {
                name = known[String(scheme.dropFirst("urn:uuid:".count))] ?? scheme
            } else {
                name = scheme
            }
            if !names.contains(name) { names.append(name) }
        }
        return names
    }
}

/// `xs:duration` as MPDs write it (`PT1H2M3.5S`, `P1DT2H`): seconds, up to
/// `ManifestNumber.maximumSeconds`.
public enum ISODuration {
    public static func seconds(_ text: String) -> Double? {
        var rest = Substring(text.trimmingCharacters(in: .whitespaces))
        guard rest.first == "P" else { return nil }
        rest = rest.dropFirst()
        var total = 0.0
        var inTime = false
        var number = ""
        for character in rest {
            switch character {
            case "T": inTime = true
            case "0"..."9", ".": number.append(character)
            default:
                guard let value = Double(number) else { return nil }
                number = ""
                switch (character, inTime) {
                case ("Y", false): total += value * 365 * 86400
                case ("M", false): total += value * 30 * 86400
                case ("W", false): total += value * 7 * 86400
                case ("D", false): total += value * 86400
                case ("H", true): total += value * 3600
                case ("M", true): total += value * 60
                case ("S", true): total += value
                default: return nil
                }
            }
        }
        guard number.isEmpty, total.isFinite, total <= ManifestNumber.maximumSeconds else { return nil }
        return total
    }
}
