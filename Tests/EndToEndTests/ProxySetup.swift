import Foundation

/// An origin, the proxy in front of it, and their folders.
struct ProxySetup {
    let workspace = Workspace()
    let origin: OriginProcess
    let proxy: ListeningProcess

    init(originArguments: [String] = [], proxyArguments: [String] = []) async throws {
        origin = try await OriginProcess(directory: workspace.originDirectory, arguments: originArguments)
        proxy = try await ListeningProcess(["serve"] + proxyArguments, cacheDir: workspace.cacheDirectory)
    }

    /// The proxy URL of origin file `name`.
    func url(_ name: String) -> String { proxy.url(origin.url(name)) }

    func remove() { workspace.remove() }
}
