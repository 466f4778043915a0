import NIOCore

/// Sets up a proxy connection: its front (``ConnectionFront``) and the handler that answers its
/// requests (``ProxyConnectionHandler``); NIO's HTTP/1.1 handlers go between them the first time
/// a read or an answer needs them.
enum ProxyPipeline {
    static func setUp(_ channel: any Channel, connection: ProxyConnectionHandler) throws {
        let pipeline = channel.pipeline.syncOperations
        try pipeline.addHandler(connection.front)
        try pipeline.addHandler(connection)
    }
}
