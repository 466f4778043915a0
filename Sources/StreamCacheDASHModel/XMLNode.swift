/// An element of an XML document as a manifest keeps it: its name as written (with any prefix),
/// its attributes, and its children, elements and text, in order. Unknown elements and
/// attributes are kept, so a manifest written back says everything it said.
public struct XMLNode: Hashable, Sendable {
    public enum Child: Hashable, Sendable {
        case element(XMLNode)
        case text(String)
    }

    public var name: String
    /// By name as written (`xlink:href`, `xmlns:cenc`); written back in name order.
    public var attributes: [String: String]
    public var children: [Child]

    public init(name: String, attributes: [String: String] = [:], children: [Child] = []) {
        self.name = name
        self.attributes = attributes
        self.children = children
    }

    /// The name without its namespace prefix: `pssh` for `cenc:pssh`.
    public var localName: Substring {
        name.split(separator: ":", maxSplits: 1).last ?? Substring(name)
    }

    /// The child elements.
    public var elements: [XMLNode] {
        children.compactMap { if case .element(let node) = $0 { node } else { nil } }
    }

    /// The child elements named `localName`.
    public func elements(_ localName: String) -> [XMLNode] {
        elements.filter { $0.localName == localName }
    }

    /// The text directly inside, trimmed.
    public var text: String {
        let joined = children.map { if case .text(let text) = $0 { text } else { "" } }.joined()
        return String(joined.drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }.reversed())
    }

    /// Replaces the text directly inside with `text`.
    public mutating func setText(_ text: String) {
        children = children.filter { if case .text = $0 { false } else { true } } + [.text(text)]
    }

    /// Applies `transform` to this element and every element below it, parents first.
    public mutating func transformAll(_ transform: (inout XMLNode) -> Void) {
        transform(&self)
        for index in children.indices {
            guard case .element(var child) = children[index] else { continue }
            child.transformAll(transform)
            children[index] = .element(child)
        }
    }

    /// The element as XML text, after an XML declaration when `declaration`.
    public func xml(declaration: Bool = true) -> String {
        var out = declaration ? "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n" : ""
        write(to: &out)
        out += "\n"
        return out
    }

    private func write(to out: inout String) {
        out += "<" + name
        for name in attributes.keys.sorted() {
            out += " " + name + "=\"" + Self.escaped(attributes[name] ?? "", quotes: true) + "\""
        }
        guard !children.isEmpty else {
            out += "/>"
            return
        }
        out += ">"
        for child in children {
            switch child {
            case .element(let node): node.write(to: &out)
            case .text(let text): out += Self.escaped(text, quotes: false)
            }
        }
        out += "</" + name + ">"
    }

    static func escaped(_ text: String, quotes: Bool) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"" where quotes: out += "&quot;"
            default: out.append(character)
            }
        }
        return out
    }
}
