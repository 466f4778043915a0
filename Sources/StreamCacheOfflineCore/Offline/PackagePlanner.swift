import Foundation

/// What the offline downloader needs of a manifest format: the manifest of the package a URL
/// and a selection make (planned, or the library's when it holds the asset already), and of a
/// package with renditions added. The downloader (``AssetDownloader``) then fetches and writes
/// the files the manifest lists, whatever the format: the schedule, the jobs, the retries, the
/// progress and the package are shared.
package protocol PackagePlanner: Sendable {
    /// The manifest of the package of `url`, whose manifest is `document`, that `criteria` choose.
    func manifest(for url: URL, document: [UInt8], criteria: MediaSelectionCriteria) async throws -> AssetManifest
    /// The manifest of the asset `old` describes, planned again with the renditions `criteria`
    /// choose added; the renditions it holds keep their folders, so none of their files is
    /// fetched again (``AssetDownloader`` checks that they are all still there).
    func manifest(adding criteria: MediaSelectionCriteria, to old: AssetManifest) async throws -> AssetManifest
}
