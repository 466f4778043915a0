/// The members of a Structured Field dictionary (RFC 8941 §3.2) as far as cache directives
/// need them: keys, and values that are integers, tokens, strings or the bare `true`; parameters
/// are read past. Anything the grammar does not allow makes the whole value invalid.
enum StructuredDictionary {
    enum Member: Equatable {
        case integer(Int64)
        case token(String)
        case string(String)
        case `true`
        /// A decimal, byte sequence, boolean `?0` or inner list: valid, but no directive's type.
        case other
    }

    /// The members of `value` in order, or `nil` if it is not a valid dictionary.
    static func members(of value: String) -> [(String, Member)]? {
        var scanner = Scanner(Array(value.utf8))
        var members: [(String, Member)] = []
        scanner.skip(while: { $0 == 0x20 })
        if scanner.isAtEnd { return [] }
        while true {
            guard let key = scanner.key() else { return nil }
            var member = Member.true
            if scanner.take(UInt8(ascii: "=")) {
                guard let item = scanner.bareItem() else { return nil }
                member = item
            }
            guard scanner.parameters() else { return nil }
            members.append((key, member))
            scanner.skip(while: { $0 == 0x20 || $0 == 0x09 })
            if scanner.isAtEnd { return members }
            guard scanner.take(UInt8(ascii: ",")) else { return nil }
            scanner.skip(while: { $0 == 0x20 || $0 == 0x09 })
            if scanner.isAtEnd { return nil }
        }
    }

    private struct Scanner {
        let bytes: [UInt8]
        var index = 0

        init(_ bytes: [UInt8]) { self.bytes = bytes }

        var isAtEnd: Bool { index >= bytes.count }
        var current: UInt8? { isAtEnd ? nil : bytes[index] }

        mutating func skip(while condition: (UInt8) -> Bool) {
            while let byte = current, condition(byte) { index += 1 }
        }

        mutating func take(_ byte: UInt8) -> Bool {
            guard current == byte else { return false }
            index += 1
            return true
        }

        static func isLowercase(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z") }
        static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

        /// `key = ( lcalpha / "*" ) *( lcalpha / DIGIT / "_" / "-" / "." / "*" )`
        mutating func key() -> String? {
            guard let first = current, Self.isLowercase(first) || first == UInt8(ascii: "*") else { return nil }
            let start = index
            skip { byte in
                Self.isLowercase(byte) || Self.isDigit(byte) || "_-.*".utf8.contains(byte)
            }
            return String(decoding: bytes[start..<index], as: UTF8.self)
        }

        mutating func bareItem() -> Member? {
            guard let first = current else { return nil }
            if first == UInt8(ascii: "-") || Self.isDigit(first) {
                let start = index
                index += 1
                skip(while: Self.isDigit)
                if current == UInt8(ascii: ".") {
                    index += 1
                    skip(while: Self.isDigit)
                    return .other
                }
                let text = String(decoding: bytes[start..<index], as: UTF8.self)
                guard text != "-", text.count <= 16, let number = Int64(text) else { return nil }
                return .integer(number)
            }
            if first == UInt8(ascii: "\"") {
                index += 1
                var text: [UInt8] = []
                while let byte = current {
                    index += 1
                    if byte == UInt8(ascii: "\\") {
                        guard let escaped = current, escaped == UInt8(ascii: "\"") || escaped == UInt8(ascii: "\\")
                        else { return nil }
                        text.append(escaped)
                        index += 1
                    } else if byte == UInt8(ascii: "\"") {
                        return .string(String(decoding: text, as: UTF8.self))
                    } else {
                        guard byte >= 0x20, byte < 0x7F else { return nil }
                        text.append(byte)
                    }
                }
                return nil
            }
            if first == UInt8(ascii: "?") {
                index += 1
                guard take(UInt8(ascii: "0")) || take(UInt8(ascii: "1")) else { return nil }
                return .other
            }
            if first == UInt8(ascii: ":") {
                index += 1
                skip { $0 != UInt8(ascii: ":") }
                return take(UInt8(ascii: ":")) ? .other : nil
            }
            if Self.isLowercase(first) || (first >= UInt8(ascii: "A") && first <= UInt8(ascii: "Z"))
                || first == UInt8(ascii: "*")
            {
                let start = index
                // tchar, ":" and "/" (RFC 8941 §3.3.4).
                skip { byte in byte > 0x20 && byte < 0x7F && !"(),;<=>?@[\\]{}\"".utf8.contains(byte) }
                return .token(String(decoding: bytes[start..<index], as: UTF8.self))
            }
            return nil
        }

        /// `*( ";" key [ "=" bare-item ] )`
        mutating func parameters() -> Bool {
            while take(UInt8(ascii: ";")) {
                skip(while: { $0 == 0x20 })
                guard key() != nil else { return false }
                if take(UInt8(ascii: "=")), bareItem() == nil { return false }
            }
            return true
        }
    }
}
