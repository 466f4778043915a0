/// A host name as a user writes it in a setting, checked the way URLs carry hosts: ASCII
/// letters, digits, `.`, `-` and `_`, an internationalized name in its `xn--` form. A name
/// written otherwise (`exämple.com`, `host:80`, `http://host`) could never equal a URL's host, so
/// every setting that names hosts refuses it rather than keep a rule that never matches.
public enum HostName {
    /// Whether `name` can be the host of a URL.
    public static func isWellFormed(_ name: String) -> Bool {
        !name.isEmpty
            && name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "." || $0 == "-" || $0 == "_") }
    }
}
