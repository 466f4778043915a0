import Foundation

/// A manifest format whose documents the proxy rewrites, so that every URL they name is fetched
/// through it and so cached. Each format's module has one (its rewriter); the proxy lists them
/// (`ManifestFormats.all`), and its reading, size bound, revalidation of documents that may
/// change and answer are the same for each.
package protocol ManifestFormat {
    /// What a document is called in messages: "playlist".
    static var documentName: String { get }
    /// Documents are read whole: anything larger is refused.
    static var maximumSize: Int64 { get }
    /// The media type of a rewritten document.
    static var rewrittenType: String { get }
    /// The media type of a document passed on as it is, when the origin gave none.
    static var plainType: String { get }
    /// Whether `contentType` names the format, or `nil` for a generic type (or none), which
    /// leaves it to the path.
    static func typeNames(_ contentType: String?) -> Bool?
    /// Whether the path of `url` names the format (by its extension).
    static func pathNames(_ url: URL) -> Bool
    /// The document `bytes` (fetched from `url`), parsed once for all the proxy asks of it.
    ///
    /// - Throws: an error that names the line or the element, for a broken document.
    static func read(_ bytes: [UInt8], from url: URL, pathPrefix: String) throws -> ManifestReading
}

/// What the proxy learns from one parse of a manifest.
package struct ManifestReading: Sendable {
    /// Whether the document may change at the origin (live), so that a cached copy is checked
    /// with the origin on every request.
    package let mayChange: Bool
    /// The document with its URLs pointing at the proxy, each after the path prefix; `nil` for a
    /// document passed on as it is.
    package let rewritten: String?

    package init(mayChange: Bool, rewritten: String?) {
        self.mayChange = mayChange
        self.rewritten = rewritten
    }
}

extension ManifestFormat {
    /// Whether a resource of `url` with `contentType` is a document of the format: by its type, or
    /// for a generic type by its path.
    package static func names(_ url: URL, contentType: String?) -> Bool {
        typeNames(contentType) ?? pathNames(url)
    }
}
