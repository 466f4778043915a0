import Foundation
import StreamCache
import StreamCacheOfflineCore

extension OfflineFormat {
    /// MPEG-DASH: MPDs (ISO/IEC 23009-1), static or dynamic, packages entered at `manifest.mpd`.
    public static let dash = OfflineFormat(
        entryPoint: DASHPackagePlanner.entryPoint,
        takes: { $0 == .dash },
        planner: { library, engine, options in DASHPackagePlanner(library: library, engine: engine, options: options) },
        record: { manifest, library, engine, options, emit in
            try await DASHLiveRecorder(
                manifest: manifest,
                library: library,
                engine: engine,
                options: options,
                emit: emit
            )
            .run()
        }
    )
}
