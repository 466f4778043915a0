import NIOCore

/// The connection a request came on: its addresses, formatted only when asked for (most
/// requests never need them).
struct ProxyRequestContext: Sendable {
    /// The client's address.
    let remoteAddress: SocketAddress?
    /// The address the connection arrived on.
    let localAddress: SocketAddress?

    init(channel: any Channel) {
        remoteAddress = channel.remoteAddress
        localAddress = channel.localAddress
    }

    /// The IP address the connection arrived on.
    var localIP: String? { localAddress?.ipAddress }
    /// The port the connection arrived on: the listener's.
    var localPort: Int? { localAddress?.port }
}
