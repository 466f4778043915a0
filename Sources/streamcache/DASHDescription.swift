import Foundation
import StreamCacheDASHModel
import StreamCacheOffline

/// What `packages inspect` shows of a DASH MPD: its representations, as it shows an HLS playlist's
/// variants and renditions.
enum DASHDescription {
    /// One representation and what its segments are, as text and as JSON.
    struct Entry {
        let representation: DASHRepresentation
        /// Its segments, or why they could not be worked out.
        let segments: Result<SegmentIndex, ManifestParseError>

        /// `representation`'s segments, taken from its document's `budget`.
        init(_ representation: DASHRepresentation, budget: inout SegmentBudget) {
            self.representation = representation
            do {
                segments = .success(try SegmentIndex(representation, budget: &budget))
            } catch {
                segments = .failure(error)
            }
        }
    }

    /// The representations, their segments worked out from one budget for the document.
    static func entries(_ presentation: MediaPresentation, url: URL) -> [Entry] {
        var budget = SegmentBudget()
        return presentation.representations(documentURL: url).map { Entry($0, budget: &budget) }
    }

    static func text(of presentation: MediaPresentation, url: URL) -> String {
        let entries = entries(presentation, url: url)
        let periods = Set(entries.map(\.representation.period)).count
        var lines = ["DASH MPD, \(presentation.isDynamic ? "dynamic (live)" : "static"), \(periods) period(s)"]
        if presentation.isDynamic, let start = presentation.availabilityStart {
            let time = ISO8601DateFormatter().string(from: start)
            lines.append("available from \(time)" + (start > Date() ? " (not yet: it has not begun)" : ""))
        }
        lines.append("representations: \(entries.count)")
        for entry in entries {
            let representation = entry.representation
            var parts = [representation.contentType, representation.id, Bitrate.text(representation.bandwidth)]
            if let width = representation.width, let height = representation.height {
                parts.append("\(width)x\(height)")
            }
            if let codecs = representation.codecs { parts.append(codecs) }
            if let language = representation.language { parts.append(language) }
            if !representation.roles.isEmpty { parts.append("role=" + representation.roles.joined(separator: ",")) }
            if !representation.protection.isEmpty {
                parts.append("protected: " + representation.protection.joined(separator: ", "))
            }
            switch entry.segments {
            case .success(let index) where index.sidx != nil: parts.append("one file, segments in its sidx")
            case .success(let index):
                let seconds = index.media.reduce(0) { $0 + $1.duration }
                parts.append("\(index.media.count) segments, \(String(format: "%.1f", seconds)) s")
            case .failure where presentation.isDynamic: parts.append("segments made as it goes (live)")
            case .failure(let error): parts.append("segments: \(error.message)")
            }
            if periods > 1 { parts.insert("period \(representation.period + 1)", at: 0) }
            lines.append("  " + parts.joined(separator: "  "))
        }
        return lines.joined(separator: "\n") + "\n"
    }

    static func json(of presentation: MediaPresentation, url: URL) -> [String: Any] {
        let representations = entries(presentation, url: url).map { entry -> [String: Any] in
            let representation = entry.representation
            var object: [String: Any] = [
                "id": representation.id,
                "period": representation.period,
                "contentType": representation.contentType,
                "bandwidth": representation.bandwidth,
                "roles": representation.roles,
                "protection": representation.protection,
                "baseURL": representation.baseURL.absoluteString,
            ]
            object["mimeType"] = representation.mimeType ?? NSNull()
            object["codecs"] = representation.codecs ?? NSNull()
            object["width"] = representation.width ?? NSNull()
            object["height"] = representation.height ?? NSNull()
            object["frameRate"] = representation.frameRate ?? NSNull()
            object["language"] = representation.language ?? NSNull()
            switch entry.segments {
            case .success(let index):
                object["segments"] = index.media.count
                object["duration"] = index.media.reduce(0) { $0 + $1.duration }
                object["initialization"] = index.initialization?.url.absoluteString ?? NSNull()
            case .failure(let error):
                object["segmentsError"] = error.message
            }
            return object
        }
        var object: [String: Any] = [
            "kind": "dash", "dynamic": presentation.isDynamic, "representations": representations,
        ]
        if let start = presentation.availabilityStart {
            object["availabilityStartTime"] = ISO8601DateFormatter().string(from: start)
        }
        return object
    }
}
