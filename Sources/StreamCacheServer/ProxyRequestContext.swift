import Hummingbird
import NIOCore

/// The request context of the proxy: the addresses of the connection a request came on.
public struct ProxyRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The client's address.
    public let remoteAddress: SocketAddress?
    /// The address the connection arrived on.
    public let localAddress: SocketAddress?
    /// The client's connection going away.
    let hangUp: ClientHangUp

    public init(source: ApplicationRequestContextSource) {
        coreContext = CoreRequestContextStorage(source: source)
        remoteAddress = source.channel.remoteAddress
        localAddress = source.channel.localAddress
        hangUp = ClientHangUp.of(source.channel)
    }

    // Addresses are formatted only when asked for: most requests never need them.

    /// The client's IP address.
    public var remoteIP: String? { remoteAddress?.ipAddress }
    /// The IP address the connection arrived on.
    public var localIP: String? { localAddress?.ipAddress }
    /// The port the connection arrived on: the listener's.
    public var localPort: Int? { localAddress?.port }
}
