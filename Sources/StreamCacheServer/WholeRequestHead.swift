import NIOCore
import NIOHTTP1
import StreamCache

/// A `GET` request head that arrived whole and alone in one read, parsed by rules stricter than
/// NIO's HTTP decoder (``ConnectionFront`` reads it instead of the decoder): an origin-form
/// target of URL characters, HTTP/1.1 or 1.0, single spaces in the request line, fields of
/// token names and visible-ASCII values ended by CRLF, and nothing after the blank line.
///
/// Anything else is `nil`, for the decoder to read: another method, a partial head, a second
/// request behind it, obsolete line folding, bytes past ASCII, and every field that frames a
/// body or changes what follows the head (`Content-Length`, `Transfer-Encoding`, `Expect`,
/// `Upgrade`). What it accepts the decoder accepts too, with the same fields, so whichever
/// reads a head, the answer is the same.
enum WholeRequestHead {
    /// Longer heads go to the decoder (a player's is a few hundred bytes).
    static let maximumLength = 8 * 1024

    /// The head `bytes` hold, if they hold exactly one of the kind described above.
    static func parse(_ bytes: ByteBuffer) -> HTTPRequestHead? {
        guard (minimumLength...maximumLength).contains(bytes.readableBytes) else { return nil }
        return bytes.withUnsafeReadableBytes { parse($0) }
    }

    /// `GET / HTTP/1.1` and the blank line.
    private static let minimumLength = 18

    private static func parse(_ bytes: UnsafeRawBufferPointer) -> HTTPRequestHead? {
        var scanner = Scanner(bytes)
        guard scanner.skip("GET "), let uri = scanner.run(while: targetBytes), uri.first == UInt8(ascii: "/"),
            scanner.skip(" HTTP/1."), let minor = scanner.next(),
            minor == UInt8(ascii: "1") || minor == UInt8(ascii: "0"),
            scanner.skipLineEnd()
        else { return nil }
        var fields: [(String, String)] = []
        fields.reserveCapacity(8)
        while !scanner.skipLineEnd() {
            guard let name = scanner.run(while: tokenBytes), scanner.skip(":") else { return nil }
            _ = scanner.run(while: blanks)
            let value = scanner.run(while: valueBytes) ?? UnsafeRawBufferPointer(start: nil, count: 0)
            guard scanner.skipLineEnd() else { return nil }
            // Blanks after the value stay, as the decoder keeps them.
            let field = (string(name), string(value))
            guard !changesFraming(field.0) else { return nil }
            fields.append(field)
        }
        guard scanner.isAtEnd else { return nil }
        return HTTPRequestHead(
            version: minor == UInt8(ascii: "1") ? .http1_1 : .http1_0,
            method: .GET,
            uri: string(uri),
            headers: HTTPHeaders(fields)
        )
    }

    /// Reads forward through the bytes of a head.
    private struct Scanner {
        let bytes: UnsafeRawBufferPointer
        var position = 0

        init(_ bytes: UnsafeRawBufferPointer) {
            self.bytes = bytes
        }

        var isAtEnd: Bool { position == bytes.count }

        /// Skips `text` if the bytes go on with it.
        mutating func skip(_ text: StaticString) -> Bool {
            let count = text.utf8CodeUnitCount
            guard bytes.count - position >= count,
                bytes[position..<position + count].elementsEqual(
                    UnsafeBufferPointer(start: text.utf8Start, count: count)
                )
            else { return false }
            position += count
            return true
        }

        mutating func skipLineEnd() -> Bool { skip("\r\n") }

        /// The next byte, if there is one.
        mutating func next() -> UInt8? {
            guard position < bytes.count else { return nil }
            defer { position += 1 }
            return bytes[position]
        }

        /// The bytes from here that are in `accepted`, if there is at least one.
        mutating func run(while accepted: ByteClass) -> UnsafeRawBufferPointer? {
            let start = position
            while position < bytes.count, accepted.contains(bytes[position]) { position += 1 }
            guard position > start else { return nil }
            return UnsafeRawBufferPointer(rebasing: bytes[start..<position])
        }
    }

    private static func string(_ bytes: UnsafeRawBufferPointer) -> String {
        String(decoding: bytes, as: UTF8.self)
    }

    /// Letters, digits and the characters RFC 3986 gives URLs (`%` included, `#` not).
    private static let targetBytes = ByteClass(alphanumericAnd: "-._~:/?[]@!$&'()*+,;=%")
    /// RFC 9110 §5.6.2 `tchar`.
    private static let tokenBytes = ByteClass(alphanumericAnd: "!#$%&'*+-.^_`|~")
    /// Visible ASCII, space and tab.
    private static let valueBytes = ByteClass { (0x20...0x7E).contains($0) || $0 == 0x09 }
    private static let blanks = ByteClass { $0 == 0x20 || $0 == 0x09 }

    private static func changesFraming(_ name: String) -> Bool {
        switch name.utf8.count {
        case 6: HeaderField.namesMatch(name, "expect")
        case 7: HeaderField.namesMatch(name, "upgrade")
        case 14: HeaderField.namesMatch(name, "content-length")
        case 17: HeaderField.namesMatch(name, "transfer-encoding")
        default: false
        }
    }

    /// A set of ASCII bytes, as two bit masks: the parse asks it of every byte of a head.
    private struct ByteClass {
        private var low: UInt64 = 0
        private var high: UInt64 = 0

        init(_ contains: (UInt8) -> Bool) {
            for byte in UInt8(0)..<128 where contains(byte) {
                if byte < 64 { low |= 1 << byte } else { high |= 1 << (byte - 64) }
            }
        }

        init(alphanumericAnd marks: String) {
            self.init { byte in
                (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                    || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                    || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || marks.utf8.contains(byte)
            }
        }

        func contains(_ byte: UInt8) -> Bool {
            byte < 64 ? low & (1 << byte) != 0 : byte < 128 && high & (1 << (byte - 64)) != 0
        }
    }
}
