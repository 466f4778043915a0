import Foundation
import HTTPTypes
import NIOCore
import StreamCache
import StreamCacheOffline

/// The page at `serve`'s `/`: how to play through it (with the address it was reached at), the
/// cache's size and budget, and the offline packages with their `/offline/ID/` links. Everything
/// from an origin or a package (titles, URLs) is escaped; the page runs no script and loads
/// nothing (`Content-Security-Policy: default-src 'none'`).
enum RootPage {
    static func response(authority: String?, engine: CacheEngine, library: OfflineLibrary) async -> ProxyResponse {
        let base = "http://" + (authority ?? "127.0.0.1")
        let cached = (try? await engine.index.totalCachedBytes()) ?? 0
        var html = """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8"><title>StreamCache</title></head><body>
            <h1>StreamCache</h1>
            <p>Play any http(s) URL through the cache: put it after this address.</p>
            <pre>mpv \(escaped(base))/https://example.com/show/episode.mp3
            ffplay \(escaped(base))/https://example.com/show/master.m3u8</pre>
            <p>Cache: \(ByteSize.text(cached)) of a \(ByteSize.text(engine.budget)) budget.</p>
            <h2>Offline packages</h2>

            """
        let assets = library.assets()
        if assets.isEmpty {
            html += "<p>None yet: <code>streamcache download URL</code> makes one.</p>\n"
        } else {
            html += "<ul>\n"
            for asset in assets {
                let entry = "/offline/\(asset.id)/" + (asset.path as NSString).lastPathComponent
                let title = asset.displayTitle
                // Packages titled alike (several selections of one stream) are told apart by what
                // each holds and its id.
                let selection = [asset.selectionSummary, "id " + asset.id.prefix(8)].filter { !$0.isEmpty }
                html +=
                    "<li><a href=\"\(escaped(entry))\">\(escaped(title))</a> (\(escaped(selection.joined(separator: ", ")))) "
                    + "\(asset.state.rawValue), "
                    + "\(Int(asset.progress * 100))%, \(ByteSize.text(asset.bytes)): <code>\(escaped(base + entry))</code></li>\n"
            }
            html += "</ul>\n"
        }
        html += "</body></html>\n"
        var headers = HTTPFields()
        headers[.contentType] = "text/html; charset=utf-8"
        headers[.contentLength] = String(html.utf8.count)
        headers[.cacheControl] = "no-store"
        headers[.contentSecurityPolicy] = "default-src 'none'"
        headers[HTTPField.Name("X-Content-Type-Options")!] = "nosniff"
        return ProxyResponse(status: .ok, headers: headers, body: .bytes(ByteBuffer(string: html)))
    }

    /// `text` safe in HTML text and attribute values.
    static func escaped(_ text: String) -> String {
        var out = ""
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(character)
            }
        }
        return out
    }
}
