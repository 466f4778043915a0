/// Language tags as playlists, MPDs and users write them: `en`, `eng`, `en-US`, `EN_us` name one
/// language. Every format's selections match through here (RFC 5646 primary subtags, ISO
/// 639-1 and both ISO 639-2 codes of the languages a stream is commonly tagged with).
package enum LanguageTags {
    /// Whether `tag` and `wanted` name the same language, whatever their region or script.
    package static func sameLanguage(_ tag: String, _ wanted: String) -> Bool {
        guard let language = primary(tag), let asked = primary(wanted) else { return false }
        return language == asked
    }

    /// The primary subtag of `tag`, lowercased, as its ISO 639-1 code where it has one.
    package static func primary(_ tag: String) -> String? {
        let subtag = tag.split(whereSeparator: { $0 == "-" || $0 == "_" }).first.map { $0.lowercased() } ?? ""
        guard !subtag.isEmpty, subtag.allSatisfy({ $0.isASCII && $0.isLetter }) else { return nil }
        return twoLetter[subtag] ?? subtag
    }

    /// ISO 639-2 codes (bibliographic and terminological) and their ISO 639-1 code.
    private static let twoLetter: [String: String] = {
        let pairs: [(String, [String])] = [
            ("af", ["afr"]), ("ar", ["ara"]), ("bg", ["bul"]), ("bn", ["ben"]), ("ca", ["cat"]),
            ("cs", ["ces", "cze"]), ("cy", ["cym", "wel"]), ("da", ["dan"]), ("de", ["deu", "ger"]),
            ("el", ["ell", "gre"]), ("en", ["eng"]), ("es", ["spa"]), ("et", ["est"]), ("eu", ["eus", "baq"]),
            ("fa", ["fas", "per"]), ("fi", ["fin"]), ("fr", ["fra", "fre"]), ("ga", ["gle"]), ("gl", ["glg"]),
            ("gu", ["guj"]), ("he", ["heb"]), ("hi", ["hin"]), ("hr", ["hrv"]), ("hu", ["hun"]),
            ("hy", ["hye", "arm"]), ("id", ["ind"]), ("is", ["isl", "ice"]), ("it", ["ita"]), ("ja", ["jpn"]),
            ("ka", ["kat", "geo"]), ("kn", ["kan"]), ("ko", ["kor"]), ("lt", ["lit"]), ("lv", ["lav"]),
            ("mk", ["mkd", "mac"]), ("ml", ["mal"]), ("mr", ["mar"]), ("ms", ["msa", "may"]), ("nb", ["nob"]),
            ("nl", ["nld", "dut"]), ("nn", ["nno"]), ("no", ["nor"]), ("pa", ["pan"]), ("pl", ["pol"]),
            ("pt", ["por"]), ("ro", ["ron", "rum"]), ("ru", ["rus"]), ("sk", ["slk", "slo"]), ("sl", ["slv"]),
            ("sq", ["sqi", "alb"]), ("sr", ["srp"]), ("sv", ["swe"]), ("sw", ["swa"]), ("ta", ["tam"]),
            ("te", ["tel"]), ("th", ["tha"]), ("tl", ["tgl"]), ("tr", ["tur"]), ("uk", ["ukr"]), ("ur", ["urd"]),
            ("vi", ["vie"]), ("zh", ["zho", "chi"]),
        ]
        var table: [String: String] = [:]
        for (code, others) in pairs { for other in others { table[other] = code } }
        return table
    }()
}
