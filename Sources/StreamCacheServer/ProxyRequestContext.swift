import Hummingbird
import NIOCore

/// The request context of the proxy: the addresses of the connection a request came on.
public struct ProxyRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The client's IP address.
    public let remoteIP: String?
    /// The IP address the connection arrived on.
    public let localIP: String?
    /// The port the connection arrived on: the listener's.
    public let localPort: Int?

    public init(source: ApplicationRequestContextSource) {
        coreContext = CoreRequestContextStorage(source: source)
        remoteIP = source.channel.remoteAddress?.ipAddress
        localIP = source.channel.localAddress?.ipAddress
        localPort = source.channel.localAddress?.port
    }
}
